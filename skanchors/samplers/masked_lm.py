"""Text perturbations filled in by a masked language model (Hugging Face ``transformers``).

torch and transformers are imported when a :class:`MaskedLMSampler` is fitted, never when this
module is imported (install them with ``pip install 'skanchors[text]'``).
"""

from __future__ import annotations

import os
import threading
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._documents import _word_re
from ..hf import _model_max_length
from .text import TextInstance, _TextSampler, check_documents

__all__ = ["MaskedLMInstance", "MaskedLMSampler"]

# Word-start markers of byte-level BPE (RoBERTa, GPT-2) and SentencePiece (XLM-R, ALBERT, T5).
_WORD_START_MARKERS = ("\u0120", "\u2581")
# Logits of at most this many floats are materialised at once when sampling fills.
_LOGIT_BLOCK_FLOATS = 1 << 25


def _import_torch():
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "MaskedLMSampler needs torch and transformers: pip install 'skanchors[text]'."
        ) from exc
    return torch


def _default_device(torch, device):
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _special_template(tokenizer):
    """Special-token ids the tokenizer puts before and after one sequence."""
    with_special = tokenizer("a")["input_ids"]
    without = tokenizer("a", add_special_tokens=False)["input_ids"]
    k = len(without)
    for i in range(len(with_special) - k + 1):
        if with_special[i : i + k] == without:
            return list(with_special[:i]), list(with_special[i + k :])
    return [], []  # pragma: no cover - tokenizer that alters the text when adding specials


def _install_capture(model):
    """Hook the output embedding once so that a forward pass can read it at the masks only.

    A thread that sets ``state.request = (rows, cols, out_list)`` before calling the model gets
    the embedding's input at ``[rows, cols]`` appended to ``out_list``, and the embedding is
    then applied to an empty tensor (no logits are materialised). The request is thread-local,
    so threads sharing the model do not see each other's requests.
    """
    state = threading.local()
    out = model.get_output_embeddings()
    if out is None:
        return state

    def hook(module, args):
        request = getattr(state, "request", None)
        if request is None:
            return None
        rows, cols, captured = request
        h = args[0]
        captured.append(h[rows, cols])
        return (h[:, :0],) + tuple(args[1:])

    out.register_forward_pre_hook(hook)
    return state


