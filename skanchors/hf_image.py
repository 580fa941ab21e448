"""A Hugging Face image classifier, or a plain torch module, as a scikit-learn classifier of
images (:class:`HFImageClassifier`).

torch and transformers are imported only when a model is loaded or first called.
"""

from __future__ import annotations

import os
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from ._images import check_images
from .hf import (
    _device_of,
    _is_name,
    _load_pretrained,
    _Pretrained,
    check_pretrained_source,
)

__all__ = ["HFImageClassifier"]


class HFImageClassifier(_Pretrained):
    """A Hugging Face image classifier as a scikit-learn classifier of numpy images.

    The model is pre-trained: ``fit`` only loads it, and the classifier is usable without
    ``fit`` (loaded on first use). torch and transformers are imported only then
    (``pip install 'skanchors[text]'``). Images go to the model in batches of
    ``batch_size``, through the model's image processor (resizing, rescaling,
    normalisation), and come back as softmax probabilities.

    Parameters
    ----------
    model : str, path, transformers model or torch.nn.Module
        Hub name or local folder (loaded with ``AutoModelForImageClassification``), a loaded
        transformers image classifier, or a plain ``torch.nn.Module`` that maps a float
        tensor (n, C, H, W) to logits (n, n_classes); a plain module gets the images as they
        are (integers divided by 255), unless an ``image_processor`` is given, and its
        classes are numbered 0, 1, ... by its output.
    image_processor : str, path, processor object or None, default=None
        ``None`` loads ``AutoImageProcessor`` from ``model`` (from ``model.name_or_path`` for
        a loaded transformers model; none for a plain module).
    batch_size : int >= 1, default=32
        Images per forward pass.
    device : str, torch.device or None, default=None
        ``None``: CUDA when available, else CPU, for a model loaded from a name; a loaded
        model stays where it is. Otherwise the model is moved there.

    Attributes
    ----------
    classes_ : ndarray
        Class labels from ``config.id2label`` in id order (the columns of
        :meth:`predict_proba`); 0, 1, ... for a plain module (read from its first output).

    Notes
    -----
    Images are arrays (n, H, W, C) channels last, or (n, H, W) grey, of integers in 0..255 or
    floats in [0, 1] (the processor then does not rescale them again; told image by image,
    so that an image's probabilities do not depend on its batch). Grey images are
    repeated over three channels for a model that takes three; other channel counts than the
    model's are refused.

    Pickling (also how joblib sends the classifier to worker processes) drops the model and
    processor loaded from a name or path: the copy loads them again on first use. Within a
    process, classifiers that load the same model name on the same device share the weights.

    Examples
    --------
    >>> clf = HFImageClassifier("google/vit-base-patch16-224")  # doctest: +SKIP
    >>> clf.predict(images)  # images: uint8 array (n, H, W, 3)  # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        "model": "no_validation",
        "image_processor": "no_validation",
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": "no_validation",
    }

    def __init__(self, model, *, image_processor=None, batch_size=32, device=None):
        self.model = model
        self.image_processor = image_processor
        self.batch_size = batch_size
        self.device = device

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.requires_fit = False
        return tags

    _preprocessor = ("image_processor", "_processor")
    _kept = ("_model", "_processor", "_classes", "_device", "_loaded", "_channels")

    # ------------------------------------------------------------------ loading
    def _load(self):
        key = self._load_key()
        if self._loaded_for(key):
            return
        try:
            import torch
            from transformers import AutoImageProcessor, AutoModelForImageClassification
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "HFImageClassifier needs torch and transformers: pip install 'skanchors[text]'."
            ) from exc
        if _is_name(self.model):
            model, device = self._load_named(
                torch, "image-classification", AutoModelForImageClassification
            )
        else:
            model = self.model
            if not isinstance(model, torch.nn.Module):
                raise TypeError(
                    "model must be a hub name, a path, a loaded transformers image classifier "
                    f"or a torch.nn.Module; got {type(model).__name__}. A function of image "
                    "batches is explained as it is: pass it to the explainer directly."
                )
            model, device = _device_of(torch, model, self.device)
        model.eval()
        config = getattr(model, "config", None)
        if self.image_processor is None:
            source = os.fspath(self.model) if _is_name(self.model) else None
            if source is None and config is not None:
                source = getattr(model, "name_or_path", None) or None
            processor = None
            if source is not None:
                processor = _load_pretrained(
                    "image-processor",
                    source,
                    None,
                    lambda: AutoImageProcessor.from_pretrained(source),
                )
        elif _is_name(self.image_processor):
            check_pretrained_source(self.image_processor, "image_processor")
            source = os.fspath(self.image_processor)
            processor = _load_pretrained(
                "image-processor", source, None, lambda: AutoImageProcessor.from_pretrained(source)
            )
        else:
            processor = self.image_processor
        classes = None
        if config is not None:
            id2label = {int(k): v for k, v in getattr(config, "id2label", {}).items()}
            n = int(getattr(config, "num_labels", len(id2label)))
            if n < 2 or getattr(config, "problem_type", None) == "multi_label_classification":
                raise ValueError(
                    "HFImageClassifier explains single-label classifiers (a softmax over at "
                    "least 2 labels); explain this model through a function that maps images to "
                    "the probabilities you mean."
                )
            classes = np.asarray([id2label.get(i, i) for i in range(n)])
        self._model, self._processor, self._device = model, processor, device
        self._classes = classes
        self._channels = getattr(config, "num_channels", None) if config is not None else None
        self._loaded = key

    @property
    def classes_(self):
        self._load()
        if self._classes is None:  # a plain module: its output's width says
            raise AttributeError(
                "classes_ of a plain torch module are known after its first predict_proba."
            )
        return self._classes

    # --------------------------------------------------------------- predicting
    def _images(self, X):
        images = check_images(X, "X")
        want = self._channels
        if images.ndim == 3 and want is not None and want > 1 and images.shape[-1] == want:
            # (H, W, C) read as H grey images of W x C pixels would give H predictions
            raise ValueError(
                f"X has shape {images.shape}: a single image of {want} channels? pass it as "
                f"X[None] or [image]; grey images of {want} pixels wide, as (n, H, W, 1)."
            )
        if images.ndim == 3:
            images = images[..., None]
        if want is not None and images.shape[-1] != want:
            if images.shape[-1] == 1 and want == 3:
                images = np.repeat(images, 3, axis=-1)
            else:
                raise ValueError(
                    f"X has images with {images.shape[-1]} channel(s); the model takes {want} "
                    "(its config's num_channels)."
                )
        return images

    def predict_proba(self, X):
        """Class probabilities (softmax of the logits) in the order of ``classes_``.

        Parameters
        ----------
        X : ndarray of shape (n, H, W, C) or (n, H, W), or list of equally shaped images
            A batch, also of one image (``image[None]``): a 3-d array whose last axis has
            the model's channel count is refused as a single image, not read as grey ones.

        Returns
        -------
        proba : ndarray of shape (n_images, n_classes)
        """
        self._validate_params()
        self._load()
        images = self._images(X)
        parts = [
            self._forward(images[lo : lo + self.batch_size])
            for lo in range(0, len(images), self.batch_size)
        ]
        proba = np.vstack(parts)
        if self._classes is None:
            self._classes = np.arange(proba.shape[1])
        return proba

    def _forward(self, batch):
        import torch

        if self._processor is not None:
            images = list(batch)
            if batch.dtype.kind == "f":
                # floats in [0, 1], image by image (not by batch: an image's scale does not
                # depend on the others), are brought to 0-255 for the processor's rescaling
                flat = batch.reshape(len(batch), -1)
                unit = (flat.min(axis=1) >= 0) & (flat.max(axis=1) <= 1)
                images = [x * 255.0 if u else x for x, u in zip(images, unit)]
            inputs = self._processor(images=images, return_tensors="pt")
            inputs = {k: v.to(self._device) for k, v in inputs.items()}
        else:
            x = batch.astype(np.float32)
            if batch.dtype.kind in "iu":
                x = x / 255.0
            inputs = {"x": torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, -1, 1)))}
            inputs = {k: v.to(self._device) for k, v in inputs.items()}
        with torch.inference_mode():
            if self._processor is None and getattr(self._model, "config", None) is None:
                logits = self._model(inputs["x"])
            else:
                values = inputs.get("pixel_values", inputs.get("x"))
                logits = self._model(pixel_values=values).logits
            proba = torch.softmax(logits.float(), dim=-1)
        return proba.cpu().numpy().astype(float)

    def predict(self, X):
        """Most probable class label of each image."""
        proba = self.predict_proba(X)
        return self._classes[proba.argmax(axis=1)]
