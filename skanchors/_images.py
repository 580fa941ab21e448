"""Images as skanchors reads them: validation of a batch of images, and their superpixels.

:func:`check_images` validates what a user gives as images (an array of shape (n, H, W) or
(n, H, W, C), or a list of equally shaped arrays); :func:`segment` splits one image into
superpixels with scikit-image (SLIC, quickshift or Felzenszwalb, imported on first use) or
with any callable ``image -> label map``. :mod:`skanchors.samplers.image` builds on both.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_images", "segment", "SEGMENTATIONS"]

SEGMENTATIONS = ("slic", "quickshift", "felzenszwalb")


def is_images(X):
    """Whether ``X`` looks like a batch of images: a numeric array of 3 or 4 dimensions, or a
    list or tuple of 2-d or 3-d numeric arrays (tables are 2-d, documents hold str)."""
    if isinstance(X, np.ndarray):
        return X.ndim in (3, 4) and X.dtype.kind in "biuf"
    if isinstance(X, (list, tuple)) and len(X) and all(isinstance(x, np.ndarray) for x in X):
        return all(x.ndim in (2, 3) for x in X)
    return False


def check_images(X, name="X", *, channels=None):
    """Validate a batch of images and return it as one array of shape (n, H, W) or (n, H, W, C).

    Parameters
    ----------
    X : ndarray of shape (n, H, W) or (n, H, W, C), or list of arrays of shape (H, W[, C])
    name : str
        The argument's name, for the errors.
    channels : int, "none" or None
        The channels the images must have: ``"none"`` for images without a channel axis
        (n, H, W), an int for (n, H, W, C), None for either.

    Raises
    ------
    ValueError
        Naming ``name``: text given for images, images of different sizes, a channel count
        that is not ``channels``, a channels-first array, non-numeric or non-finite pixels.
    """
    if isinstance(X, str) or (
        isinstance(X, (list, tuple)) and any(isinstance(x, (str, bytes)) for x in X)
    ):
        raise ValueError(
            f"{name} must be images (an array of shape (n, H, W) or (n, H, W, C)); got text. "
            "This explainer was fitted on images, or its model takes images."
        )
    if isinstance(X, (list, tuple)):
        if not X:
            raise ValueError(f"{name} holds no images.")
        arrays = [np.asarray(x) for x in X]
        shapes = [a.shape for a in arrays]
        if any(len(s) not in (2, 3) for s in shapes):
            bad = next(i for i, s in enumerate(shapes) if len(s) not in (2, 3))
            raise ValueError(
                f"{name}[{bad}] must be an image of shape (H, W) or (H, W, C), got shape "
                f"{shapes[bad]}."
            )
        other = next((i for i, s in enumerate(shapes) if s != shapes[0]), None)
        if other is not None:
            raise ValueError(
                f"{name} holds images of different sizes: {name}[0] has shape {shapes[0]}, "
                f"{name}[{other}] has {shapes[other]}. Resize them to one size (the model and "
                "the explainer take a batch of equally shaped images)."
            )
        kinds = {a.dtype.kind for a in arrays}
        if not kinds <= set("biuf"):
            raise ValueError(f"{name} must hold numeric pixels, got dtypes {sorted(kinds)}.")
        X = np.stack(arrays)
    elif hasattr(X, "__array__") or hasattr(X, "shape"):
        X = np.asarray(X)
    else:
        raise ValueError(
            f"{name} must be images: an array of shape (n, H, W) or (n, H, W, C), got "
            f"{type(X).__name__}."
        )
    if X.dtype.kind not in "biuf":
        what = "text" if X.dtype.kind in "USO" else f"dtype {X.dtype}"
        raise ValueError(
            f"{name} must be images with numeric pixels (an array of shape (n, H, W) or "
            f"(n, H, W, C)); got {what}."
        )
    if X.ndim not in (3, 4):
        raise ValueError(
            f"{name} must be images: an array of shape (n, H, W) or (n, H, W, C), got shape "
            f"{X.shape} (a single image? pass it as X[None] or [image])."
        )
    if X.shape[0] == 0 or 0 in X.shape[1:3]:
        raise ValueError(f"{name} holds no images, or empty ones: shape {X.shape}.")
    if X.ndim == 4 and X.shape[-1] > 4 and X.shape[1] in (1, 3, 4):
        raise ValueError(
            f"{name} has shape {X.shape}, channels first (a torch layout); images are read "
            f"channels last, (n, H, W, C): pass np.moveaxis({name}, 1, -1)."
        )
    if X.dtype.kind == "b":
        X = X.astype(np.uint8)
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            f"{name} has a non-finite pixel (NaN or infinite) in image {bad[0]} at row {bad[1]}, "
            f"column {bad[2]}: fill or drop it first (the model and the segmentation need "
            "finite pixels)."
        )
    if channels is not None:
        have = "none" if X.ndim == 3 else int(X.shape[-1])
        if have != channels:
            said = "no channel axis, (n, H, W)" if have == "none" else f"{have} channel(s)"
            want = "no channel axis, (n, H, W)" if channels == "none" else f"{channels} channel(s)"
            single = ""
            if have == "none" and X.shape[-1] == channels:
                single = f" (a single image of shape {X.shape}? pass it as {name}[None] or [image])"
            raise ValueError(
                f"{name} has images with {said}; the reference images given to fit have "
                f"{want}. Pass images in the reference images' layout{single}."
            )
    return X


def _unit(image):
    """An image as floats in [0, 1] for the segmentation (integers by their dtype's range
    when they fit 8 bits, floats outside [0, 1] by their own range)."""
    x = image.astype(float, copy=False)
    if image.dtype.kind in "iu" and image.min() >= 0 and image.max() <= 255:
        return x / 255.0
    lo, hi = float(x.min()), float(x.max())
    if image.dtype.kind == "f" and lo >= 0.0 and hi <= 1.0:
        return x
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def default_params(method, shape):
    """The parameters :func:`segment` uses for ``method`` on an image of ``shape`` (H, W[, C])
    unless given: about 10 superpixels for a 25 x 25 face, 50 at most for large photos."""
    h, w = shape[:2]
    colour = len(shape) == 3 and shape[2] == 3
    if method == "slic":
        n = int(np.clip(round(np.sqrt(h * w) / 4), 10, 50))
        # compactness is relative to the colour space: Lab's 0..100 for RGB, 0..1 otherwise
        return {"n_segments": n, "compactness": 30.0 if colour else 0.2, "start_label": 0}
    if method == "quickshift":
        # the LIME package's settings for ImageNet photos, a smaller kernel for small images
        size = int(np.clip(round(min(h, w) / 64), 1, 4))
        return {"kernel_size": size, "max_dist": 200.0, "ratio": 0.2}
    if method == "felzenszwalb":
        return {"scale": 100.0, "sigma": 0.5, "min_size": max(2, h * w // 100)}
    raise ValueError(f"unknown segmentation {method!r}")  # pragma: no cover


def _skimage_segmentation():
    try:
        from skimage import segmentation
    except ImportError as error:
        raise ImportError(
            "Segmenting images into superpixels by name needs scikit-image: pip install "
            "'skanchors[image]' (or pass segmentation=<a callable image -> label map>)."
        ) from error
    return segmentation


def segment(image, segmentation="slic", params=None):
    """The superpixels of one image: an int label map of shape (H, W), labels 0 to k - 1.

    Parameters
    ----------
    image : ndarray of shape (H, W) or (H, W, C)
    segmentation : {"slic", "quickshift", "felzenszwalb"} or callable
        A scikit-image algorithm by name, run on the image scaled to [0, 1] with
        :func:`default_params` updated by ``params``; or a callable taking the image as it
        is and returning an integer label map of shape (H, W).
    params : dict or None
        Keyword arguments of the scikit-image function (not with a callable).
    """
    h, w = image.shape[:2]
    if callable(segmentation):
        labels = np.asarray(segmentation(image))
        where = "the segmentation callable"
    else:
        seg = _skimage_segmentation()
        kwargs = {**default_params(segmentation, image.shape), **(params or {})}
        x = _unit(image)
        gray = x.ndim == 2 or x.shape[2] == 1
        if x.ndim == 3 and x.shape[2] == 1:
            x = x[:, :, 0]
        if segmentation == "slic":
            if gray:
                kwargs.setdefault("channel_axis", None)
            elif x.shape[2] != 3:
                kwargs.setdefault("convert2lab", False)
            labels = seg.slic(x, **kwargs)
        elif segmentation == "quickshift":
            if gray:
                x = np.dstack([x] * 3)
            elif x.shape[2] != 3:
                kwargs.setdefault("convert2lab", False)
            labels = seg.quickshift(x, **kwargs)
        else:
            labels = seg.felzenszwalb(x, channel_axis=None if gray else -1, **kwargs)
        where = f"scikit-image's {segmentation}"
    if labels.shape != (h, w) or labels.dtype.kind not in "iub":
        raise ValueError(
            f"{where} must give an integer label map of shape {(h, w)}, got "
            f"{labels.dtype} of shape {labels.shape}."
        )
    _, inverse = np.unique(labels, return_inverse=True)
    return inverse.reshape(h, w).astype(np.int32)


def boundaries(segments):
    """Boolean (H, W) map of the pixels on a superpixel's border (a neighbour to the right
    or below lies in another superpixel)."""
    edge = np.zeros(segments.shape, dtype=bool)
    edge[:, :-1] |= segments[:, :-1] != segments[:, 1:]
    edge[:-1, :] |= segments[:-1, :] != segments[1:, :]
    return edge


def check_segments_param(segmentation, params, name="segmentation"):
    """Refuse parameters for a callable, and unknown names (scikit-image's own errors on a
    wrong keyword come at the first image)."""
    if callable(segmentation):
        if params:
            raise ValueError(
                "segmentation_params configure scikit-image's algorithms; with a callable "
                "segmentation, bind its parameters in the callable (functools.partial)."
            )
        return
    if segmentation not in SEGMENTATIONS:
        raise ValueError(
            f"{name} must be one of {SEGMENTATIONS} or a callable image -> label map, got "
            f"{segmentation!r}."
        )
    if params is not None:
        if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
            raise ValueError(
                f"segmentation_params must be a dict of keyword arguments, got {params!r}."
            )
    _skimage_segmentation()  # (the missing extra is said at fit, not at the first image)
