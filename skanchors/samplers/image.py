"""Perturbation distribution for images: superpixels are kept or filled, one by one.

An image is split into *superpixels* (:func:`skanchors._images.segment`: SLIC, quickshift or
Felzenszwalb from scikit-image, or a callable of your own), once per explained image. Its
predicates are its superpixels: ``Predicate(j, "kept", position=j)``, printed
``superpixel j``, holds in a perturbation where superpixel ``j`` shows the image's own pixels.

``D(z | A)`` keeps every superpixel of ``A`` and each other superpixel independently with
probability ``keep_proba`` (1/2, as LIME and the Anchors paper do); a superpixel that is not
kept is *filled*: with its mean colour (LIME's default), a constant colour, a blur of the
image, the same region of a random reference image (alibi's background images: one reference
image per perturbation), or what a callable of yours returns. As with words, the superpixels
are masked independently, so ``exact_reuse`` holds: one pool of perturbations serves every
candidate anchor of the image. A perturbation's key is its vector of keep bits (``-1`` kept,
else ``0``, or the index of the reference image that fills it), so repeated perturbations are
predicted once, and a batch of keys becomes a batch of images with array operations.

Coverage across images is undefined (the superpixels are the image's own: "superpixel 3" of
one image is nothing in another), so an image anchor's ``coverage`` is its coverage under the
perturbation distribution, ``keep_proba ** len(anchor)``: the share of this image's
perturbations the rule applies to, the quantity the search maximises.
"""

from __future__ import annotations

import hashlib
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._explanation import Predicate
from .._images import check_images, check_segments_param, segment
from .._validation import check_params
from ._protocol import Capabilities, InstanceSampler, Sampler

__all__ = ["ImageSampler", "ImageInstance"]

# Segmentations kept per sampler (the explainer asks for an image's instance more than once).
_SEGMENT_CACHE = 64
# Fewest pixels per run of a superpixel, on average, for decode to copy run by run.
_MIN_RUN = 4


