"""Images: skanchors' anchors and LIME against alibi ``AnchorImage`` and lime's
``LimeImageExplainer``, on the same model, images and superpixels.

Run with the peers venv (alibi, lime, scikit-image)::

    PYTHONPATH=. /work/peers/bin/python bench/images.py [--quick] [--output PREFIX]

Data: scikit-image's ``lfw_subset`` (100 faces, 100 other pictures, 25 x 25 grey, repeated
over three channels, float32 in [0, 1]), split 70/30 (stratified, seed 0); every face of the
training part gets a bright 6 x 6 corner, and a logistic regression on the pixels learns it
(the demo's "leaky" model, a real model with a real shortcut); a second size repeats each
pixel 4 x 4 (100 x 100 pictures, the model trained on those). Explained: the first 10 faces
and 10 non-faces of the held-out part, each with the corner (so every one is predicted a face
through the corner, and the anchor has something to find) and without it.

Every explainer gets the same superpixels (scikit-image's SLIC with skanchors' defaults,
given to each as the same callable) and the same perturbations: a superpixel outside the rule
is kept with probability 1/2, else filled.

- Anchors: filled from a random background image per perturbation (alibi's
  ``images_background``; skanchors' ``fill="reference"``), the 140 training pictures without
  corners; threshold 0.95, delta 0.1, each package's default beam (1 for both) and batch
  size (alibi 100, skanchors ``batch_size="auto"``: 50 for images). Fresh precision: the
  model's agreement with the anchored class on 2,000 new draws from the rule's distribution
  (the same sampler for both packages' rules). "Distinct": how many different images were
  predicted for one explanation (alibi predicts a perturbation drawn again again; skanchors
  predicts each distinct perturbation once, and two perturbations may still look alike: a
  filled superpixel that shows what the kept one would).
- LIME: superpixels that are not kept turn black (lime's ``hide_color=0``, skanchors'
  ``fill=0.0``), 1,000 samples, the explained class only; lime at its default
  ``batch_size=10`` and with one batch of all samples.

A counter around the model gives model calls, images predicted and the seconds inside the
model. Writes ``bench/results_images.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
from _common import machine, versions  # noqa: E402

# bench/catalogue.py would shadow the catalogue package that alibi's spacy imports
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


class Counting:
    """The model with a counter of calls, images, distinct images and seconds (the time spent
    hashing images to count the distinct ones is kept apart, and left out of the timings)."""

    def __init__(self, model):
        self.model = model
        self.reset()

    def reset(self):
        self.calls = self.images = 0
        self.seconds = self.hashing = 0.0
        self.seen = set()

    def __call__(self, X):
        start = time.perf_counter()
        X = np.asarray(X)
        out = self.model.predict_proba(X)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.images += len(X)
        start = time.perf_counter()
        self.seen.update(hashlib.blake2b(x.tobytes(), digest_size=16).digest() for x in X)
        self.hashing += time.perf_counter() - start
        return out


def flatten(X):
    return np.asarray(X, dtype=np.float32).reshape(len(X), -1)


def data(scale):
    from skimage import data as skdata
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = skdata.lfw_subset().astype(np.float32)
    if scale > 1:
        X = np.kron(X, np.ones((1, scale, scale), dtype=np.float32))
    X = np.repeat(X[..., None], 3, axis=-1)
    y = np.r_[np.ones(100, dtype=int), np.zeros(100, dtype=int)]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    side = 6 * scale

    def corner(images):
        images = images.copy()
        images[:, :side, :side] = 1.0
        return images

    leaky_tr = X_tr.copy()
    leaky_tr[y_tr == 1] = corner(X_tr[y_tr == 1])
    model = make_pipeline(FunctionTransformer(flatten), LogisticRegression(max_iter=3000))
    model.fit(leaky_tr, y_tr)
    chosen = np.r_[np.flatnonzero(y_te == 1)[:10], np.flatnonzero(y_te == 0)[:10]]
    plain = X_te[chosen]
    images = np.concatenate([corner(plain), plain])
    return model, X_tr, images


def segmenter():
    from skanchors._images import segment

    return lambda image: segment(np.asarray(image), "slic")


def fresh_precision(instance, model, superpixels, label, n=2000, seed=0):
    keys, _ = instance.sample(tuple(superpixels), n, np.random.default_rng(seed))
    return float(np.mean(model.predict_proba(instance.decode(keys)).argmax(1) == label))


def run_anchors(model, background, images, seg):
    from alibi.explainers import AnchorImage

    from skanchors import AnchorExplainer
    from skanchors.samplers import ImageSampler

    counter = Counting(model)
    sampler = ImageSampler(segmentation=seg, fill="reference")
    ours = AnchorExplainer(counter, sampler=sampler, random_state=0).fit(background)
    ours._own_cache_size = 0  # (this explainer's cache only, as bench/_peers.py sizes it)
    alibi = AnchorImage(
        counter, images.shape[1:], segmentation_fn=seg, images_background=background, seed=0
    )
    fitted = ImageSampler(segmentation=seg, fill="reference").fit(background)
    rows = []
    for i, image in enumerate(images):
        label = int(model.predict_proba(image[None]).argmax(1)[0])
        instance = fitted.instance(image)
        for package in ("skanchors", "alibi"):
            counter.reset()
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if package == "skanchors":
                    a = ours.explain(image[None])[0]
                    superpixels, precision, is_anchor = a.superpixels, a.precision, a.is_anchor
                else:
                    e = alibi.explain(image, threshold=0.95, delta=0.1, batch_size=100)
                    superpixels = sorted(int(s) for s in e.raw["feature"])
                    precision = float(np.atleast_1d(e.precision)[0])
                    is_anchor = precision >= 0.95
            seconds = time.perf_counter() - start - counter.hashing
            rows.append(
                dict(
                    image=i,
                    package=package,
                    seconds=seconds,
                    model_seconds=counter.seconds,
                    calls=counter.calls,
                    images=counter.images,
                    distinct=len(counter.seen),
                    size=len(superpixels),
                    n_superpixels=instance.n_predicates,
                    precision=precision,
                    is_anchor=bool(is_anchor),
                    fresh=fresh_precision(instance, model, superpixels, label, seed=i),
                )
            )
    return rows


def run_lime(model, reference, images, seg, n_samples):
    from lime import lime_image

    from skanchors import LimeExplainer
    from skanchors.samplers import ImageSampler

    counter = Counting(model)
    sampler = ImageSampler(segmentation=seg, fill=0.0)
    ours = LimeExplainer(counter, sampler=sampler, n_samples=n_samples, random_state=0)
    ours.fit(reference)
    theirs = lime_image.LimeImageExplainer(kernel_width=0.25, random_state=0)
    rows = []
    for i, image in enumerate(images):
        label = int(model.predict_proba(image[None]).argmax(1)[0])
        for package, batch in (("skanchors", None), ("lime", 10), ("lime, one batch", n_samples)):
            counter.reset()
            start = time.perf_counter()
            if batch is None:
                e = ours.explain(image[None])[0]
                top = e.top_superpixels(1, positive_only=False)
            else:
                exp = theirs.explain_instance(
                    image, counter, labels=(label,), top_labels=None, hide_color=0,
                    num_samples=n_samples, batch_size=batch, segmentation_fn=seg,
                    random_seed=i,
                )  # fmt: skip
                top = [int(exp.local_exp[label][0][0])]
            seconds = time.perf_counter() - start - counter.hashing
            rows.append(
                dict(
                    image=i,
                    package=package,
                    seconds=seconds,
                    model_seconds=counter.seconds,
                    calls=counter.calls,
                    images=counter.images,
                    distinct=len(counter.seen),
                    top=top,
                )  # fmt: skip
            )
    return rows


def _rounded(value):
    """Floats to 4 significant digits, for a small JSON file."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.4g}")
    return value


