"""What the benchmark scripts share: their result files and what a report says about its run.

A run's per-row records are written as compact gzipped JSON (``PREFIX.json.gz``), a tenth of
the indented text, so that the committed results stay small; the ``.md`` next to it is the
report. :func:`read_json` reads either form, so a plain ``PREFIX.json`` of an earlier run still
works, and takes a prefix, a ``.json`` or a ``.json.gz`` path alike.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import math
import os
import platform
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def prefix_of(path):
    """``path`` without its ``.json`` / ``.json.gz`` / ``.md`` suffix, as a string."""
    text = str(path)
    for suffix in (".json.gz", ".json", ".md"):
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def read_json(path):
    """The JSON at ``path``: ``PREFIX.json.gz`` or ``PREFIX.json``, whichever exists."""
    prefix = prefix_of(path)
    for candidate in (Path(path), Path(prefix + ".json.gz"), Path(prefix + ".json")):
        if candidate.is_file():
            if candidate.name.endswith(".gz"):
                with gzip.open(candidate, "rt", encoding="utf-8") as fh:
                    return json.load(fh)
            return json.loads(candidate.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"no {prefix}.json.gz or {prefix}.json")


def write_json(prefix, obj, default=None):
    """Write ``obj`` to ``PREFIX.json.gz`` (compact, no time stamp: the same results give the
    same bytes) and return that path."""
    path = Path(prefix_of(prefix) + ".json.gz")
    text = json.dumps(obj, separators=(",", ":"), default=default)
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return path


def json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def versions():
    out = {"python": platform.python_version()}
    for dist in (
        "numpy",
        "scipy",
        "scikit-learn",
        "pandas",
        "numba",
        "alibi",
        "anchor-exp",
        "lime",
    ):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    try:
        out["skanchors"] = importlib.metadata.version("skanchors")
    except importlib.metadata.PackageNotFoundError:
        out["skanchors"] = None
    # The library moves fast: say which commit (and whether the tree had local changes).
    try:
        repo = HERE.parent
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # Local changes to the code that runs (not to result files a previous run wrote).
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no", "--"]
            + ["skanchors", "bench/*.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        out["skanchors commit"] = head + (" + local changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


def machine():
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "threads": os.environ.get("OMP_NUM_THREADS"),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def fmt(v, spec=".3g"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return format(v, spec)


# The options of skanchors' TabularSampler, which configurations may name among the explainer's
# (``perturbation=replace,beam_size=2``): they go to the sampler, where the explainer takes them.
SAMPLER_OPTIONS = ("discretizer", "categorical_features", "perturbation", "bounds")


def with_sampler(params):
    """``params`` for ``skanchors.AnchorExplainer``, with the sampler's options given as
    ``sampler=TabularSampler(...)`` (the explainer's keywords for them are deprecated)."""
    from skanchors.samplers import TabularSampler

    params = dict(params)
    options = {k: params.pop(k) for k in SAMPLER_OPTIONS if k in params}
    if options:
        if params.get("sampler") is not None:
            raise ValueError(f"{sorted(options)} and a sampler: set them on the sampler")
        params["sampler"] = TabularSampler(**options)
    return params


# The global anchor aggregator's configurations are written with its flat options (the seed's
# names); they go to the objects that hold them now.
_WORD_OPTIONS = {
    "stop_words": "stop_words",
    "min_count": "min_count",
    "lowercase": "lowercase",
    "candidate_filtering": "filtering",
}
_SCHEDULE_OPTIONS = {"omega": "omega", "min_threshold": "minimum"}


def global_anchor_aggregator(model, **params):
    """``skanchors.GlobalAnchorAggregator(model, ...)`` from a configuration in the flat
    options (``adaptive_threshold``, ``candidate_filtering``, ``min_count``, ``shared_pool``,
    ...): a ``WordFilter``, an ``AdaptiveThreshold`` and the naive test's private switch."""
    from skanchors import GlobalAnchorAggregator
    from skanchors.aggregation import AdaptiveThreshold, WordFilter

    params = dict(params)
    words = {new: params.pop(old) for old, new in _WORD_OPTIONS.items() if old in params}
    schedule = {new: params.pop(old) for old, new in _SCHEDULE_OPTIONS.items() if old in params}
    adaptive = params.pop("adaptive_threshold", True)
    if isinstance(adaptive, str):
        schedule["mode"] = adaptive
    elif not adaptive:
        schedule["omega"] = 0.0
    shared_pool = params.pop("shared_pool", True)
    if words:
        params["vocabulary"] = WordFilter(**words)
    if schedule:
        params["threshold"] = AdaptiveThreshold(params.pop("threshold", 0.95), **schedule)
    agg = GlobalAnchorAggregator(model, **params)
    agg._shared_pool = bool(shared_pool)  # the naive per-token test: an internal
    return agg