class ImageSampler(BaseEstimator, Sampler):
    """Keep or fill the superpixels of an image.

    ``ImageSampler()`` is what ``sampler=None`` gives for images (an array of shape
    (n, H, W) or (n, H, W, C)) in :class:`~skanchors.AnchorExplainer` and
    :class:`~skanchors.LimeExplainer`.

    Parameters
    ----------
    segmentation : {"slic", "quickshift", "felzenszwalb"} or callable, default="slic"
        How an image is split into superpixels: a scikit-image algorithm (needs
        ``pip install 'skanchors[image]'``), run on the image scaled to [0, 1], or a callable
        ``image -> label map`` (an integer array of shape (H, W); any labels) that gets the
        image as given. The defaults suit the image's size: SLIC with ``n_segments`` about
        ``sqrt(H * W) / 4`` between 10 and 50 (compactness 30 in Lab colours, 0.2 for
        grey or other channels), quickshift with LIME's settings (``kernel_size=4,
        max_dist=200, ratio=0.2``; a kernel of ``min(H, W) / 64`` pixels on smaller images),
        Felzenszwalb with ``scale=100, sigma=0.5`` and superpixels of at least 1 % of the
        image.
    segmentation_params : dict or None, default=None
        Keyword arguments for the scikit-image function, over the defaults above
        (``{"n_segments": 30}``).
    fill : {"mean", "blur", "reference"}, number, colour or callable, default="mean"
        What a superpixel that is not kept shows. ``"mean"``: its mean colour in the image
        (LIME's default). ``"blur"``: the image under a Gaussian blur of standard deviation
        a tenth of its shorter side. ``"reference"``: the same pixels of a random reference
        image (one per perturbation, drawn uniformly from the images given to :meth:`fit`,
        which must have the size of the explained ones). A number or a colour (one value
        per channel): a constant. A callable ``image -> image`` of the same shape: its
        output (``functools.partial(scipy.ndimage.gaussian_filter, sigma=2)`` for another
        blur).
    keep_proba : float in (0, 1), default=0.5
        Probability that a superpixel outside the anchor is kept.

    Attributes
    ----------
    image_shape_ : tuple of int
        (H, W) of the reference images.
    n_channels_ : int or None
        Channels of the reference images; None for images without a channel axis.
    n_reference_ : int
        Number of reference images.

    Examples
    --------
    >>> import numpy as np
    >>> images = np.zeros((2, 8, 8))
    >>> images[:, :, 4:] = 1.0
    >>> halves = lambda image: (np.arange(8)[None, :] >= 4).repeat(8, axis=0).astype(int)
    >>> s = ImageSampler(segmentation=halves).fit(images)
    >>> inst = s.instance(images[0])
    >>> [str(p) for p in inst.predicates]
    ['superpixel 0', 'superpixel 1']
    >>> keys, holds = inst.sample((1,), 3, np.random.default_rng(0))
    >>> holds.tolist()
    [[False, True], [True, True], [False, True]]
    >>> inst.decode(keys)[0][0]  # superpixel 0 filled with its mean (0), 1 kept
    array([0., 0., 0., 0., 1., 1., 1., 1.])
    """

    modality = "image"

    _parameter_constraints: dict = {
        "segmentation": [StrOptions({"slic", "quickshift", "felzenszwalb"}), callable],
        "segmentation_params": [dict, None],
        "fill": [StrOptions({"mean", "blur", "reference"}), Real, "array-like", callable],
        "keep_proba": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self, *, segmentation="slic", segmentation_params=None, fill="mean", keep_proba=0.5
    ):
        self.segmentation = segmentation
        self.segmentation_params = segmentation_params
        self.fill = fill
        self.keep_proba = keep_proba

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the images' layout (and keep them, for ``fill="reference"``).

        Parameters
        ----------
        X : ndarray of shape (n, H, W) or (n, H, W, C), or list of equally shaped images
            Reference images, in the form the model consumes.
        y : None
            Ignored.
        sample_weight : None
            Images cannot be class-balanced (``AnchorExplainer(balance=True)``); anything but
            None raises ``ValueError``.

        Returns
        -------
        self
        """
        if sample_weight is not None:
            raise ValueError(
                "ImageSampler does not support sample_weight: images cannot be class-balanced "
                "(use balance=False)."
            )
        check_segments_param(self.segmentation, self.segmentation_params)
        images = check_images(X, "X")
        self.image_shape_ = tuple(int(s) for s in images.shape[1:3])
        self.n_channels_ = None if images.ndim == 3 else int(images.shape[-1])
        self.n_reference_ = len(images)
        self._fill_constant(self.n_channels_ or 1)  # (a colour of the wrong length: now)
        self._reference = images if _is_str(self.fill, "reference") else None
        self._segments = {}
        return self

    def _fill_constant(self, channels):
        """The constant fill colour as an array of ``channels`` values, or None."""
        fill = self.fill
        if isinstance(fill, str) or callable(fill):
            return None
        colour = np.asarray(fill, dtype=float).ravel()
        if colour.size not in (1, channels) or not np.isfinite(colour).all():
            raise ValueError(
                f"fill must be one finite number or one per channel ({channels}), got {fill!r}."
            )
        return np.broadcast_to(colour, (channels,))

    # ------------------------------------------------------------------- explaining
    def _layout(self):
        return "none" if self.n_channels_ is None else self.n_channels_

    def split(self, X):
        """Validate images to explain and return them one by one (each (H, W[, C]))."""
        check_is_fitted(self, "image_shape_")
        images = check_images(X, "X", channels=self._layout())
        if self._reference is not None and images.shape[1:3] != self.image_shape_:
            raise ValueError(
                f"X has images of {images.shape[1]} x {images.shape[2]} pixels; with "
                f"fill='reference' they are filled from the reference images, of "
                f"{self.image_shape_[0]} x {self.image_shape_[1]}: pass images of that size."
            )
        return list(images)

    def check_pixel_columns(self, X):
        """Refuse images of another size than the reference images for ``transform``, whose
        columns are the reference images' pixels (:meth:`get_feature_names_out`)."""
        check_is_fitted(self, "image_shape_")
        images = check_images(X, "X", channels=self._layout())
        if images.shape[1:3] != self.image_shape_:
            raise ValueError(
                f"X has images of {images.shape[1]} x {images.shape[2]} pixels; transform "
                f"gives one column per pixel of the reference images, {self.image_shape_[0]} "
                f"x {self.image_shape_[1]} (get_feature_names_out): pass images of that size, "
                "or explain() them."
            )

    def to_model_input(self, X):
        """The images as the model gets them: one array (n, H, W[, C])."""
        return check_images(X, "X")

    def get_feature_names_out(self, input_features=None):
        """Names of the pixels of the reference images' size, row by row (``pixel_r_c``),
        the columns of the explainers' ``transform``."""
        check_is_fitted(self, "image_shape_")
        h, w = self.image_shape_
        return np.array([f"pixel_{r}_{c}" for r in range(h) for c in range(w)], dtype=object)

    def instance(self, image):
        """The instance sampler of one image, of shape (H, W) (images without a channel
        axis) or (H, W, C), or a batch of exactly one."""
        check_is_fitted(self, "image_shape_")
        check_params(self)
        image = np.asarray(image)
        single = 2 if self.n_channels_ is None else 3
        if image.ndim == single:
            image = image[None]
        images = check_images(image, "image", channels=self._layout())
        if len(images) != 1:
            raise ValueError(f"instance() takes exactly one image, got {len(images)}.")
        if self._reference is not None and images.shape[1:3] != self.image_shape_:
            raise ValueError(
                f"image has {images.shape[1]} x {images.shape[2]} pixels; fill='reference' "
                f"needs the reference images' {self.image_shape_[0]} x {self.image_shape_[1]}."
            )
        return ImageInstance(self, images[0])

    def segments_of(self, image):
        """The superpixels of ``image`` (H, W[, C]): labels 0 to k - 1 (kept for the
        sampler's last images: an image's instance is asked for more than once)."""
        # (keyed by the settings too: set_params may change them after fit)
        settings = f"{self.segmentation!r}\0{self.segmentation_params!r}\0"
        key = hashlib.blake2b(
            f"{settings}{image.dtype.str}{image.shape}".encode()
            + np.ascontiguousarray(image).tobytes(),
            digest_size=16,
        ).digest()
        cache = self.__dict__.setdefault("_segments", {})
        found = cache.get(key)
        if found is None:
            found = segment(image, self.segmentation, self.segmentation_params)
            found.setflags(write=False)
            if len(cache) >= _SEGMENT_CACHE:
                cache.pop(next(iter(cache)))
            cache[key] = found
        return found

    def wrap_explanation(self, explanation, instance):
        """The explanation of ``instance`` as an image's own (:class:`~skanchors.ImageAnchor`
        or :class:`~skanchors.ImageLimeExplanation`: with the segmentation, for masks and
        pictures)."""
        from .._image_explanation import as_image_explanation

        return as_image_explanation(explanation, instance.segments)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_segments"] = {}  # (caches: workers and pickles start without them)
        state.pop("_reference_as", None)
        return state