def summary(rows, packages, keys):
    out = {}
    for p in packages:
        mine = [r for r in rows if r["package"] == p]
        out[p] = {k: float(np.mean([r[k] for r in mine])) for k in keys}
        out[p]["n"] = len(mine)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 images, 25 px only")
    parser.add_argument("--output", default=str(HERE / "results_images"))
    args = parser.parse_args(argv)
    scales = (1,) if args.quick else (1, 4)
    seg = segmenter()
    results = {"cases": {}}
    for scale in scales:
        model, background, images = data(scale)
        if args.quick:
            images = images[[0, 10, 20, 30]]
        name = f"{25 * scale} px"
        print(f"[{name}] anchors on {len(images)} images", flush=True)
        anchors = run_anchors(model, background, images, seg)
        print(f"[{name}] LIME on {len(images)} images", flush=True)
        limes = run_lime(model, background, images, seg, 1000)
        a_keys = (
            "seconds", "model_seconds", "calls", "images", "distinct", "size", "precision",
            "fresh",
        )  # fmt: skip
        results["cases"][name] = dict(
            anchors=anchors,
            lime=limes,
            anchors_summary=summary(anchors, ("skanchors", "alibi"), a_keys + ("is_anchor",)),
            lime_summary=summary(
                limes,
                ("skanchors", "lime", "lime, one batch"),
                ("seconds", "model_seconds", "calls", "images", "distinct"),
            ),  # fmt: skip
            lime_same_top=float(
                np.mean(
                    [
                        a["top"] == b["top"]
                        for a, b in zip(
                            [r for r in limes if r["package"] == "skanchors"],
                            [r for r in limes if r["package"] == "lime"],
                        )
                    ]
                )
            ),
        )
    import skimage

    results["versions"] = {**versions(), "scikit-image": skimage.__version__}
    results["machine"] = machine()
    results["date"] = time.strftime("%Y-%m-%d", time.gmtime())
    text = json.dumps(_rounded(results), separators=(",", ":"), default=float)
    Path(args.output + ".json").write_text(text + "\n")
    write_report(results, args.output + ".md", " ".join(sys.argv[1:]))
    print(Path(args.output + ".md").read_text())