def _ranges(starts, lengths):
    """Concatenation of ``arange(s, s + n)`` for each pair (vectorised)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(np.asarray(starts, dtype=np.int64), lengths) + np.arange(total) - offsets


class MaskedLMSampler(_TextSampler):
    """Replace words by the suggestions of a masked language model.

    For each perturbation, the words outside the anchor are independently kept with probability
    ``keep_proba``; every replaced word becomes *one* mask token and the model fills all masks
    of a batch of perturbations in one forward pass. Each mask's word is drawn from the softmax
    over the ``top_k`` largest logits at that position among the *whole-word* candidates other
    than the original word as the tokenizer reads it (for an uncased model, "great" is "Great":
    so a replaced word always changes for the model); the draw inverts the
    cumulative top-k probabilities at one uniform number per mask from the ``rng`` passed to
    ``sample``, so results are reproducible and do not depend on ``batch_size``.

    Parameters
    ----------
    model : str or path, default="distilroberta-base"
        Hugging Face hub name or local folder of a masked language model and its tokenizer
        (loaded with ``AutoModelForMaskedLM`` / ``AutoTokenizer``; a fast tokenizer is needed).
    top_k : int >= 1, default=50
        Number of candidates per mask (the paper's zeta).
    keep_proba : float in (0, 1), default=0.5
        Probability that a word outside the anchor is kept.
    batch_size : int >= 1, default=64
        Model inputs (windows, see Notes) per forward pass.
    device : str, torch.device or None, default=None
        Where the model runs; ``None`` means CUDA when available, else CPU.
    max_length : int >= 8, default=512
        Longest model input in tokens, special tokens included (also capped by the tokenizer's
        ``model_max_length`` and the model's positions: ``max_position_embeddings``, less the
        two a RoBERTa-style model reserves).

    Attributes
    ----------
    vocabulary_, word_counts_, document_frequency_, n_documents_
        Reference vocabulary (as for :class:`~skanchors.samplers.CorpusSampler`).
    mask_token_ : str
        The tokenizer's mask token (for :meth:`fill`).
    candidate_ids_ : ndarray of int
        Vocabulary ids of the whole-word candidates.
    candidate_words_ : ndarray of str (object)
        The word each candidate id stands for.
    max_length_ : int
        The effective ``max_length``.

    Notes
    -----
    *Perturbed input.* The document is tokenized once (without special tokens) and each token
    piece is mapped to the word whose characters it covers (a piece that straddles two words
    goes with the first). In a perturbation, the first piece of every replaced word becomes the
    mask token and its other pieces are dropped; pieces of kept words and of the text between
    words (punctuation) stay as they are. Perturbations without any replaced word cost no model
    call.

    *Whole words.* A candidate is a vocabulary entry that starts a word and whose text is one
    word for ``skanchors.samplers.text.tokenize``: with word-start markers (``Ġ`` in byte-level
    BPE, ``▁`` in SentencePiece) the entries carrying the marker, otherwise (WordPiece) the
    entries not starting with ``##``; special tokens, punctuation and partial bytes are
    excluded. The marker is stripped; the word is written into the original character span, so
    the rest of the text is unchanged. Candidates are the *first piece* of a word, so a
    candidate can be the start of a longer word (``un``); with markers, the marked pieces are
    the candidates even for the first word of a text.

    *Long texts.* A perturbed input longer than ``max_length`` is cut into consecutive windows
    of ``max_length`` tokens (special tokens included); each mask is filled from the window that
    holds it, with that window as context. Only windows that hold a mask go to the model.

    *Memory.* Logits are read only at masked positions: a hook on the model's output embedding
    (a ``Linear`` onto the vocabulary, checked at ``fit`` to give the model's own logits)
    takes its input at the masks and hands it an empty tensor, so the model computes no
    logits; logits are then computed for the whole-word candidates only, in blocks of at most
    ``2**25`` floats. When that check fails, the model's full logits (``batch_size`` x window x
    vocabulary floats per forward pass) are gathered at the masks instead.

    The loaded model and tokenizer are not pickled: they are reloaded from ``model`` when
    needed (within a process, samplers of the same model and device share one loaded copy;
    the two most recently used models, and apart from them two tokenizers, are kept).

    Examples
    --------
    With the default model (downloaded on first use; the outputs shown are illustrative):

    >>> import numpy as np
    >>> s = MaskedLMSampler("distilroberta-base", top_k=20)  # doctest: +SKIP
    >>> s = s.fit(["a good movie", "a bad movie"])  # doctest: +SKIP
    >>> inst = s.instance("a surprisingly good movie")  # doctest: +SKIP
    >>> keys, holds = inst.sample((2,), 3, np.random.default_rng(0))  # doctest: +SKIP
    >>> inst.decode(keys)  # doctest: +SKIP
    ['a very good movie', 'a surprisingly good film', 'the surprisingly good movie']
    >>> s.fill([f"It was a {s.mask_token_} movie."], np.random.default_rng(0))  # doctest: +SKIP
    ['It was a great movie.']
    """

    _parameter_constraints: dict = {
        **_TextSampler._parameter_constraints,
        "model": [str, os.PathLike],
        "top_k": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": "no_validation",
        "max_length": [Interval(Integral, 8, None, closed="left")],
    }

    def __init__(
        self,
        model="distilroberta-base",
        *,
        top_k=50,
        keep_proba=0.5,
        batch_size=64,
        device=None,
        max_length=512,
    ):
        super().__init__(keep_proba=keep_proba)
        self.model = model
        self.top_k = top_k
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length

    @property
    def _instance_class(self):
        return MaskedLMInstance

    # ----------------------------------------------------------------- loading
    def _load(self):
        torch = _import_torch()
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from ..hf import _load_pretrained, check_pretrained_source

        name = os.fspath(self.model)
        check_pretrained_source(name, "model")
        device = _default_device(torch, self.device)

        def load():
            tokenizer = AutoTokenizer.from_pretrained(name)
            if not getattr(tokenizer, "is_fast", False):
                raise ValueError(
                    f"MaskedLMSampler needs a fast tokenizer (with offsets); {name!r} has "
                    f"{type(tokenizer).__name__}."
                )
            if tokenizer.mask_token_id is None:
                raise ValueError(f"The tokenizer of {name!r} has no mask token.")
            model = AutoModelForMaskedLM.from_pretrained(name).to(device).eval()
            return tokenizer, model, _install_capture(model)

        loaded = _load_pretrained("masked-lm", name, device, load)
        self._tokenizer, self._model, self._capture = loaded
        self._device = device
        self._head = None
        self._loaded = self._load_key()

    def _load_key(self):
        return (os.fspath(self.model), str(self.device))

    def _ensure_loaded(self):
        if self.__dict__.get("_model") is None or self.__dict__.get("_loaded") != self._load_key():
            self._load()
        return self._tokenizer, self._model

    def __getstate__(self):
        state = dict(super().__getstate__())
        for name in ("_tokenizer", "_model", "_device", "_head", "_loaded", "_capture"):
            state.pop(name, None)
        return state

    def _fit_replacements(self, docs, tokens):
        torch = _import_torch()
        tokenizer, model = self._ensure_loaded()
        self._prefix, self._suffix = _special_template(tokenizer)
        self.max_length_ = _model_max_length(tokenizer, model, int(self.max_length))
        if self.max_length_ - len(self._prefix) - len(self._suffix) < 1:
            raise ValueError(f"max_length={self.max_length} leaves no room for text.")
        n_logits, self._head_mode = self._probe_head(torch, tokenizer, model)
        pieces = tokenizer.convert_ids_to_tokens(list(range(min(len(tokenizer), n_logits))))
        special = set(tokenizer.all_special_ids)
        marked = any(p.startswith(_WORD_START_MARKERS) for p in pieces if p)
        ids, words = [], []
        for i, piece in enumerate(pieces):
            if i in special or not piece:
                continue
            if marked:
                if not piece.startswith(_WORD_START_MARKERS):
                    continue
            elif piece.startswith("##"):
                continue
            text = tokenizer.convert_tokens_to_string([piece]).strip()
            if _word_re().fullmatch(text):
                ids.append(i)
                words.append(text)
        if len(ids) < 2:
            raise ValueError(
                f"The tokenizer of {self.model!r} has fewer than 2 whole-word candidates."
            )
        self.candidate_ids_ = np.array(ids, dtype=np.int64)
        self.candidate_words_ = np.array(words + [None], dtype=object)[:-1]
        self.mask_token_ = tokenizer.mask_token
        table = np.full(n_logits, None, dtype=object)
        table[self.candidate_ids_] = self.candidate_words_
        self._word_of_id = table
        # Candidate columns; column n_candidates is a sentinel whose logit is always -inf.
        # Keyed as the tokenizer reads a word: for an uncased model "great" is "Great".
        norm = _word_normalizer(tokenizer)
        by_word = {}
        for col, w in enumerate(words):
            by_word.setdefault(norm(w), []).append(col)
        self._cols_of_word = {w: np.array(v, dtype=np.int64) for w, v in by_word.items()}

    def _probe_head(self, torch, tokenizer, model):
        """Size of the logits, and whether they can be computed at the masks only.

        Reading the logits at the masks only ("hook" mode) needs the output embedding to be the
        last step of the model (a ``Linear`` onto the vocabulary); this is checked once on a
        small input against the model's own logits. Otherwise ("full" mode) the model's logits
        are gathered at the masks.
        """
        body = tokenizer("a b", add_special_tokens=False)["input_ids"][:2]
        ids = self._prefix + body[:1] + [tokenizer.mask_token_id] + body[1:] + self._suffix
        pos = len(self._prefix) + min(1, len(body))
        input_ids = torch.as_tensor([ids], device=self._device)
        attention = torch.ones_like(input_ids)
        with torch.inference_mode():
            full = model(input_ids=input_ids, attention_mask=attention).logits[0, pos].float()
        n_logits = int(full.shape[-1])
        out = model.get_output_embeddings()
        if isinstance(out, torch.nn.Linear) and out.weight.shape[0] == n_logits:
            try:
                hidden = self._run(
                    torch, model, "hook", ids=[ids], att=[[1] * len(ids)], rows=[0], cols=[pos]
                )
                with torch.inference_mode():
                    mine = out(hidden).float()[0]
                scale = 1e-3 * (1.0 + float(full.abs().max()))
                if torch.allclose(mine, full, rtol=1e-3, atol=scale):
                    return n_logits, "hook"
            except Exception:  # any failure means: use the full logits
                pass
        return n_logits, "full"

    # ------------------------------------------------------------------- filling
    def fill(self, texts, rng, *, return_words=False):
        """Fill every mask token of each text with one whole word.

        Parameters
        ----------
        texts : list of str
            Texts in which ``mask_token_`` marks each word to fill.
        rng : numpy.random.Generator
        return_words : bool, default=False
            Also return the chosen words (one list per text).

        Returns
        -------
        filled : list of str
            The texts with each mask replaced by its word.
        words : list of list of str
            Only when ``return_words``.
        """
        check_is_fitted(self, "candidate_ids_")
        texts = check_documents(texts, "texts", allow_wordless=True, allow_empty=True)
        tokenizer, _ = self._ensure_loaded()
        mask_id = tokenizer.mask_token_id
        bodies = [
            np.asarray(
                tokenizer(t, add_special_tokens=False, verbose=False)["input_ids"], dtype=np.int64
            )
            for t in texts
        ]
        counts = [int((b == mask_id).sum()) for b in bodies]
        for i, (t, c) in enumerate(zip(texts, counts)):
            if t.count(self.mask_token_) != c:
                raise ValueError(
                    f"texts[{i}]: found {t.count(self.mask_token_)} mask tokens in the text but "
                    f"{c} after tokenization."
                )
        lengths = np.array([len(b) for b in bodies], dtype=np.int64)
        flat = np.concatenate(bodies) if bodies else np.zeros(0, dtype=np.int64)
        mask_pos = np.flatnonzero(flat == mask_id)
        exclude = np.full((len(mask_pos), 1), len(self.candidate_ids_), dtype=np.int64)
        chosen = self._fill_flat(flat, lengths, mask_pos, exclude, rng.random(len(mask_pos)))
        chosen_words = self._word_of_id[chosen].tolist()
        filled, per_text, k = [], [], 0
        for t, c in zip(texts, counts):
            parts = t.split(self.mask_token_)
            words = chosen_words[k : k + c]
            k += c
            out = [parts[0]]
            for w, part in zip(words, parts[1:]):
                out.extend((w, part))
            filled.append("".join(out))
            per_text.append(words)
        return (filled, per_text) if return_words else filled

    def _fill_flat(self, flat, lengths, mask_pos, exclude, u):
        """Sample one candidate id for each mask of concatenated token sequences.

        ``flat`` holds the sequences (without special tokens) one after the other, ``lengths``
        their lengths, ``mask_pos`` the flat positions of the masks, ``exclude`` one row of
        vocabulary ids per mask that must not be drawn, ``u`` one uniform number per mask.
        Returns the chosen vocabulary ids, in the order of ``mask_pos``.
        """
        n_masks = len(mask_pos)
        if n_masks == 0:
            return np.zeros(0, dtype=np.int64)
        torch = _import_torch()
        tokenizer, model = self._ensure_loaded()
        prefix, suffix = self._prefix, self._suffix
        width = self.max_length_ - len(prefix) - len(suffix)
        lengths = np.asarray(lengths, dtype=np.int64)
        n_chunks = np.maximum(-(-lengths // width), 1)
        seq_start = np.cumsum(lengths) - lengths
        chunk_first = np.cumsum(n_chunks) - n_chunks
        # Window of each mask: which global chunk and which column inside it.
        seq_of = np.searchsorted(np.cumsum(lengths), mask_pos, side="right")
        pos = mask_pos - seq_start[seq_of]
        chunk_of_mask = chunk_first[seq_of] + pos // width
        col_of_mask = len(prefix) + pos % width
        chunks = np.unique(chunk_of_mask)  # only windows holding a mask go to the model
        total_chunks = int(n_chunks.sum())
        chunk_seq = np.repeat(np.arange(len(lengths)), n_chunks)
        chunk_idx = np.arange(total_chunks) - chunk_first[chunk_seq]
        chunk_start = seq_start[chunk_seq] + chunk_idx * width
        chunk_len = np.minimum(width, lengths[chunk_seq] - chunk_idx * width)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        n_pre, n_suf = len(prefix), len(suffix)
        chosen = np.empty(n_masks, dtype=np.int64)
        order = np.argsort(chunk_of_mask, kind="stable")
        sorted_chunks = chunk_of_mask[order]
        for b0 in range(0, len(chunks), self.batch_size):
            batch = chunks[b0 : b0 + self.batch_size]
            lens = chunk_len[batch]
            seq_width = n_pre + int(lens.max()) + n_suf
            ids = np.full((len(batch), seq_width), pad, dtype=np.int64)
            att = np.zeros((len(batch), seq_width), dtype=np.int64)
            row = np.repeat(np.arange(len(batch)), lens)
            col = n_pre + _ranges(np.zeros(len(batch), dtype=np.int64), lens)
            ids[row, col] = flat[_ranges(chunk_start[batch], lens)]
            if n_pre:
                ids[:, :n_pre] = prefix
            if n_suf:
                srow = np.repeat(np.arange(len(batch)), n_suf)
                scol = (n_pre + lens)[:, None] + np.arange(n_suf)[None, :]
                ids[srow, scol.ravel()] = np.tile(suffix, len(batch))
            att[np.arange(seq_width)[None, :] < (n_pre + lens + n_suf)[:, None]] = 1
            # Masks of this batch (in the order of mask_pos, restricted to the batch).
            lo = np.searchsorted(sorted_chunks, batch[0], side="left")
            hi = np.searchsorted(sorted_chunks, batch[-1], side="right")
            sel = order[lo:hi]
            local_row = np.searchsorted(batch, chunk_of_mask[sel])
            values = self._run(torch, model, self._head_mode, ids, att, local_row, col_of_mask[sel])
            chosen[sel] = self._sample(torch, model, values, exclude[sel], u[sel])
        return chosen

    def _run(self, torch, model, mode, ids, att, rows, cols):
        """One forward pass: decoder inputs ("hook") or logits ("full") at the masks."""
        input_ids = torch.as_tensor(np.asarray(ids), device=self._device)
        attention = torch.as_tensor(np.asarray(att), device=self._device)
        r = torch.as_tensor(np.asarray(rows), device=self._device)
        c = torch.as_tensor(np.asarray(cols), device=self._device)
        if mode == "full":
            with torch.inference_mode():
                return model(input_ids=input_ids, attention_mask=attention).logits[r, c]
        captured = []
        self._capture.request = (r, c, captured)
        try:
            with torch.inference_mode():
                model(input_ids=input_ids, attention_mask=attention)
        finally:
            self._capture.request = None
        if len(captured) != 1:
            raise RuntimeError("The output embedding was not called exactly once.")
        return captured[0]

    def _candidate_head(self, torch, model):
        """Decoder weights restricted to the candidates, plus the -inf sentinel column."""
        head = self.__dict__.get("_head")
        if head is None:
            out = model.get_output_embeddings()
            cand = torch.as_tensor(self.candidate_ids_, device=out.weight.device)
            with torch.inference_mode():
                weight = out.weight[cand]
                weight = torch.cat([weight, weight.new_zeros((1, weight.shape[1]))])
                if out.bias is not None:
                    bias = out.bias[cand].float()
                else:
                    bias = torch.zeros(len(cand), device=weight.device)
                bias = torch.cat([bias, bias.new_full((1,), float("-inf"))])
            head = self._head = (weight, bias)
        return head

    def _sample(self, torch, model, values, exclude, u):
        """Draw one candidate per mask from the softmax over its top-k logits."""
        n_cand = len(self.candidate_ids_)
        block = max(1, _LOGIT_BLOCK_FLOATS // (n_cand + 1))
        top_k = int(min(self.top_k, n_cand))
        excl = torch.as_tensor(exclude, device=self._device)
        out = np.empty(values.shape[0], dtype=np.int64)
        if self._head_mode == "hook":
            weight, bias = self._candidate_head(torch, model)
        else:
            cand = torch.as_tensor(self.candidate_ids_, device=self._device)
        for s in range(0, values.shape[0], block):
            with torch.inference_mode():
                part = values[s : s + block]
                if self._head_mode == "hook":
                    logits = (part.to(weight.dtype) @ weight.T).float() + bias
                else:
                    logits = part[:, cand].float()
                    logits = torch.cat([logits, logits.new_full((len(part), 1), float("-inf"))], 1)
                logits.scatter_(1, excl[s : s + block], float("-inf"))
                top_val, top_col = torch.topk(logits, top_k, dim=1)
            top_val = top_val.cpu().numpy().astype(np.float64)
            top_col = top_col.cpu().numpy()
            with np.errstate(invalid="ignore", over="ignore"):
                proba = np.exp(top_val - top_val[:, :1])
            proba[~np.isfinite(proba)] = 0.0
            cum = np.cumsum(proba, axis=1)
            if not np.all(cum[:, -1] > 0):
                raise RuntimeError("A mask has no whole-word candidate left to draw.")
            target = u[s : s + block] * cum[:, -1]
            pick = np.minimum((cum <= target[:, None]).sum(axis=1), top_k - 1)
            out[s : s + len(pick)] = self.candidate_ids_[top_col[np.arange(len(pick)), pick]]
        return out


def _word_normalizer(tokenizer):
    """The tokenizer's normalisation of a word (lower case and no accents for an uncased
    BERT), so that a replacement the model would read as the word itself is recognised."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    normalizer = getattr(backend, "normalizer", None)
    if normalizer is not None:
        return normalizer.normalize_str
    if getattr(tokenizer, "do_lower_case", False):
        return str.lower
    return str