def _is_str(value, name):
    return isinstance(value, str) and value == name


class ImageInstance(InstanceSampler):
    """Sampler for one image (the protocol: :mod:`skanchors.samplers._protocol`).

    Attributes
    ----------
    image : ndarray of shape (H, W) or (H, W, C)
        The explained image, as given.
    segments : ndarray of int32, shape (H, W)
        Its superpixels, labels 0 to ``n_predicates - 1``.
    predicates : list of Predicate
        ``Predicate(j, "kept", position=j)`` for superpixel ``j``.
    n_predicates : int
    capabilities : Capabilities
        ``exact_reuse`` (superpixels are kept independently: a sample drawn for a rule that
        satisfies a wider one is a draw of the wider one), ``keys_tell_holds`` (a superpixel
        is kept exactly where its key is -1: ``holds_of``) and ``replayable`` (a sample is
        drawn from the generator alone).
    keep_proba : float

    Notes
    -----
    ``sample`` returns ``keys``, an integer matrix with one column per superpixel: ``-1``
    where it is kept, else ``0`` (``int8``), or with ``fill="reference"`` the index of the
    reference image that fills the perturbation (``int32``, the same in every filled column
    of a row); and ``holds``, the boolean matrix "superpixel kept". A filled superpixel that
    happens to look as it did (a uniform region under its mean colour) still counts as not
    kept.
    """

    capabilities = Capabilities(exact_reuse=True, keys_tell_holds=True, replayable=True)

    def __init__(self, parent, image):
        self.parent = parent
        self.image = image
        self.segments = parent.segments_of(image)
        self._n_predicates = int(self.segments.max()) + 1
        self.keep_proba = float(parent.keep_proba)
        self._predicates = [Predicate(j, "kept", position=j) for j in range(self._n_predicates)]
        self._pixels = image if image.ndim == 3 else image[:, :, None]
        self._fill = None if parent._reference is not None else self._fill_image()

    def _fill_image(self):
        """The filled image (H, W, C) of every superpixel that is not kept, in the image's
        dtype."""
        parent, x = self.parent, self._pixels.astype(float)
        fill, channels = parent.fill, x.shape[2]
        if _is_str(fill, "mean"):
            counts = np.bincount(self.segments.ravel(), minlength=self.n_predicates)
            means = (
                np.stack(
                    [
                        np.bincount(self.segments.ravel(), x[:, :, c].ravel(), self.n_predicates)
                        for c in range(channels)
                    ],
                    axis=1,
                )
                / np.maximum(counts, 1)[:, None]
            )
            out = means[self.segments]
        elif _is_str(fill, "blur"):
            from scipy import ndimage

            sigma = min(x.shape[:2]) / 10.0
            out = np.stack(
                [ndimage.gaussian_filter(x[:, :, c], sigma) for c in range(channels)], axis=2
            )
        elif callable(fill):
            out = np.asarray(fill(self.image), dtype=float)
            if out.shape != self.image.shape or not np.isfinite(out).all():
                raise ValueError(
                    f"fill, a callable, must return a finite image of the image's shape "
                    f"{self.image.shape}, got {out.dtype} of shape {out.shape}."
                )
            out = out if out.ndim == 3 else out[:, :, None]
        else:
            out = np.broadcast_to(parent._fill_constant(channels), x.shape)
        return _as_dtype(out, self.image.dtype)

    # -- the search protocol
    @property
    def n_predicates(self):
        """Number of superpixels of the image (one predicate each)."""
        return self._n_predicates

    @property
    def predicates(self):
        """``Predicate(j, "kept", position=j)`` for superpixel ``j``."""
        return self._predicates

    def sample(self, anchor, n, rng):
        """``n`` draws from ``D(z | anchor)``: (keys, holds) of shape (n, n_superpixels)."""
        n = int(n)
        keep = rng.random((n, self.n_predicates)) < self.keep_proba
        if len(anchor):
            keep[:, list(anchor)] = True
        reference = self.parent._reference
        if reference is None:
            return -(keep.view(np.int8)), keep
        source = rng.integers(len(reference), size=n).astype(np.int32)
        return np.where(keep, np.int32(-1), source[:, None]), keep

    def holds_of(self, keys):
        """Which superpixels rows of ``keys`` keep."""
        return np.asarray(keys) < 0

    def decode(self, keys):
        """The perturbed images of rows of ``keys``: an array (m, H, W[, C]) in the image's
        dtype and layout."""
        keys = np.asarray(keys)
        if keys.ndim != 2 or keys.shape[1] != self.n_predicates:
            raise ValueError(f"keys must have shape (n, {self.n_predicates}), got {keys.shape}.")
        m, (h, w, c) = len(keys), self._pixels.shape
        kept = np.ascontiguousarray(keys < 0)
        reference = self.parent._reference
        if reference is None:
            filled = self._fill[None]
        else:  # (the reference image of each row: one block copy per row)
            filled = self._reference_images()[np.maximum(keys.max(axis=1, initial=-1), 0)]
        runs = self._runs()
        if runs is None:
            # Many short runs (a fine or scattered segmentation): whole pixels are chosen at
            # once, as records of C values, by one np.where over (m, H, W) cells.
            out = np.where(
                kept[:, self.segments], self._records(self._pixels)[None], self._records(filled)
            )
            out = np.ascontiguousarray(out)[..., None].view(self.image.dtype)
        else:
            # The filled images, and over them the kept superpixels' pixels, copied run by
            # run (a superpixel is a few runs of consecutive pixels of each image row): block
            # copies, several times faster than choosing every pixel.
            out = np.empty((m, h * w, c), dtype=self.image.dtype)
            out.reshape(m, h, w, c)[...] = filled
            pixels = self._pixels.reshape(h * w, c)
            for j, spans in enumerate(runs):
                rows = np.flatnonzero(kept[:, j])
                if rows.size == m:
                    rows = slice(None)
                elif rows.size == 0:
                    continue
                for a, b in spans:
                    out[rows, a:b] = pixels[a:b]
            out = out.reshape(m, h, w, c)
        return out if self.image.ndim == 3 else out[..., 0]

    def _runs(self):
        """Per superpixel, its runs of consecutive pixels in row-major order (``(start,
        stop)`` pairs of flat pixel indices); None when the runs are short (fewer than
        ``_MIN_RUN`` pixels on average), where copying run by run costs more than choosing
        pixels."""
        if "_runs_" not in self.__dict__:
            labels = self.segments.ravel()
            starts = np.r_[0, np.flatnonzero(np.diff(labels)) + 1]
            runs = None
            if len(starts) * _MIN_RUN <= labels.size:
                stops = np.r_[starts[1:], labels.size]
                runs = [[] for _ in range(self.n_predicates)]
                for a, b, label in zip(starts.tolist(), stops.tolist(), labels[starts].tolist()):
                    runs[label].append((a, b))
            self._runs_ = runs
        return self._runs_

    @staticmethod
    def _records(pixels):
        """Images (..., H, W, C) as arrays (..., H, W) of pixels, each one record of C values."""
        pixels = np.ascontiguousarray(pixels)
        record = np.dtype((np.void, pixels.shape[-1] * pixels.dtype.itemsize))
        return pixels.view(record)[..., 0]

    def _reference_images(self):
        """The reference images (n, H, W, C) in the image's dtype (kept per dtype)."""
        parent, dtype = self.parent, self.image.dtype
        cache = parent.__dict__.setdefault("_reference_as", {})
        found = cache.get(dtype.str)
        if found is None:
            images = _as_dtype(parent._reference, dtype)
            images = images if images.ndim == 4 else images[..., None]
            found = cache[dtype.str] = np.ascontiguousarray(images)
        return found

    def coverage(self, anchors):
        """Coverage under the perturbation distribution: ``keep_proba ** len(anchor)``."""
        return np.array([self.keep_proba ** len(a) for a in anchors], dtype=float)

    def reference_coverage(self, anchor):
        """Coverage across images is undefined (superpixels are the image's own): the share
        of this image's perturbations the rule applies to, ``keep_proba ** len(anchor)``."""
        return float(self.keep_proba ** len(anchor))


def _as_dtype(values, dtype):
    """Float pixels in the image's dtype (integers rounded and clipped to the dtype)."""
    values = np.asarray(values)
    if values.dtype == dtype:
        return values
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)