def write_report(results, path, argv):
    lines = [
        "# Images: anchors and LIME against alibi and lime",
        "",
        f"`PYTHONPATH=. /work/peers/bin/python bench/images.py {argv}`".replace(" `", "`"),
        "(see the docstring of `bench/images.py` for the protocol).",
        "",
        f"Run {results['date']}. Versions: "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items() if v is not None)
        + f". Machine: {results['machine']['cpu']}, {results['machine']['cores']} cores, "
        f"load average {results['machine']['load average']} at the end, one thread. Each "
        "image is explained by one package after the other (interleaved).",
        "",
    ]
    for name, case in results["cases"].items():
        s = case["anchors_summary"]
        ours, theirs = s["skanchors"], s["alibi"]
        lines += [
            f"## {name}: anchors (background fill), means over {ours['n']:.0f} images",
            "",
            "| package | s / image | of it in the model | model calls | images predicted "
            "| of them distinct | anchor size | reported precision | fresh precision | anchors |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for p, r in s.items():
            lines.append(
                f"| {p} | {r['seconds']:.3f} | {r['model_seconds']:.3f} | {r['calls']:.1f} | "
                f"{r['images']:.0f} | {r['distinct']:.0f} | {r['size']:.2f} | "
                f"{r['precision']:.3f} | {r['fresh']:.3f} | {r['is_anchor']:.0%} |"
            )
        lines += [
            "",
            f"skanchors is {theirs['seconds'] / ours['seconds']:.1f}x faster than alibi and "
            f"predicts {ours['images'] / theirs['images']:.2f} of its images, at a fresh "
            f"precision of {ours['fresh']:.3f} against {theirs['fresh']:.3f}.",
            "",
        ]
        s = case["lime_summary"]
        lines += [
            f"## {name}: LIME (black fill, 1,000 samples)",
            "",
            "| package | s / image | of it in the model | model calls | images predicted "
            "| of them distinct |",
            "|---|---|---|---|---|---|",
        ]
        for p, r in s.items():
            lines.append(
                f"| {p} | {r['seconds']:.3f} | {r['model_seconds']:.3f} | {r['calls']:.1f} | "
                f"{r['images']:.0f} | {r['distinct']:.0f} |"
            )
        lines += [
            "",
            f"skanchors is {s['lime']['seconds'] / s['skanchors']['seconds']:.1f}x faster than "
            f"lime at its default batch size and "
            f"{s['lime, one batch']['seconds'] / s['skanchors']['seconds']:.1f}x with one "
            f"batch; the top superpixel is the same as lime's on "
            f"{case['lime_same_top']:.0%} of the images.",
            "",
        ]
    Path(path).write_text("\n".join(lines))


if __name__ == "__main__":
    main()
