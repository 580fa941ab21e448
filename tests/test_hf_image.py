"""HFImageClassifier on tiny ViT models built on the spot (offline, loaded by path)."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from hf_models import build_vit  # noqa: E402

from skanchors import AnchorExplainer, HFImageClassifier, LimeExplainer  # noqa: E402


@pytest.fixture(scope="module")
def vit(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield build_vit(tmp_path_factory.mktemp("vit") / "vit")
    torch.set_num_threads(threads)


def _images(n, seed=0, size=32):
    return np.random.default_rng(seed).integers(0, 256, size=(n, size, size, 3), dtype=np.uint8)


def test_probabilities_match_the_model_and_do_not_depend_on_batching(vit):
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    clf = HFImageClassifier(vit, batch_size=2).fit()
    assert clf.classes_.tolist() == ["cat", "dog", "bird"]
    X = _images(5)
    proba = clf.predict_proba(X)
    assert proba.shape == (5, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    model = AutoModelForImageClassification.from_pretrained(vit).eval()
    inputs = AutoImageProcessor.from_pretrained(vit)(images=list(X), return_tensors="pt")
    with torch.inference_mode():
        expected = torch.softmax(model(**inputs).logits, -1).numpy()
    np.testing.assert_allclose(proba, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(
        HFImageClassifier(vit, batch_size=32).predict_proba(X), proba, atol=1e-6
    )
    assert clf.predict(X).tolist() == clf.classes_[proba.argmax(1)].tolist()
    # floats in [0, 1] are not rescaled twice
    np.testing.assert_allclose(clf.predict_proba(X / 255.0), proba, atol=1e-5)
    # each image's scale is its own: a float image in [0, 1] is read the same way whatever
    # else is in its batch (a batch that also holds a 0-255 image once rescaled it again)
    mixed = np.stack([X[0] / 255.0, X[1].astype(float)])
    np.testing.assert_allclose(
        HFImageClassifier(vit, batch_size=2).predict_proba(mixed), proba[:2], atol=1e-5
    )


def test_pickles_by_path_and_takes_grey_images(vit):
    clf = HFImageClassifier(vit, device="cpu")
    X = _images(3, 1)
    proba = clf.predict_proba(X)
    blob = pickle.dumps(clf)
    assert len(blob) < 2000  # the weights stay on disk
    np.testing.assert_allclose(pickle.loads(blob).predict_proba(X), proba, atol=1e-6)
    grey = X.mean(axis=3).astype(np.uint8)
    np.testing.assert_allclose(
        clf.predict_proba(grey), clf.predict_proba(np.repeat(grey[..., None], 3, -1)), atol=1e-6
    )


def test_errors_name_the_argument(vit):
    clf = HFImageClassifier(vit)
    with pytest.raises(ValueError, match="X must be images .*got text"):
        clf.predict_proba(["a photo of a cat"])
    with pytest.raises(ValueError, match="X has images with 2 channel"):
        clf.predict_proba(_images(2)[..., :2])
    # one colour image, not in a batch, is not 32 grey images of 32 x 3 pixels
    with pytest.raises(ValueError, match=r"X has shape \(32, 32, 3\).*single image.*X\[None\]"):
        clf.predict_proba(_images(1)[0])
    assert clf.predict_proba(_images(2)[..., 0]).shape == (2, 3)  # grey images still are
    with pytest.raises(FileNotFoundError, match="model='/no/such/vit'"):
        HFImageClassifier("/no/such/vit").fit()
    explainer = AnchorExplainer(clf)
    with pytest.raises(ValueError, match="X must be images .*got text"):
        explainer.fit(["a photo of a cat", "a dog"])


def test_a_plain_torch_module(vit):
    class Bright(torch.nn.Module):  # class 1 when the top-left quarter is bright
        def forward(self, x):
            s = x[:, :, :16, :16].mean(dim=(1, 2, 3)) - 0.5
            return torch.stack([-20 * s, 20 * s], dim=1)

    clf = HFImageClassifier(Bright())
    X = np.zeros((2, 32, 32, 3), dtype=np.uint8)
    X[1, :16, :16] = 255
    np.testing.assert_allclose(clf.predict_proba(X).argmax(1), [0, 1])
    assert clf.classes_.tolist() == [0, 1]


def test_explainers_on_a_vit(vit):
    clf = HFImageClassifier(vit, batch_size=64)
    X = _images(4, 2)
    explainer = AnchorExplainer(clf, random_state=0).fit(X)
    anchor = explainer.explain(X[:1])[0]
    assert anchor.prediction in clf.classes_
    assert anchor.n_model_calls >= 1 and anchor.mask.shape == (32, 32)
    if anchor.is_anchor:
        assert explainer.perturbation_precision(anchor, 300, random_state=0) >= 0.85
    e = LimeExplainer(clf, n_samples=100, random_state=0).fit(X).explain(X[:1])[0]
    assert e.prediction in clf.classes_ and e.mask(3).shape == (32, 32)
