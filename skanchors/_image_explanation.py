"""Explanations of images: an :class:`ImageAnchor` and an :class:`ImageLimeExplanation`.

They are an :class:`~skanchors.Anchor` and a :class:`~skanchors.LimeExplanation` whose
predicates are superpixels (``Predicate(j, "kept", position=j)``), with the image's
segmentation: boolean masks of the pixels they name, and pictures (matplotlib, imported on
first use). Their ``to_dict`` adds the segmentation, run-length encoded (data only: the
image itself is not kept), and ``from_dict`` checks it with the rest.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from . import _serial
from ._explanation import Anchor, _predicate, plain_text
from ._images import boundaries
from ._lime_explanation import LimeExplanation

__all__ = ["ImageAnchor", "ImageLimeExplanation"]

# Labels of a superpixel map read back: at most this many superpixels (and pixels per side,
# and in all: 2 ** 25 pixels, an 8K photo, is a map of 128 MiB; a few bytes of JSON naming
# 32,767 x 32,767 pixels would otherwise allocate 4 GiB).
_MAX_LABEL = 1 << 24
_MAX_SIDE = 1 << 15
_MAX_PIXELS = 1 << 25


def as_image_explanation(explanation, segments):
    """The image version of an :class:`Anchor` or :class:`LimeExplanation` just made."""
    cls = ImageAnchor if isinstance(explanation, Anchor) else ImageLimeExplanation
    values = {f.name: getattr(explanation, f.name) for f in fields(explanation)}
    out = cls(**{**values, "segments": np.asarray(segments)})
    out.__dict__.update(
        {k: v for k, v in explanation.__dict__.items() if k not in values and k != "segments"}
    )
    return out


def encode_segments(segments):
    """A label map as ``{"shape": [H, W], "values": [...], "lengths": [...]}``: the runs of
    equal labels in row-major order."""
    flat = np.asarray(segments).ravel()
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    lengths = np.diff(np.r_[starts, flat.size])
    return {
        "shape": [int(s) for s in np.shape(segments)],
        "values": flat[starts].astype(int).tolist(),
        "lengths": lengths.astype(int).tolist(),
    }


def decode_segments(data, where):
    """A label map from :func:`encode_segments`' form, checked (``where`` names it)."""
    _serial.check_keys(data, where, ("shape", "values", "lengths"), (), "a superpixel map")
    shape = _serial.sequence(data["shape"], f"{where}['shape']")
    if len(shape) != 2:
        raise ValueError(f"{where}['shape'] must be [height, width], got {_serial.shown(shape)}.")
    h, w = (
        _serial.count(s, f"{where}['shape'][{i}]", _MAX_SIDE, "a positive number of pixels")
        for i, s in enumerate(shape)
    )
    if h == 0 or w == 0:
        raise ValueError(f"{where}['shape'] must be positive, got {[h, w]}.")
    if h * w > _MAX_PIXELS:
        raise ValueError(
            f"{where}['shape'] must name at most {_MAX_PIXELS} pixels, got {h} x {w} = "
            f"{h * w} pixels."
        )
    values = _serial.sequence(data["values"], f"{where}['values']")
    lengths = _serial.sequence(data["lengths"], f"{where}['lengths']")
    if len(values) != len(lengths) or not values:
        raise ValueError(
            f"{where}['values'] and {where}['lengths'] must be non-empty lists of one length, "
            f"got {len(values)} and {len(lengths)}."
        )
    labels = [
        _serial.count(v, f"{where}['values'][{i}]", _MAX_LABEL, "a superpixel label")
        for i, v in enumerate(values)
    ]
    runs = [
        _serial.count(n, f"{where}['lengths'][{i}]", h * w + 1, "a run length")
        for i, n in enumerate(lengths)
    ]
    if 0 in runs or sum(runs) != h * w:
        raise ValueError(
            f"{where}['lengths'] must be positive and add up to the {h * w} pixels of the "
            f"{h} x {w} image, got a sum of {sum(runs)}."
        )
    return np.repeat(np.asarray(labels, dtype=np.int32), runs).reshape(h, w)


def _check_superpixels(predicates, segments, where):
    present = set(np.unique(segments).tolist())
    for i, p in enumerate(predicates):
        if p.op != "kept":
            raise ValueError(
                f"{where}[{i}] must be a superpixel predicate (op 'kept') in an image's "
                f"explanation, got {str(p)!r}."
            )
        if p.feature not in present:
            raise ValueError(
                f"{where}[{i}] names superpixel {p.feature}, which the image's superpixel map "
                "does not hold."
            )


def _pyplot(what):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"{what} needs matplotlib: pip install 'skanchors[plot]'.") from exc
    return plt


