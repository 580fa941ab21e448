"""LIME's per-row fit: Algorithm 1 of Ribeiro, Singh and Guestrin (KDD 2016) on one instance.

Draw the perturbations and their interpretable representation ``z'`` (step 1), predict them
with the model in as few calls as memory allows (step 2), weight them by the exponential
kernel (step 3), then fit the surrogate (step 4, :mod:`skanchors._lime_surrogate`) and return
a :class:`~skanchors.LimeExplanation`. :class:`~skanchors.LimeExplainer` runs it on chunks of
rows, in parallel; the module docstring of :mod:`skanchors.lime` describes each step.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._base import concat_rows
from ._lime_explanation import LimeExplanation
from ._lime_surrogate import _select, _surrogate, _weighted_r2
from ._validation import check_memory, check_probabilities
from .samplers.independent import sample_independent

# Perturbations predicted per model call: one call unless n_samples is huge...
_MAX_ROWS_PER_CALL = 20_000
# ... or the perturbed documents hold more words than this in all (a call's texts are decoded
# only when it is made).
_MAX_WORDS_PER_CALL = 1 << 24
# The LIME package's default kernel, sqrt(exp(-D^2 / w^2)) with w = 0.75 * sqrt(n_features)
# for tables and 25 for text (whose distance is the cosine distance times 100), is the paper's
# exp(-D^2 / sigma^2) with sigma = w * sqrt(2).
_TABULAR_WIDTH_FACTOR = 0.75 * math.sqrt(2.0)
_TEXT_WIDTH = 25.0 * math.sqrt(2.0)
# ... and 0.25 for images, whose distance is the cosine distance itself.
_IMAGE_WIDTH = 0.25 * math.sqrt(2.0)
# Pixel values (H * W * C per image) decoded per model call for images (16 MB of float32:
# a larger batch of images ran slower per image through a memory-bound model).
_MAX_PIXELS_PER_CALL = 1 << 22


def _components(instance):
    """Group the instance's predicates into interpretable features (one per position)."""
    groups = {}
    for i, p in enumerate(instance.predicates):
        key = ("pos", p.position) if p.position is not None else ("pred", i)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _own_input(sampler, instance, row):
    """The explained instance in the form ``decode`` produces, so it joins the model call."""
    from .samplers.text import TextInstance

    if isinstance(instance, TextInstance) or sampler.modality == "image":
        return np.full((1, instance.n_predicates), -1, dtype=np.int32), None
    codes = getattr(instance, "x_codes", None)
    if codes is not None:
        return np.asarray(codes)[None, :], None
    return None, sampler.to_model_input(row)


def _predict_documents(model, instance, keys, cells=None):
    """Predict the documents (or images) of rows ``keys`` of a text (image) instance in as few
    calls as memory allows (decoded call by call): (proba, n_calls). ``cells``: the pixel
    values of one image."""
    limit = _MAX_WORDS_PER_CALL // max(instance.n_predicates, 1)
    if cells is not None:
        limit = _MAX_PIXELS_PER_CALL // max(cells, 1)
    step = max(1, min(_MAX_ROWS_PER_CALL, limit))
    parts = [
        model.predict_proba(instance.decode(keys[lo : lo + step]))
        for lo in range(0, len(keys), step)
    ]
    return (parts[0] if len(parts) == 1 else np.vstack(parts)), len(parts)


def _predict(model, inputs):
    """Predict ``inputs`` in as few calls as memory allows: (proba, n_calls)."""
    n = len(inputs)
    if n <= _MAX_ROWS_PER_CALL:
        return model.predict_proba(inputs), 1
    import pandas as pd

    parts = []
    for start in range(0, n, _MAX_ROWS_PER_CALL):
        stop = min(start + _MAX_ROWS_PER_CALL, n)
        if isinstance(inputs, pd.DataFrame):
            parts.append(model.predict_proba(inputs.iloc[start:stop]))
        else:
            parts.append(model.predict_proba(inputs[start:stop]))
    return np.vstack(parts), len(parts)


def _explain_chunk(sampler, model, rows, targets, seeds, params, verbose):
    out = []
    for row, target, seed in zip(rows, targets, seeds):
        e = _explain_one(sampler, model, row, int(target), int(seed), params)
        if verbose:
            top = ", ".join(f"{n} {w:+.3f}" for n, w in e.as_list()[:3])
            print(f"[skanchors] LIME R^2={e.score:.2f}: {top} ({e.wall_time:.2f} s)", flush=True)
        out.append(e)
    return out


