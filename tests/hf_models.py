"""Tiny Hugging Face models built on the spot for the tests (nothing is downloaded).

The models are built from a config (random weights), saved to a temporary folder and reloaded
by path with HF_HUB_OFFLINE=1.
"""

import re

CORPUS = [
    "the movie was great and the acting was good",
    "a bad movie with a boring plot",
    "the plot was fine but the ending was bad",
    "I loved the music and the actors",
    "it's a great film , don't miss it !",
    "worst film ever , boring and slow",
    "the story is good , the cast is great",
    "a wonderful , funny and smart movie",
    "terrible acting and a silly story",
    "the best film of the year",
]
WORDS = sorted({w for doc in CORPUS for w in re.findall(r"\w+", doc.lower())})


# ----------------------------------------------------------------------- tiny models
def _wordpiece_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + [",", ".", "!", "'", "?"] + WORDS + ["##s", "##ing", "##ed"]
    tk = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.decoder = decoders.WordPiece()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )


def _bpe_tokenizer():
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(CORPUS, trainer)
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token=AddedToken("<mask>", lstrip=True),
        model_max_length=128,
    )


def _build(path, kind="bert", head="mlm", id2label=None):
    import torch
    from transformers import (
        AutoModelForMaskedLM,
        AutoModelForSequenceClassification,
        BertConfig,
        RobertaConfig,
    )

    tokenizer = _wordpiece_tokenizer() if kind == "bert" else _bpe_tokenizer()
    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
    )
    if id2label is not None:
        common.update(id2label=id2label, label2id={v: k for k, v in id2label.items()})
    if kind == "bert":
        config = BertConfig(max_position_embeddings=128, **common)
    else:
        config = RobertaConfig(
            max_position_embeddings=130, pad_token_id=1, bos_token_id=0, eos_token_id=2, **common
        )
    torch.manual_seed(0)
    auto = AutoModelForMaskedLM if head == "mlm" else AutoModelForSequenceClassification
    model = auto.from_config(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def build_vit(path, id2label=None, image_size=32, num_channels=3):
    """A tiny ViT image classifier and its image processor, saved to ``path``."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    id2label = id2label or {0: "cat", 1: "dog", 2: "bird"}
    config = ViTConfig(
        image_size=image_size,
        patch_size=8,
        num_channels=num_channels,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(0)
    model = ViTForImageClassification(config)
    model.save_pretrained(path)
    size = {"height": image_size, "width": image_size}
    ViTImageProcessor(
        size=size, image_mean=[0.5] * num_channels, image_std=[0.5] * num_channels
    ).save_pretrained(path)
    return str(path)
