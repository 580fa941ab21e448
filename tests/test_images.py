"""Images: superpixels as predicates, for anchors and LIME (issue 46).

Known answers: a planted model predicts 1 exactly when a checkerboard patch is in the image, so
its anchor must be the patch's superpixels and LIME's top superpixel must lie on it; on a grid
segmentation the patch is exactly one superpixel.
"""

import functools
import json
import math
import pickle

import numpy as np
import pytest

from skanchors import (
    Anchor,
    AnchorExplainer,
    ImageAnchor,
    ImageLimeExplanation,
    LimeExplainer,
    LimeExplanation,
    NoAnchorWarning,
)
from skanchors._images import check_images, segment
from skanchors.samplers import ImageSampler

pytest.importorskip("skimage")

H = W = 32
PATCH = (slice(8, 16), slice(16, 24))
CHECKER = (np.indices((8, 8)).sum(0) % 2).astype(float)


def _images(n, patch, seed=0):
    """Blocky colour images (16 blocks of 8 x 8 pixels, a little noise), with the
    checkerboard patch or without."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.8, size=(n, 4, 4, 3))
    X = np.kron(base, np.ones((1, 8, 8, 1))) + rng.normal(0, 0.02, size=(n, H, W, 3))
    if patch:
        X[:, PATCH[0], PATCH[1], :] = CHECKER[None, :, :, None]
    return X.clip(0, 1)


def planted(X):
    """P(1) = 1 exactly when the checkerboard is in the patch (its contrast survives)."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 3:
        X = X[..., None]
    region = X[:, PATCH[0], PATCH[1], :].mean(axis=3)
    score = ((region - 0.5) * (CHECKER - 0.5)).mean(axis=(1, 2))
    p = (score > 0.15).astype(float)
    return np.column_stack([1 - p, p])