def _display(image):
    """An image as floats in [0, 1] with three channels, for matplotlib."""
    x = np.asarray(image, dtype=float)
    if x.ndim == 3 and x.shape[2] == 1:
        x = x[:, :, 0]
    if np.asarray(image).dtype.kind in "iu" and x.min() >= 0 and x.max() <= 255:
        x = x / 255.0
    elif x.min() < 0 or x.max() > 1:
        lo, hi = x.min(), x.max()
        x = (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
    if x.ndim == 2:
        x = np.dstack([x] * 3)
    elif x.shape[2] != 3:
        x = np.dstack([x.mean(axis=2)] * 3)
    return x


def _png(draw):
    """A figure drawn by ``draw(ax)`` as a base64 PNG, without pyplot's global state."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.2, 3.2), layout="constrained")
    draw(fig.subplots())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class _ImagePart:
    """What both image explanations share: the segmentation and its serialised form."""

    _dict_key = "segments"

    def _identity(self):
        digest = None if self.segments is None else np.asarray(self.segments).tobytes()
        return (*super()._identity(), digest)

    def _check_instance(self, what):
        if self.instance is None:
            raise ValueError(
                f"{what} needs the explained image, which explanations rebuilt from JSON do not "
                "keep: set explanation.instance = image, or explain the image again."
            )
        image = np.asarray(self.instance)
        if image.ndim in (3, 4) and len(image) == 1 and image.shape[1:3] == self.segments.shape:
            image = image[0]  # (a batch of one image)
        if image.ndim not in (2, 3) or image.shape[:2] != self.segments.shape:
            h, w = self.segments.shape
            raise ValueError(
                f"{what}: instance has shape {image.shape}, not the explained image's: its "
                f"superpixels cover {h} x {w} pixels."
            )
        return image

    def _with_segments(self, data):
        return {**data, "segments": encode_segments(self.segments)}

    @staticmethod
    def _split(data, what):
        if not isinstance(data, dict):
            raise ValueError(f"data must be a dict from {what}.to_dict, got {type(data).__name__}.")
        rest = dict(data)
        segments = decode_segments(rest.pop("segments", None) or {}, "data['segments']")
        return rest, segments


@dataclass(eq=False)
class ImageAnchor(_ImagePart, Anchor):
    """An anchor of an image: superpixels that hold the prediction in place.

    An :class:`~skanchors.Anchor` whose predicates are superpixels ("superpixel 7": the
    superpixel shows the image's own pixels), with the image's segmentation. Its
    ``precision`` is about the perturbations of this image in which those superpixels are
    kept and every other one is kept or filled at random. Coverage across images is
    undefined (superpixels belong to one image): ``coverage`` is the share of this image's
    perturbations the rule applies to, ``keep_proba ** len(anchor)``, the same as
    ``coverage_perturbation``.

    Attributes
    ----------
    segments : ndarray of int, shape (H, W)
        The image's superpixels, labels 0 to k - 1.
    """

    segments: Any = None

    def __hash__(self):
        return hash(self._identity()[:2])

    @property
    def superpixels(self):
        """Labels of the anchored superpixels, sorted."""
        return sorted(int(p.feature) for p in self.predicates)

    @property
    def mask(self):
        """Boolean (H, W) map of the anchored pixels."""
        return np.isin(self.segments, self.superpixels)

    def covers(self, X):
        """Not defined: an image's superpixels do not exist in other images."""
        raise ValueError(
            "An image anchor names superpixels of its own image; coverage across images is "
            "undefined (see ImageAnchor). Use AnchorExplainer.perturbation_precision to check it "
            "on fresh perturbations of the image."
        )

    def to_dict(self):
        """:meth:`Anchor.to_dict` with ``"segments"``, the superpixel map, run-length
        encoded (the image itself is not kept)."""
        return self._with_segments(super().to_dict())

    @classmethod
    def from_dict(cls, data):
        """Rebuild an image anchor, checked as :meth:`Anchor.from_dict` checks an anchor; the
        superpixel map must be a well-formed run-length encoding whose labels include every
        superpixel the rule names."""
        rest, segments = cls._split(data, "ImageAnchor")
        anchor = Anchor.from_dict(rest)
        _check_superpixels(anchor.predicates, segments, "data['predicates']")
        return as_image_explanation(anchor, segments)

    def _draw(self, ax, dim=0.25):
        image = _display(self._check_instance("ImageAnchor.plot"))
        mask = self.mask
        shown = np.where(mask[..., None], image, dim * image)
        shown[boundaries(np.where(mask, self.segments + 1, 0)) & mask] = (1.0, 0.85, 0.0)
        ax.imshow(shown, interpolation="nearest")
        ax.set_axis_off()
        flag = "" if self.is_anchor else " (not an anchor)"
        ax.set_title(
            plain_text(
                f"PREDICT {self._predicted()}: precision {self.precision:.2f}, "
                f"{len(self.superpixels)} superpixel(s){flag}"
            ),
            fontsize="small",
        )
        return ax

    def plot(self, ax=None, *, dim=0.25):
        """The image with everything outside the anchor dimmed (to ``dim`` of its
        brightness) and the anchored superpixels outlined. Requires matplotlib. Returns the
        Axes."""
        plt = _pyplot("ImageAnchor.plot")
        if ax is None:
            _, ax = plt.subplots(figsize=(4, 4), layout="constrained")
        return self._draw(ax, dim)

    def _repr_html_(self):
        text = super()._repr_html_()
        if self.instance is None:
            return text
        try:
            png = _png(self._draw)
        except ImportError:  # pragma: no cover - depends on the environment
            return text
        label = html.escape(f"superpixels {self.superpixels}", quote=True)
        return (
            "<div class='skanchors-image-anchor'>"
            f"<img src='data:image/png;base64,{png}' alt='{label}'/>{text}</div>"
        )


@dataclass(eq=False)
class ImageLimeExplanation(_ImagePart, LimeExplanation):
    """A LIME explanation of an image: one weight per superpixel.

    A :class:`~skanchors.LimeExplanation` whose interpretable features are the image's
    superpixels ("superpixel 7" present: it shows the image's own pixels rather than its
    fill), with the image's segmentation for :meth:`mask` and :meth:`plot`.

    Attributes
    ----------
    segments : ndarray of int, shape (H, W)
        The image's superpixels, labels 0 to k - 1.
    """

    segments: Any = None

    def __hash__(self):
        return hash(self._identity()[:3])

    def top_superpixels(self, n_features=5, positive_only=True):
        """Labels of the ``n_features`` selected superpixels of largest weight (of largest
        ``|weight|`` when not ``positive_only``; only positive weights when it is)."""
        n = _serial.count(n_features, "n_features")
        ranked = [int(self.features[j][0].feature) for j in self._ranked()]
        weights = {int(self.features[j][0].feature): float(self.weights[j]) for j in self.selected}
        if positive_only:
            ranked = [s for s in ranked if weights[s] > 0]
        return ranked[:n]

    def mask(self, n_features=5, positive_only=True):
        """Boolean (H, W) map of the pixels of the top superpixels (:meth:`top_superpixels`),
        as the LIME package's ``get_image_and_mask`` picks them."""
        return np.isin(self.segments, self.top_superpixels(n_features, positive_only))

    def _draw(self, ax, n_features=5):
        image = _display(self._check_instance("ImageLimeExplanation.plot"))
        weights = {int(self.features[j][0].feature): float(self.weights[j]) for j in self.selected}
        top = self.top_superpixels(n_features, positive_only=False)
        shown = image.copy()
        for colour, keep in (((0.0, 0.8, 0.0), True), ((0.85, 0.0, 0.0), False)):
            chosen = [s for s in top if (weights[s] > 0) == keep]
            region = np.isin(self.segments, chosen)
            shown[boundaries(np.where(region, self.segments + 1, 0)) & region] = colour
            shown[region] = 0.75 * shown[region] + 0.25 * np.asarray(colour)
        ax.imshow(shown, interpolation="nearest")
        ax.set_axis_off()
        ax.set_title(
            plain_text(
                f"P({self.prediction}) = {self.class_probability:.2f}: green for, red against"
            ),
            fontsize="small",
        )
        return ax

    def plot(self, ax=None, *, n_features=5):
        """The image with the ``n_features`` superpixels of largest ``|weight|`` outlined:
        green those that raise the probability, red those that lower it (the LIME package's
        picture). Requires matplotlib. Returns the Axes."""
        plt = _pyplot("ImageLimeExplanation.plot")
        if ax is None:
            _, ax = plt.subplots(figsize=(4, 4), layout="constrained")
        return self._draw(ax, n_features)

    def to_dict(self):
        """:meth:`LimeExplanation.to_dict` with ``"segments"``, run-length encoded."""
        return self._with_segments(super().to_dict())

    @classmethod
    def from_dict(cls, data):
        """Rebuild an image explanation, checked as :meth:`LimeExplanation.from_dict`, and
        its superpixel map as :meth:`ImageAnchor.from_dict` checks it."""
        rest, segments = cls._split(data, "ImageLimeExplanation")
        values = _serial.lime_fields(rest, _predicate)
        for i, preds in enumerate(values["features"]):
            _check_superpixels(preds, segments, f"data['features'][{i}]")
        return cls(**values, segments=segments)

    def _repr_html_(self):
        text = super()._repr_html_()
        if self.instance is None:
            return text
        try:
            png = _png(self._draw)
        except ImportError:  # pragma: no cover - depends on the environment
            return text
        return (
            "<div class='skanchors-image-lime'>"
            f"<img src='data:image/png;base64,{png}' alt='LIME superpixels'/>{text}</div>"
        )