def _explain_one(sampler, model, row, target, seed, params):
    start = time.perf_counter()
    instance = sampler.instance(row)
    rng = np.random.default_rng(seed)
    n = params["n_samples"]
    # (a lower bound: the Z matrix, the holds and the keys of every perturbation)
    width = max(instance.n_predicates, len(getattr(instance, "_values", ())), 1)
    check_memory("n_samples", n, 13 * n * width, "one explanation's perturbations")
    if params["independent"]:
        keys, holds = sample_independent(instance, n, rng)
    else:  # documents (words masked independently) or sampling="joint"
        keys, holds = instance.sample((), n, rng)
    groups = _components(instance)
    m = len(groups)
    # z' of each perturbation: an interpretable feature is present when all its predicates
    # hold. With more features than samples (a long document's words) Z is kept as booleans
    # and the surrogate is fitted without (features x features) matrices (_lime_wide).
    wide = m > n + 1
    Z = np.ones((n + 1, m), dtype=bool if wide else float)
    holds = np.asarray(holds)
    if all(len(preds) == 1 for preds in groups):
        Z[1:] = holds[:, [preds[0] for preds in groups]]
    else:
        for c, preds in enumerate(groups):
            Z[1:, c] = holds[:, preds].all(axis=1)
    del holds
    own_keys, own_input = _own_input(sampler, instance, row)
    image = params["image"]
    if params["text"] or image:  # (decoded call by call: a long document's are large)
        keys = np.vstack([own_keys.astype(keys.dtype), keys])
        cells = instance.image.size if image else None
        if image:  # (a perturbation drawn twice is predicted once: its keys are its pixels)
            keys, inverse = np.unique(keys, axis=0, return_inverse=True)
        proba, n_calls = _predict_documents(model, instance, keys, cells)
        n_inputs = len(keys)
        if image:
            proba = proba[inverse.ravel()]
    else:
        if own_keys is not None:
            inputs = instance.decode(np.vstack([own_keys, keys]))
        else:
            inputs = concat_rows([own_input, instance.decode(keys)])
        proba, n_calls = _predict(model, inputs)
        n_inputs = len(inputs)
    sums_to_1 = check_probabilities(proba, "LIME fits a linear model to the probability")
    if target < 0:
        target = int(np.argmax(proba[0]))
    y = proba[:, target]
    # The kernel pi_x(z) = exp(-D^2 / sigma^2) (paper, section 3.3).
    present = Z.sum(axis=1)
    if params["text"] or image:
        with np.errstate(invalid="ignore", divide="ignore"):
            cosine = np.where(present > 0, np.sqrt(present / max(m, 1)), 0.0)
        distance = (1.0 if image else 100.0) * (1.0 - cosine)
        default = _IMAGE_WIDTH if image else _TEXT_WIDTH
        width = default if params["kernel_width"] is None else params["kernel_width"]
    else:
        distance = np.sqrt(np.maximum(m - present, 0.0))
        default = _TABULAR_WIDTH_FACTOR * math.sqrt(max(m, 1))
        width = default if params["kernel_width"] is None else params["kernel_width"]
    width = float(width)
    with np.errstate(over="ignore"):  # a tiny width: distance / width = inf, weight 0
        w = np.exp(-np.square(distance / width))  # (width**2 overflowed at 1e300)
    differ = distance > 0
    if differ.any() and not w[differ].any():
        raise ValueError(
            f"kernel_width={params['kernel_width']!r} gives every perturbation that differs "
            "from the instance a weight of 0 (exp(-distance^2 / width^2) underflows): the "
            "surrogate would be fitted to the instance alone. Use a wider kernel (None: LIME's "
            "default)."
        )
    selected, method = _select(Z, y, w, params["n_features"], params["feature_selection"])
    weights = np.zeros(m)
    if selected:
        # The LIME package's surrogate: Ridge(alpha=1) weighted by the kernel.
        coef, intercept, fitted = _surrogate(Z, selected, y, w)
        weights[selected] = coef
        score = _weighted_r2(y, fitted, w)
        local = intercept + float(coef.sum())
    else:
        # no feature selected: the surrogate is the weighted mean, scored by the same rule
        # (a constant target is fitted exactly, R^2 1, whichever selection ran)
        intercept = local = float(np.average(y, weights=w))
        score = _weighted_r2(y, np.full(len(y), intercept), w)
    explanation = LimeExplanation(
        features=tuple(tuple(instance.predicates[i] for i in preds) for preds in groups),
        weights=weights,
        selected=tuple(int(j) for j in selected),
        intercept=intercept,
        score=score,
        prediction=target,
        class_probability=float(proba[0, target]),
        local_prediction=local,
        kernel_width=width,
        feature_selection=method,
        n_samples=n,
        n_model_calls=n_calls,
        n_rows_predicted=n_inputs,
        wall_time=time.perf_counter() - start,
        instance=row,
    )
    # (the modality's own explanation: images get their segmentation)
    explanation = sampler.wrap_explanation(explanation, instance)
    explanation._sums_to_1 = sums_to_1  # (warned about by the caller, in this process)
    return explanation