class MaskedLMInstance(TextInstance):
    """Instance of :class:`MaskedLMSampler`: keys are vocabulary ids of the filled words."""

    def __init__(self, parent, document):
        super().__init__(parent, document)
        tokenizer, _ = parent._ensure_loaded()
        enc = tokenizer(
            document, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        ids = np.asarray(enc["input_ids"], dtype=np.int64)
        offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        s, e = offsets[:, 0], offsets[:, 1]
        starts, ends = self._starts, self._ends
        w1 = np.searchsorted(starts, s, side="right") - 1
        in1 = (w1 >= 0) & (s < ends[np.maximum(w1, 0)])
        w2 = np.searchsorted(starts, e - 1, side="right") - 1
        in2 = (w2 >= 0) & (e - 1 < ends[np.maximum(w2, 0)]) & (e - 1 >= starts[np.maximum(w2, 0)])
        word = np.where(in1, w1, np.where(in2, w2, -1))
        word[e <= s] = -1
        d = self.n_predicates
        # A word no piece covers (a tokenizer that drops characters) gets a virtual entry, used
        # only as the place of its mask when the word is replaced.
        has_piece = np.zeros(d, dtype=bool)
        has_piece[word[word >= 0]] = True
        missing = np.flatnonzero(~has_piece)
        virt_key = np.searchsorted(s, starts[missing], side="left") - 0.5
        key = np.concatenate([np.arange(len(ids), dtype=float), virt_key])
        order = np.argsort(key, kind="stable")
        self._e_ids = np.concatenate([ids, np.zeros(len(missing), dtype=np.int64)])[order]
        self._e_word = np.concatenate([word, missing])[order]
        self._e_virtual = np.concatenate(
            [np.zeros(len(ids), dtype=bool), np.ones(len(missing), dtype=bool)]
        )[order]
        first = np.zeros(len(order), dtype=bool)
        in_word = np.flatnonzero(self._e_word >= 0)
        _, idx = np.unique(self._e_word[in_word], return_index=True)
        first[in_word[idx]] = True
        self._e_first = first
        # Candidate columns that the model reads as the word itself (the same word, or for an
        # uncased model the same in other case or accents): never drawn as its replacement.
        sentinel = len(parent.candidate_ids_)
        empty = np.zeros(0, dtype=np.int64)
        norm = _word_normalizer(tokenizer)
        excl = [parent._cols_of_word.get(norm(w), empty) for w in self.words]
        width = max(1, max(len(x) for x in excl))
        self._exclude = np.full((d, width), sentinel, dtype=np.int64)
        for i, x in enumerate(excl):
            self._exclude[i, : len(x)] = x
        self._mask_id = tokenizer.mask_token_id

    def _draw(self, replaced, rows, cols, rng):
        u = rng.random(len(rows))
        n = replaced.shape[0]
        in_word = self._e_word >= 0
        rep = np.zeros((n, len(self._e_word)), dtype=bool)
        rep[:, in_word] = replaced[:, self._e_word[in_word]]
        is_mask = rep & self._e_first
        include = (~rep | self._e_first) & ~(self._e_virtual & ~rep)
        ids = np.where(is_mask, self._mask_id, self._e_ids[None, :])
        # Only perturbations with at least one mask go to the model.
        active = replaced.any(axis=1)
        include, ids, is_mask = include[active], ids[active], is_mask[active]
        flat = ids[include]
        lengths = include.sum(axis=1)
        mask_pos = np.flatnonzero(is_mask[include])
        chosen = self.parent._fill_flat(flat, lengths, mask_pos, self._exclude[cols], u)
        return chosen.astype(np.int32)

    def _replacement(self, keys):
        return self.parent._word_of_id[keys]
