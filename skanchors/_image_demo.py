"""``skanchors demo --images``: the lecture's wolf-vs-husky lesson, on faces.

scikit-image ships 200 small grey pictures (``skimage.data.lfw_subset``: 100 faces, 100 other
things, 25 x 25 pixels). A model is trained where every face carries a bright square in its top
left corner (the "snow" of the wolves): it scores perfectly on pictures made like its training
data and fails on clean ones. Its anchors and LIME weights name the corner; those of a model
trained on clean pictures name the face.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

CUE = (slice(0, 6), slice(0, 6))  # the bright corner that leaks the label


def flatten(X):
    """Images (n, H, W) as rows of pixels, for a scikit-learn model."""
    return np.asarray(X, dtype=float).reshape(len(X), -1)


def stamp(images, which=None):
    """``images`` with the bright corner on those where ``which`` is True (all by default)."""
    images = np.array(images, dtype=float, copy=True)
    which = np.ones(len(images), dtype=bool) if which is None else np.asarray(which, dtype=bool)
    images[which, CUE[0], CUE[1]] = 1.0
    return images


def faces(random_state=0):
    """``(X_train, X_test, y_train, y_test)`` of the 200 pictures (1: face), and the clean and
    the leaky model (logistic regression on pixels; the leaky one trained with the cue)."""
    try:
        from skimage import data
    except ImportError as error:
        raise ImportError(
            "The image demo uses scikit-image's pictures: pip install 'skanchors[image]'."
        ) from error
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = data.lfw_subset()
    y = np.r_[np.ones(100, dtype=int), np.zeros(100, dtype=int)]
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=random_state, stratify=y
    )

    def model():
        return make_pipeline(FunctionTransformer(flatten), LogisticRegression(max_iter=2000))

    clean = model().fit(X_train, y_train)
    leaky = model().fit(stamp(X_train, y_train == 1), y_train)
    return (X_train, X_test, y_train, y_test), clean, leaky


def demo_images(args, out):
    """Explain a face for the leaky and the clean model; say where the anchors lie."""
    from . import AnchorExplainer, LimeExplainer
    from .samplers import ImageSampler

    (X_train, X_test, y_train, y_test), clean, leaky = faces(args.random_state)
    print(
        f"Faces (scikit-image's lfw_subset): {len(X_train)} training pictures of 25 x 25 "
        f"pixels, {len(X_test)} held out. The leaky model was trained with a bright corner on "
        "every face.",
        file=out,
    )
    print(
        f"  leaky model: accuracy {leaky.score(stamp(X_test, y_test == 1), y_test):.2f} on "
        f"held-out pictures made like its training data, {leaky.score(X_test, y_test):.2f} on "
        f"clean ones; the corner alone makes it call "
        f"{leaky.predict(stamp(X_test[y_test == 0])).mean():.0%} of the non-faces faces",
        file=out,
    )
    print(f"  clean model: accuracy {clean.score(X_test, y_test):.2f} on clean pictures", file=out)
    # Filled superpixels go black: a bright corner filled with its own mean colour would stay
    # bright, and hide the cue from the explanation.
    sampler = ImageSampler(fill=0.0)
    corner = np.zeros(X_test.shape[1:], dtype=bool)
    corner[CUE] = True
    pictures = {
        "leaky": (leaky, stamp(X_test[y_test == 1][:2]), stamp(X_train, y_train == 1)),
        "clean": (clean, X_test[y_test == 1][:2], X_train),
    }
    found = {}
    for name, (model, images, reference) in pictures.items():
        explainer = AnchorExplainer(
            model, sampler=sampler, threshold=args.threshold, random_state=args.random_state,
            n_jobs=args.n_jobs,
        ).fit(reference)  # fmt: skip
        lime = LimeExplainer(model, sampler=sampler, n_samples=1000, random_state=0)
        lime.fit(reference)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            anchors = explainer.explain(images)
        elapsed = time.perf_counter() - start
        explanations = lime.explain(images)
        print(f"\n{name} model, {len(images)} faces explained in {elapsed:.2f} s:", file=out)
        for i, (anchor, e) in enumerate(zip(anchors, explanations)):
            on_corner = anchor.mask[corner].mean() if anchor.superpixels else 0.0
            share = anchor.mask.mean()
            fresh = explainer.perturbation_precision(anchor, 1000, random_state=args.random_state)
            print(f"#{i}: {anchor}", file=out)
            print(
                f"    the anchor covers {share:.0%} of the picture and {on_corner:.0%} of the "
                f"corner; precision on 1,000 fresh perturbations {fresh:.3f}; "
                f"{anchor.n_rows_predicted} images predicted",
                file=out,
            )
            top = e.top_superpixels(1)
            inside = e.mask(1)[corner].sum() / max(e.mask(1).sum(), 1)
            print(
                f"    LIME's top superpixel {top}: {inside:.0%} of its pixels in the corner",
                file=out,
            )
        found[name] = (anchors, explanations)
    return found
