"""A Hugging Face sequence-classification model as a scikit-learn classifier of texts
(:class:`HFTextClassifier`), and the loading of pre-trained models and tokenizers it shares
with :class:`~skanchors.samplers.MaskedLMSampler`: loaded once per process, checked for a
missing local folder, and their token limits.

torch and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval

__all__ = ["HFTextClassifier", "check_pretrained_source"]


def _is_name(value):
    return isinstance(value, (str, os.PathLike))


# Models loaded from a name or path, shared within the process: joblib sends each chunk of
# work a fresh (weightless) copy of a sampler or classifier, and this keeps the weights from
# being read again for every chunk. Keyed by kind, name, device and the files' modification
# times (a model saved again to the same folder is reloaded). Models and tokenizers are
# counted apart: of more than _PRETRAINED_MAX of either, the least recently used is dropped
# (a classifier, its tokenizer, a masked language model and its tokenizer all stay).
_PRETRAINED = OrderedDict()
_PRETRAINED_MAX = 2
_PRETRAINED_LOCK = threading.Lock()


def _stamp(name):
    if not os.path.isdir(name):
        return None
    return tuple(
        sorted(
            (entry.name, entry.stat().st_mtime_ns, entry.stat().st_size)
            for entry in os.scandir(name)
            if entry.is_file()
        )
    )


def check_pretrained_source(name, argument):
    """Refuse ``name`` when it is a local path (absolute, starting with ``.`` or ``~``, or
    with more than one ``/``: a Hub name is ``name`` or ``namespace/name``) to a folder that
    does not exist, naming ``argument``; Hugging Face would report it as a malformed Hub
    name."""
    text = os.fspath(name)
    pathlike = (
        os.path.isabs(text) or text.startswith((".", "~")) or text.count("/") > 1 or "\\" in text
    )
    if pathlike and not os.path.exists(os.path.expanduser(text)):
        raise FileNotFoundError(
            f"{argument}={text!r}: no such folder. Pass the folder of a model saved with "
            "save_pretrained, or a Hugging Face Hub name such as 'namespace/model-name'."
        )


def _load_pretrained(kind, name, device, load):
    """``load()`` once per (kind, name, device) and process; later calls share its result."""
    key = (kind, os.fspath(name), str(device), _stamp(os.fspath(name)))
    with _PRETRAINED_LOCK:
        hit = _PRETRAINED.get(key)
        if hit is not None:
            _PRETRAINED.move_to_end(key)
            return hit
    value = load()
    with _PRETRAINED_LOCK:
        _PRETRAINED[key] = value
        same = [k for k in _PRETRAINED if (k[0] == "tokenizer") == (kind == "tokenizer")]
        for old in same[: max(len(same) - _PRETRAINED_MAX, 0)]:  # least recently used first
            del _PRETRAINED[old]
    return value


def _token_positions(model):
    """How many tokens a Hugging Face model can place, or None if it does not say: its
    ``max_position_embeddings``, less the positions a RoBERTa-style model reserves below its
    first one (its embeddings' ``padding_idx`` + 1: 514 - 2 = 512 for roberta-base)."""
    limit = None
    max_pos = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(max_pos, int) and max_pos > 0:
        limit = max_pos
    embeddings = getattr(getattr(model, "base_model", None), "embeddings", None)
    n_table = getattr(getattr(embeddings, "position_embeddings", None), "num_embeddings", None)
    if isinstance(n_table, int):
        pad = getattr(embeddings, "padding_idx", None)
        usable = n_table - (pad + 1 if isinstance(pad, int) else 0)
        limit = usable if limit is None else min(limit, usable)
    return limit


def _model_max_length(tokenizer, model, requested, use_tokenizer=True):
    """``requested`` tokens, capped at the model's positions and (``use_tokenizer``) at the
    tokenizer's ``model_max_length`` when it sets one."""
    limit = requested
    tok_max = getattr(tokenizer, "model_max_length", None)
    if use_tokenizer and tok_max is not None and tok_max < 1_000_000:
        limit = min(limit, int(tok_max))
    positions = _token_positions(model)
    return limit if positions is None else min(limit, positions)


class _Pretrained(ClassifierMixin, BaseEstimator):
    """What the pre-trained classifiers share: nothing to fit, clones that share the loaded
    model, pickles without what loads again from a name. A subclass names its preprocessor's
    parameter and the attribute ``_load`` keeps it in (``_preprocessor``: the tokenizer or
    image processor), and everything ``_load`` keeps (``_kept``)."""

    _preprocessor = ("", "")
    _kept = ("_model", "_classes", "_device", "_loaded")

    def __sklearn_is_fitted__(self):
        return True  # pre-trained: nothing to fit

    def __sklearn_clone__(self):
        clone = type(self)(**self.get_params(deep=False))
        for name in self._kept:
            if name in self.__dict__:
                setattr(clone, name, self.__dict__[name])
        return clone

    def __getstate__(self):
        state = dict(super().__getstate__())
        if _is_name(self.model):
            for name in ("_model", "_device", "_loaded"):
                state.pop(name, None)
        parameter, loaded = self._preprocessor
        preprocessor = getattr(self, parameter)
        if (_is_name(self.model) and preprocessor is None) or _is_name(preprocessor):
            state.pop(loaded, None)
            state.pop("_loaded", None)
        return state

    def _load_key(self):
        """What the loaded model and preprocessor depend on: ``_load`` reuses them while it
        is unchanged."""
        preprocessor = getattr(self, self._preprocessor[0])
        return (
            os.fspath(self.model) if _is_name(self.model) else id(self.model),
            os.fspath(preprocessor) if _is_name(preprocessor) else id(preprocessor),
            str(self.device),
        )

    def _loaded_for(self, key):
        return self.__dict__.get("_loaded") == key and self.__dict__.get("_model") is not None

    def _load_named(self, torch, kind, auto_class):
        """The model named by ``self.model`` (hub name or folder), loaded with
        ``auto_class`` (once per process and device), and its device."""
        check_pretrained_source(self.model, "model")
        device = _named_device(torch, self.device)
        model = _load_pretrained(
            kind,
            self.model,
            device,
            lambda: auto_class.from_pretrained(os.fspath(self.model)).to(device).eval(),
        )
        return model, device

    def fit(self, X=None, y=None):
        """Load the model and its preprocessor (no training).

        Parameters
        ----------
        X, y : ignored
            Accepted for compatibility with scikit-learn.

        Returns
        -------
        self
        """
        self._validate_params()
        self._load()
        return self


def _device_of(torch, model, device):
    """Where a loaded model runs: moved to ``device`` when one is given, else where it is."""
    if device is not None:
        model = model.to(torch.device(device))
    try:
        return model, next(model.parameters()).device
    except (StopIteration, AttributeError):
        return model, torch.device("cpu")


def _named_device(torch, device):
    """The device of a model loaded from a name: ``device``, else CUDA when available."""
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class HFTextClassifier(_Pretrained):
    """A Hugging Face sequence-classification model as a scikit-learn classifier of texts.

    The model is pre-trained: ``fit`` only loads it (it never trains), and the classifier is
    usable without ``fit``: the model and tokenizer are loaded on first use. torch and
    transformers are imported only then (``pip install 'skanchors[text]'``).

    Parameters
    ----------
    model : str, path or transformers.PreTrainedModel
        Hub name or local folder (loaded with ``AutoModelForSequenceClassification``), or an
        already loaded model (used as is, put in evaluation mode).
    tokenizer : str, path, tokenizer object or None, default=None
        ``None`` loads the tokenizer from ``model`` (from ``model.name_or_path`` for a loaded
        model).
    batch_size : int >= 1, default=32
        Texts per forward pass. Without a pad token in the tokenizer or a ``pad_token_id``
        in the model's config (GPT-2's), a pass takes texts of equal token length only, and
        one text while the config has no ``pad_token_id`` (set ``model.config.pad_token_id``,
        e.g. to the EOS id, for batches).
    max_length : int >= 1 or None, default=None
        Texts are truncated to this many tokens, capped at the model's positions (its
        ``max_position_embeddings``, less the two a RoBERTa-style model reserves). ``None``:
        the tokenizer's ``model_max_length``, capped at 512 and at those positions.
    device : str, torch.device or None, default=None
        ``None``: CUDA when available, else CPU, for a model loaded from a name; a loaded model
        stays where it is. Otherwise the model is moved there.
    cache_size : int >= 0, default=100_000
        Probabilities of up to this many distinct texts are kept (least recently used evicted),
        so predicting the same perturbations again costs no model call. 0 disables the cache.

    Attributes
    ----------
    classes_ : ndarray
        Class labels from ``config.id2label``, in id order (column order of
        :meth:`predict_proba`). Reading it loads the model.

    Notes
    -----
    Pickling (also how joblib sends the classifier to worker processes) drops the cache and,
    when ``model`` (respectively ``tokenizer``) was given as a name or path, the loaded model
    (tokenizer): the copy reloads it from that name on first use, so the pickle is light. A
    model or tokenizer given as an object is pickled with the classifier.

    ``sklearn.base.clone`` (used by ``GridSearchCV``) returns a classifier that *shares* the
    loaded model and tokenizer instead of copying them. Within a process, classifiers that load
    the same model name on the same device share one copy of the weights (the two most recently
    used models, and apart from them two tokenizers, are kept).

    Examples
    --------
    With a fine-tuned model from the hub (downloaded on first use; outputs are illustrative):

    >>> clf = HFTextClassifier("distilbert-base-uncased-finetuned-sst-2-english")  # doctest: +SKIP
    >>> clf.classes_  # doctest: +SKIP
    array(['NEGATIVE', 'POSITIVE'], dtype='<U8')
    >>> clf.predict_proba(["a great movie", "a dull movie"]).round(2)  # doctest: +SKIP
    array([[0.  , 1.  ],
           [1.  , 0.  ]])
    """

    _parameter_constraints: dict = {
        "model": "no_validation",
        "tokenizer": "no_validation",
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 1, None, closed="left"), None],
        "device": "no_validation",
        "cache_size": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        model,
        *,
        tokenizer=None,
        batch_size=32,
        max_length=None,
        device=None,
        cache_size=100_000,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.cache_size = cache_size

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags

    _preprocessor = ("tokenizer", "_tokenizer")
    _kept = ("_model", "_tokenizer", "_classes", "_device", "_loaded")

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_cache", None)  # the predictions kept: rebuilt on use
        state.pop("_cache_key", None)
        return state

    # ------------------------------------------------------------------ loading
    def _load(self):
        """Load (or reuse) the model and tokenizer matching the current parameters."""
        key = self._load_key()
        if self._loaded_for(key):
            return
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "HFTextClassifier needs torch and transformers: pip install 'skanchors[text]'."
            ) from exc
        if _is_name(self.model):
            model, device = self._load_named(
                torch, "sequence-classification", AutoModelForSequenceClassification
            )
        else:
            model = self.model
            if not (hasattr(model, "config") and callable(model)):
                raise TypeError(
                    "model must be a hub name, a path or a loaded transformers model; got "
                    f"{type(model).__name__}."
                )
            model, device = _device_of(torch, model, self.device)
        model.eval()
        if self.tokenizer is None:
            source = os.fspath(self.model) if _is_name(self.model) else model.name_or_path
            if not source:
                raise ValueError(
                    "Pass tokenizer=...: the model was given as an object without a "
                    "name_or_path to load its tokenizer from."
                )
            tokenizer = _load_pretrained(
                "tokenizer", source, None, lambda: AutoTokenizer.from_pretrained(source)
            )
        elif _is_name(self.tokenizer):
            check_pretrained_source(self.tokenizer, "tokenizer")
            source = os.fspath(self.tokenizer)
            tokenizer = _load_pretrained(
                "tokenizer", source, None, lambda: AutoTokenizer.from_pretrained(source)
            )
        else:
            tokenizer = self.tokenizer
        config = model.config
        id2label = {int(k): v for k, v in getattr(config, "id2label", {}).items()}
        n = int(getattr(config, "num_labels", len(id2label)))
        problem = getattr(config, "problem_type", None)
        if n < 2 or problem in ("regression", "multi_label_classification"):
            # a softmax over one logit is 1.0 for every text; over independent sigmoid
            # logits it is not the model's probability of any label
            what = (
                "one output (a regression head or a single sigmoid logit)"
                if n < 2
                else (f"problem_type={problem!r}")
            )
            raise ValueError(
                f"HFTextClassifier explains single-label classifiers (a softmax over at least 2 "
                f"labels); the model has {what}. Explain it through a function that maps a "
                "list of texts to the probabilities you mean, e.g. [1 - p, p] for a sigmoid."
            )
        labels = [id2label.get(i, i) for i in range(n)]
        self._model, self._tokenizer, self._device = model, tokenizer, device
        self._classes = np.asarray(labels)
        self._loaded = key

    def _max_length(self):
        limit = 512 if self.max_length is None else int(self.max_length)
        return _model_max_length(self._tokenizer, self._model, limit, self.max_length is None)

    @property
    def classes_(self):
        self._load()
        return self._classes

    # --------------------------------------------------------------- predicting
    def predict_proba(self, X):
        """Class probabilities (softmax of the logits) in the order of ``classes_``.

        Parameters
        ----------
        X : list, tuple, 1-d array or Series of str
            Texts to classify (a single string is refused).

        Returns
        -------
        proba : ndarray of shape (n_texts, n_classes)
        """
        from .samplers.text import check_documents

        texts = check_documents(X, "X", allow_wordless=True, allow_empty=True)
        self._validate_params()
        self._load()
        n_classes = len(self._classes)
        out = np.empty((len(texts), n_classes), dtype=float)
        key = (self._loaded, self._max_length())
        if self.__dict__.get("_cache_key") != key:
            self._cache, self._cache_key = OrderedDict(), key
        cache = self._cache
        todo = {}
        for i, text in enumerate(texts):
            hit = cache.get(text) if self.cache_size else None
            if hit is None:
                todo.setdefault(text, []).append(i)
            else:
                cache.move_to_end(text)
                out[i] = hit
        if todo:
            unique = list(todo)
            proba = self._forward(unique)
            for text, row in zip(unique, proba):
                out[todo[text]] = row
                if self.cache_size:
                    cache[text] = row
            while len(cache) > self.cache_size:
                cache.popitem(last=False)
        return out

    def _batches(self, texts):
        """``(indices, encoding)`` per model call. Similar lengths share a batch (less
        padding); without a pad token in the tokenizer or a ``pad_token_id`` in the model's
        config (GPT-2's), texts of equal token length share a batch, which needs no padding,
        and without a ``pad_token_id`` one text goes at a time (such heads refuse batches of
        more than one text)."""
        max_length = self._max_length()
        tokenizer = self._tokenizer
        # GPT-2 style heads find each text's last token by the config's pad_token_id and
        # refuse a batch without one, whatever the tokenizer pads with
        pad_id = getattr(self._model.config, "pad_token_id", None)
        padded = tokenizer.pad_token is not None and pad_id is not None
        size = self.batch_size
        if padded:
            groups = [sorted(range(len(texts)), key=lambda i: len(texts[i]))]
        else:
            ids = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
            by_length = {}
            for i, row in enumerate(ids):
                by_length.setdefault(len(row), []).append(i)
            groups = [by_length[n] for n in sorted(by_length)]
            if pad_id is None:
                size = 1
        for members in groups:
            for b in range(0, len(members), size):
                idx = members[b : b + size]
                batch = [texts[i] for i in idx]
                yield idx, tokenizer(
                    batch, padding=padded, truncation=True, max_length=max_length,
                    return_tensors="pt",
                )  # fmt: skip

    def _forward(self, texts):
        import torch

        out = np.empty((len(texts), len(self._classes)), dtype=float)
        for idx, enc in self._batches(texts):
            enc = {k: v.to(self._device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = self._model(**enc).logits
                proba = torch.softmax(logits.float(), dim=-1)
            out[idx] = proba.cpu().numpy().astype(float)
        return out

    def predict(self, X):
        """Most probable class label of each text."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]