def grid(image, step=8):
    """A grid of step x step superpixels, numbered row by row."""
    h, w = image.shape[:2]
    rows, cols = np.indices((h, w))
    return (rows // step) * ((w + step - 1) // step) + cols // step


REFERENCE = np.concatenate([_images(20, False, 1), _images(20, True, 2)])
IMAGE = _images(1, True, 3)


def _patch_superpixels(segments):
    return set(np.unique(segments[PATCH]).tolist())


# ------------------------------------------------------------------- planted answers
def test_anchor_of_a_planted_patch_is_its_superpixel_on_a_grid():
    explainer = AnchorExplainer(planted, sampler=ImageSampler(segmentation=grid), random_state=0)
    anchor = explainer.fit(REFERENCE).explain(IMAGE)[0]
    assert isinstance(anchor, ImageAnchor) and isinstance(anchor, Anchor)
    assert anchor.is_anchor and anchor.prediction == 1
    # the patch is grid cell (1, 2) = superpixel 6, and nothing else is needed
    assert anchor.superpixels == [6]
    assert str(anchor).startswith("IF superpixel 6 THEN PREDICT 1")
    expected = np.zeros((H, W), dtype=bool)
    expected[PATCH] = True
    np.testing.assert_array_equal(anchor.mask, expected)
    assert anchor.coverage == anchor.coverage_perturbation == 0.5
    assert explainer.perturbation_precision(anchor, 2000, random_state=1) >= 0.95
    # every superpixel but the patch's is kept or filled at random in the fresh samples
    Z = explainer.sample(anchor, 200, random_state=0)
    assert Z.shape == (200, H, W, 3)
    np.testing.assert_array_equal(
        Z[:, PATCH[0], PATCH[1]], np.broadcast_to(IMAGE[0][PATCH], (200, 8, 8, 3))
    )
    outside = ~expected
    assert 0.3 < np.mean((Z[:, outside] == IMAGE[0][outside]).all(axis=-1)) < 0.7


def test_anchor_of_a_planted_patch_with_slic():
    explainer = AnchorExplainer(planted, random_state=0).fit(REFERENCE)
    anchor = explainer.explain(IMAGE)[0]
    assert anchor.is_anchor and anchor.prediction == 1
    on_patch = _patch_superpixels(anchor.segments)
    assert anchor.superpixels and set(anchor.superpixels) <= on_patch
    assert anchor.mask[PATCH].mean() >= 0.8
    assert explainer.perturbation_precision(anchor, 2000, random_state=1) >= 0.95
    # an image without the patch: its class (0) holds whatever is filled
    plain = explainer.explain(_images(1, False, 4))[0]
    assert plain.prediction == 0 and plain.superpixels == []


def test_lime_top_superpixel_lies_on_the_patch():
    explainer = LimeExplainer(planted, n_samples=500, random_state=0).fit(REFERENCE)
    e = explainer.explain(IMAGE)[0]
    assert isinstance(e, ImageLimeExplanation) and isinstance(e, LimeExplanation)
    top = e.top_superpixels(1)
    assert len(top) == 1 and top[0] in _patch_superpixels(e.segments)
    assert e.mask(1)[PATCH].mean() >= 0.8
    assert e.as_list()[0][0] == f"superpixel {top[0]}" and e.as_list()[0][1] > 0.5
    # negatives too, with positive_only=False: at most n_features superpixels
    assert e.mask(3, positive_only=False).sum() >= e.mask(1).sum()
    # one weight per pixel in transform, the patch's on the patch
    Xt = explainer.transform(IMAGE)
    assert Xt.shape == (1, H * W)
    assert Xt[0].reshape(H, W)[PATCH].max() == pytest.approx(e.as_list()[0][1])
    assert explainer.get_feature_names_out()[:2].tolist() == ["pixel_0_0", "pixel_0_1"]


def test_lime_predicts_each_distinct_perturbation_once():
    def halves(image):  # two superpixels: 4 distinct perturbations
        return (np.arange(image.shape[1])[None, :] >= 16).repeat(image.shape[0], axis=0)

    seen = []

    def model(X):
        seen.append(len(X))
        return planted(X)

    sampler = ImageSampler(segmentation=halves)
    e = LimeExplainer(model, sampler=sampler, n_samples=500, random_state=0).fit(REFERENCE)
    e = e.explain(IMAGE)[0]
    assert e.n_samples == 500 and e.n_rows_predicted == 4 and seen[-1] == 4
    # the patch lies in the right half (superpixel 1): its weight carries the prediction
    assert e.top_superpixels(1) == [1] and e.weights[1] > 0.9


def test_grey_images_and_integer_pixels_keep_their_layout():
    grey = (REFERENCE.mean(axis=3) * 255).astype(np.uint8)
    seen = []

    def model(X):
        seen.append((X.dtype, X.shape[1:]))
        return planted(X.astype(float) / 255)

    explainer = AnchorExplainer(model, random_state=0).fit(grey)
    anchor = explainer.explain(grey[20:21])[0]
    assert {s for s in seen} == {(np.dtype(np.uint8), (H, W))}
    assert anchor.prediction == 1 and set(anchor.superpixels) <= _patch_superpixels(anchor.segments)
    assert explainer.sample(anchor, 5, random_state=0).shape == (5, H, W)


def test_anchor_model_calls_one_per_round_and_each_perturbation_once():
    calls = []

    def model(X):
        calls.append(len(X))
        return planted(X)

    explainer = AnchorExplainer(model, sampler=ImageSampler(segmentation=grid), random_state=0)
    anchor = explainer.fit(REFERENCE).explain(IMAGE)[0]
    # 16 superpixels: at most 2 ** 16 distinct perturbations, each predicted at most once
    assert anchor.n_model_calls == len(calls) - 1  # (fit's call for the classes)
    assert anchor.n_rows_predicted == sum(calls) - 1


def test_images_draw_50_at_a_time_and_validate_from_the_fewest_samples():
    # batch_size="auto": 50 for images (100 for tables); the planted patch's superpixel, right
    # on every perturbation, is accepted at its validation's first look, which draws the fewest
    # fresh samples that can accept a rule: n * KL(1 || 0.925) >= log(17 / delta) + log 2 (16
    # superpixels, beam 1), 75 at delta=0.1 (100 when the batch was 100)
    explainer = AnchorExplainer(planted, sampler=ImageSampler(segmentation=grid), random_state=0)
    anchor = explainer.fit(REFERENCE).explain(IMAGE)[0]
    assert explainer._batch_size() == 50
    first = math.ceil((math.log(17 / 0.1) + math.log(2)) / -math.log(0.925))
    assert first == 75 and anchor.superpixels == [6]
    assert anchor.n_samples == first and anchor.precision == 1.0
    assert explainer.set_params(batch_size=100).explain(IMAGE)[0].n_samples == 100
    rows = np.random.default_rng(0).uniform(size=(20, 3))
    table = AnchorExplainer(lambda X: np.column_stack([X[:, 0], 1 - X[:, 0]]), random_state=0)
    assert table.fit(rows)._batch_size() == 100


def _scattered(image):
    """Superpixels of single pixels scattered over the image (runs of one pixel)."""
    h, w = image.shape[:2]
    return (np.indices((h, w)).sum(0) % 5) + 5 * ((np.indices((h, w))[0] // 8) % 2)


@pytest.mark.parametrize("segmentation", [grid, _scattered])
@pytest.mark.parametrize("fill", ["mean", "reference", 0.25])
@pytest.mark.parametrize("layout", ["rgb", "grey", "uint8"])
def test_decode_builds_each_pixel_from_the_image_or_its_fill(segmentation, fill, layout):
    # every pixel of a perturbation is the image's where its superpixel is kept, else the fill
    # (the superpixel's mean, the row's reference image, a constant), whether decode copies
    # superpixels run by run (a grid) or chooses pixel by pixel (scattered superpixels)
    images = REFERENCE[:6]
    if layout == "grey":
        images = images.mean(axis=3)
    elif layout == "uint8":
        images = (images * 255).astype(np.uint8)
    sampler = ImageSampler(segmentation=segmentation, fill=fill).fit(images)
    instance = sampler.instance(images[4])
    assert (instance._runs() is None) == (segmentation is _scattered)
    keys, holds = instance.sample((1,), 40, np.random.default_rng(0))
    Z = instance.decode(keys)
    assert Z.shape == (40,) + images.shape[1:] and Z.dtype == images.dtype
    assert Z.flags.c_contiguous
    image, segments = images[4], instance.segments
    for z, key, hold in zip(Z, keys, holds):
        kept = hold[segments]
        np.testing.assert_array_equal(z[kept], image[kept])
        if fill == "reference":
            expected = images[key.max()] if (key >= 0).any() else image
        elif fill == "mean":
            means = [image[segments == j].astype(float).mean(0) for j in range(len(hold))]
            expected = np.stack(means)[segments]
        else:
            expected = np.full(image.shape, 0.25 if images.dtype != np.uint8 else 0.0)
        # (means rounded to the pixels' type: within half a unit of an integer type)
        atol = 0.5 if images.dtype == np.uint8 else 1e-6
        np.testing.assert_allclose(z[~kept], expected[~kept], rtol=0, atol=atol)


# --------------------------------------------------------------------------- fills
@pytest.mark.parametrize("fill", ["mean", "blur", "reference", 0.0, (1.0, 0.0, 0.0), "callable"])
def test_every_fill_finds_the_patch(fill):
    if fill == "callable":
        fill = functools.partial(np.full_like, fill_value=0.5)
    sampler = ImageSampler(segmentation=grid, fill=fill)
    explainer = AnchorExplainer(planted, sampler=sampler, random_state=0).fit(REFERENCE)
    anchor = explainer.explain(IMAGE)[0]
    assert anchor.superpixels == [6], fill
    instance = explainer.sampler_.instance(IMAGE[0])
    keys, holds = instance.sample((), 50, np.random.default_rng(0))
    Z = instance.decode(keys)
    filled = ~holds[:, instance.segments]  # (50, H, W)
    assert filled.any()
    if isinstance(fill, tuple):
        np.testing.assert_array_equal(Z[filled], np.broadcast_to([1.0, 0.0, 0.0], Z[filled].shape))
    elif fill == "reference":
        # one reference image fills a perturbation
        for z, f in zip(Z, filled):
            if f.any():
                assert any(np.array_equal(z[f], r[f]) for r in REFERENCE)
    elif fill == "mean":
        j = int(np.flatnonzero(~holds[0])[0])
        region = instance.segments == j
        np.testing.assert_allclose(
            Z[0][region], np.broadcast_to(IMAGE[0][region].mean(0), Z[0][region].shape)
        )
    np.testing.assert_array_equal(Z[~filled], np.broadcast_to(IMAGE[0], Z.shape)[~filled])


@pytest.mark.parametrize("method", ["slic", "quickshift", "felzenszwalb"])
def test_segmentations_by_name_with_parameters(method):
    from skimage import data

    photo = data.astronaut()[::4, ::4]  # 128 x 128 RGB
    labels = segment(photo, method)
    k = labels.max() + 1
    assert labels.shape == photo.shape[:2] and set(np.unique(labels)) == set(range(k))
    assert 5 <= k <= 200, (method, k)
    face = data.lfw_subset()[0]  # 25 x 25 grey
    assert 3 <= segment(face, method).max() + 1 <= 60
    if method == "slic":
        assert segment(photo, "slic", {"n_segments": 100}).max() + 1 > k


def test_segmentation_errors_name_the_argument():
    with pytest.raises(ValueError, match="'segmentation' parameter of ImageSampler"):
        AnchorExplainer(planted, sampler=ImageSampler(segmentation="watershed")).fit(REFERENCE)
    with pytest.raises(ValueError, match="segmentation_params"):
        ImageSampler(segmentation=grid, segmentation_params={"n_segments": 3}).fit(REFERENCE)
    bad = ImageSampler(segmentation=lambda image: np.zeros((3, 3), int)).fit(REFERENCE)
    with pytest.raises(ValueError, match="label map of shape"):
        bad.instance(IMAGE[0])
    with pytest.raises(ValueError, match="fill must be one finite number or one per channel"):
        ImageSampler(fill=(1.0, 0.0)).fit(REFERENCE)
    # settings changed after fit apply to the next image (segmentations are kept per setting)
    sampler = ImageSampler(segmentation=grid).fit(REFERENCE)
    assert sampler.instance(IMAGE[0]).n_predicates == 16
    sampler.set_params(segmentation=functools.partial(grid, step=16))
    assert sampler.instance(IMAGE[0]).n_predicates == 4


# ------------------------------------------------------------------------- errors
def test_errors_name_the_argument():
    explainer = AnchorExplainer(planted, random_state=0).fit(REFERENCE)
    with pytest.raises(ValueError, match=r"X holds images of different sizes: X\[0\]"):
        explainer.explain([IMAGE[0], IMAGE[0][:16]])
    with pytest.raises(ValueError, match="X has images with 1 channel"):
        explainer.explain(IMAGE[..., :1])
    with pytest.raises(ValueError, match="X has images with no channel axis"):
        explainer.explain(IMAGE[..., 0])
    # one colour image, not in a batch: (32, 32, 3) reads as 32 grey images of 32 x 3, which
    # an explainer of colour images cannot take; the error says what was meant
    with pytest.raises(ValueError, match=r"a single image of shape \(32, 32, 3\)\? .*X\[None\]"):
        explainer.explain(IMAGE[0])
    with pytest.raises(ValueError, match=r"a single image"):
        LimeExplainer(planted, n_samples=50).fit(REFERENCE).explain(IMAGE[0])
    nan = IMAGE.copy()
    nan[0, 3, 5, 1] = np.nan
    with pytest.raises(ValueError, match="X has a non-finite pixel .* image 0 at row 3, column 5"):
        explainer.explain(nan)
    with pytest.raises(ValueError, match="X has a non-finite pixel"):
        AnchorExplainer(planted).fit(nan)
    with pytest.raises(ValueError, match="X must be images .*got text"):
        explainer.explain(["a photo of a dog"])
    with pytest.raises(ValueError, match="channels first"):
        explainer.explain(np.moveaxis(np.repeat(IMAGE, 2, axis=0), -1, 1))
    with pytest.raises(ValueError, match="X holds images of different sizes"):
        LimeExplainer(planted).fit([IMAGE[0], IMAGE[0][:16]])
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="X holds images.*Tabular"):
        AnchorExplainer(planted, discretizer="decile").fit(REFERENCE)
    with pytest.raises(ValueError, match="sampling='joint'.*images"):
        LimeExplainer(planted, sampling="joint").fit(REFERENCE)
    with pytest.raises(ValueError, match="fill='reference'"):
        AnchorExplainer(planted, sampler=ImageSampler(fill="reference")).fit(REFERENCE).explain(
            IMAGE[:, :16, :16]
        )
    with pytest.raises(ValueError, match="balance=False"):
        AnchorExplainer(planted, balance=True).fit(REFERENCE)
    # transform's columns are the reference images' pixels (get_feature_names_out): images
    # of another size, which explain() takes, would give rows of another width
    small = _images(1, True, 3)[:, :16, :16]
    for fitted in (explainer, LimeExplainer(planted, n_samples=50).fit(REFERENCE)):
        with pytest.raises(
            ValueError, match=r"X has images of 16 x 16 pixels; transform .*32 x 32"
        ):
            fitted.transform(small)
    with pytest.raises(ValueError, match="coverage across images is undefined"):
        explainer.score(REFERENCE)
    anchor = explainer.explain(IMAGE)[0]
    with pytest.raises(ValueError, match="coverage across images is undefined"):
        anchor.covers(REFERENCE)


def test_check_images_accepts_lists_and_refuses_single_images():
    assert check_images([IMAGE[0], IMAGE[0]]).shape == (2, H, W, 3)
    with pytest.raises(ValueError, match=r"a single image\? pass it as X\[None\]"):
        check_images(IMAGE[0, :, :, 0])
    assert check_images(np.zeros((2, 4, 4), dtype=bool)).dtype == np.uint8


# ------------------------------------------------------------------- determinism
def test_results_do_not_depend_on_n_jobs_or_batching():
    images = np.concatenate([IMAGE, _images(2, True, 5), _images(1, False, 6)])
    anchors = {}
    for n_jobs in (1, 2):
        explainer = AnchorExplainer(planted, n_jobs=n_jobs, random_state=3).fit(REFERENCE)
        anchors[n_jobs] = explainer.explain(images)
    assert anchors[1] == anchors[2]
    alone = AnchorExplainer(planted, random_state=3).fit(REFERENCE).explain(images[2:3])[0]
    assert alone == anchors[1][2]
    lime = [
        LimeExplainer(planted, n_samples=300, n_jobs=n, random_state=3)
        .fit(REFERENCE)
        .explain(images)
        for n in (1, 2)
    ]
    assert lime[0] == lime[1]


# ------------------------------------------------------------- serialisation, display
def test_anchor_json_round_trip_and_validation():
    explainer = AnchorExplainer(planted, random_state=0).fit(REFERENCE)
    anchor = explainer.explain(IMAGE)[0]
    back = Anchor.from_json(anchor.to_json())
    assert isinstance(back, ImageAnchor) and back == anchor
    np.testing.assert_array_equal(back.mask, anchor.mask)
    data = json.loads(anchor.to_json())
    assert set(data["segments"]) == {"shape", "values", "lengths"}
    assert len(data["segments"]["values"]) < H * W  # run-length encoded
    broken = json.loads(anchor.to_json())
    broken["segments"]["lengths"][0] += 1
    with pytest.raises(
        ValueError, match=r"data\['segments'\]\['lengths'\] must be positive and add up"
    ):
        Anchor.from_dict(broken)
    broken = json.loads(anchor.to_json())
    broken["predicates"][0]["feature"] = 999
    with pytest.raises(ValueError, match="names superpixel 999"):
        Anchor.from_dict(broken)
    broken = json.loads(anchor.to_json())
    broken["predicates"][0]["value"] = "x"
    with pytest.raises(ValueError, match="must be null for op 'kept'"):
        Anchor.from_dict(broken)
    with pytest.raises(ValueError, match="needs the explained image"):
        back.plot()
    assert pickle.loads(pickle.dumps(anchor)) == anchor


def test_a_superpixel_map_read_back_cannot_ask_for_gigabytes():
    """A few bytes of JSON (one run over 32,767 x 32,767 pixels) must not allocate the 4 GB
    map: the pixels are bounded before anything is built, with the field named."""
    anchor = AnchorExplainer(planted, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    for cls, data in ((Anchor, anchor.to_dict()), (LimeExplanation, None)):
        if data is None:
            e = LimeExplainer(planted, n_samples=100, random_state=0).fit(REFERENCE)
            data = e.explain(IMAGE)[0].to_dict()
        data["segments"] = {"shape": [32767, 32767], "values": [0], "lengths": [32767**2]}
        with pytest.raises(ValueError, match=r"data\['segments'\]\['shape'\] .*pixels"):
            cls.from_dict(data)


def test_lime_json_round_trip():
    e = LimeExplainer(planted, n_samples=200, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    back = LimeExplanation.from_json(e.to_json())
    assert isinstance(back, ImageLimeExplanation) and back == e
    np.testing.assert_array_equal(back.mask(2), e.mask(2))


def test_html_is_an_inline_png_escaped_without_scripts():
    pytest.importorskip("matplotlib")
    anchor = AnchorExplainer(planted, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    page = anchor._repr_html_()
    assert "data:image/png;base64," in page and "<script" not in page.lower()
    assert "superpixel" in page
    e = LimeExplainer(planted, n_samples=200, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    assert "data:image/png;base64," in e._repr_html_()
    assert "<script" not in e._repr_html_().lower()


def test_plots_dim_outside_the_anchor_and_outline_lime():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    anchor = AnchorExplainer(planted, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    ax = anchor.plot()
    shown = ax.get_images()[0].get_array()
    inside, outside = anchor.mask, ~anchor.mask
    # dimmed to a quarter outside, as it is inside (up to the outline)
    assert np.asarray(shown)[outside].mean() == pytest.approx(0.25 * IMAGE[0][outside].mean())
    assert np.asarray(shown)[inside].mean() > 0.3
    e = LimeExplainer(planted, n_samples=200, random_state=0).fit(REFERENCE).explain(IMAGE)[0]
    ax = e.plot(n_features=2)
    picture = np.asarray(ax.get_images()[0].get_array())
    green = (picture[..., 1] > 0.7) & (picture[..., 0] < 0.1) & (picture[..., 2] < 0.1)
    assert green[e.mask(1)].any() and not green[~e.mask(2, positive_only=False)].any()
    # read back from JSON, the image is set again as the error says: a batch of one is the
    # image, an image of another size is refused with its shape
    back = Anchor.from_json(anchor.to_json())
    back.instance = IMAGE
    np.testing.assert_array_equal(back.plot().get_images()[0].get_array(), shown)
    back.instance = IMAGE[0, :16]
    with pytest.raises(ValueError, match=r"instance has shape \(16, 32, 3\).*32 x 32"):
        back.plot()
    plt.close("all")


def test_no_anchor_warns_for_an_image():
    def corners(X):  # 1 while both corner cells are the image's own: two superpixels needed
        X = np.asarray(X)
        own = (X[:, 0, 0] == IMAGE[0, 0, 0]).all(-1) & (X[:, 31, 31] == IMAGE[0, 31, 31]).all(-1)
        p = own.astype(float)
        return np.column_stack([1 - p, p])

    sampler = ImageSampler(segmentation=grid, fill=0.0)
    explainer = AnchorExplainer(corners, sampler=sampler, max_anchor_size=1, random_state=0)
    with pytest.warns(NoAnchorWarning, match="no rule reached precision"):
        anchor = explainer.fit(REFERENCE).explain(IMAGE)[0]
    assert not anchor.is_anchor and len(anchor.superpixels) == 1
    assert anchor.superpixels[0] in (0, 15)
    full = AnchorExplainer(corners, sampler=sampler, random_state=0).fit(REFERENCE)
    assert full.explain(IMAGE)[0].superpixels == [0, 15]


def test_missing_scikit_image_is_said_at_fit(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "skimage", None)
    with pytest.raises(ImportError, match=r"pip install 'skanchors\[image\]'"):
        AnchorExplainer(planted).fit(REFERENCE)
    # a callable segmentation needs no scikit-image
    explainer = AnchorExplainer(planted, sampler=ImageSampler(segmentation=grid), random_state=0)
    assert explainer.fit(REFERENCE).explain(IMAGE)[0].superpixels == [6]


@pytest.mark.parametrize("fill", ["mean", "reference"])
def test_many_superpixels_kept_as_bits(fill):
    # 64 superpixels: the search keeps its samples as bits and draws them again for the
    # examples. The patch is 4 of them; the model needs 3 (contrast 3/4 of the full one)
    sampler = ImageSampler(segmentation=functools.partial(grid, step=4), fill=fill)
    explainer = AnchorExplainer(planted, sampler=sampler, random_state=0).fit(REFERENCE)
    anchor = explainer.explain(IMAGE)[0]
    assert anchor.is_anchor and len(anchor.superpixels) == 3
    assert set(anchor.superpixels) <= {20, 21, 28, 29}
    hold = np.asarray(anchor.examples_hold)
    assert hold.shape[1:] == (H, W, 3) and planted(hold)[:, 1].all()
    assert explainer.perturbation_precision(anchor, 1000, random_state=0) >= 0.95
