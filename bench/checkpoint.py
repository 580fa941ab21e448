"""Save and load time of a global aggregator's checkpoint: the data format against the pickle.

The checkpoint is saved after every batch, so its save time is paid once per batch. This
measures, for a state of 1,000, 10,000 and 100,000 words (two classes) and a history of
2,000 batches (100,000 documents in batches of 50), the time to save and to load:

- ``data`` (format 6, what skanchors writes): ``_save_checkpoint`` (a zip of state.json and
  one .npy per array, written to a temporary file and moved into place) and
  ``_load_checkpoint`` (read and every field checked);
- ``pickle`` (format 5, what skanchors wrote before issue 48): the same state as one dict
  pickled with ``pickle.HIGHEST_PROTOCOL`` to a temporary file moved into place, and loaded
  with ``pickle.load`` and put in place with only the parameters and classes compared -- the
  code of commit 332870d, reproduced here.

Each figure is the median of ``--repeats`` (15) runs in this process, with the file on the
folder given by ``--folder`` (default: a temporary folder). Run::

    PYTHONPATH=. python bench/checkpoint.py           # writes bench/results_checkpoint.md/.json.gz
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from _common import write_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = ["win cash now", "see you at lunch", "win a prize", "lunch later"] * 5
N_BATCHES = 2000


def model(texts):
    p = np.array([0.9 if "win" in t.split() else 0.1 for t in texts])
    return np.column_stack([1 - p, p])


def _aggregator(kind, path=None):
    from skanchors import GlobalAnchorAggregator, GlobalLimeAggregator
    from skanchors.aggregation import WordFilter

    words = WordFilter(min_count=1)
    if kind == "anchor":
        return GlobalAnchorAggregator(
            model, k=3, vocabulary=words, batch_size=5, random_state=0, checkpoint=path
        )
    return GlobalLimeAggregator(
        model, k=3, vocabulary=words, n_samples=50, batch_size=5, random_state=0, checkpoint=path
    )


def _state(kind, n_words, seed=0):
    """A fitted aggregator grown to ``n_words`` words with random counts and a long history."""
    agg = _aggregator(kind).fit(DOCS)
    rng = np.random.default_rng(seed)
    agg._add_words([f"word{i}" for i in range(n_words - len(agg._words))])
    for name in agg._checkpoint_arrays:
        a = getattr(agg, name)
        if a.dtype.kind == "f":
            values = rng.normal(size=a.shape)
            setattr(agg, name, np.abs(values) if name not in agg._checkpoint_signed else values)
        else:
            setattr(agg, name, rng.integers(0, 50, size=a.shape).astype(a.dtype))
    agg.history_ = [dict(agg._history_entry(), n_documents=50 * i) for i in range(N_BATCHES)]
    agg._done = Counter({f"{i:032x}": 1 for i in range(N_BATCHES)})
    agg._call_done = Counter(agg._done)
    return agg


def _old_save(agg, path):
    """skanchors 332870d's _save_checkpoint (format 5, a pickle)."""
    state = dict(
        version=5,
        kind=type(agg).__name__,
        params=agg._state_params(),
        classes=agg.classes_.tolist(),
        words=list(agg._words),
        arrays={name: getattr(agg, name) for name in agg._checkpoint_arrays},
        counters={name: getattr(agg, name) for name in agg._checkpoint_counters},
        done=dict(agg._done),
        current=dict(agg._call_done),
        seed_base=agg._seed_base,
        call_start=agg._call_start,
        history=list(agg.history_),
    )
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _old_load(agg, path):
    """skanchors 332870d's _load_checkpoint (format 5: unpickled, the parameters and classes
    compared, nothing else checked), into the fresh aggregator ``agg``."""
    with open(path, "rb") as fh:
        state = pickle.load(fh)  # (this benchmark's own file)
    assert state["version"] == 5 and state["kind"] == type(agg).__name__
    mine = agg._state_params()
    assert not {k: v for k, v in state["params"].items() if mine.get(k) != v}
    assert state["classes"] == agg.classes_.tolist()
    agg._words = list(state["words"])
    agg._stop_cache = None
    agg._word_index = None
    agg._index = {w: i for i, w in enumerate(agg._words)}
    for attr, value in state["arrays"].items():
        setattr(agg, attr, np.asarray(value))
    for attr, value in state["counters"].items():
        setattr(agg, attr, value)
    agg.history_ = list(state["history"])
    agg._done = Counter(state["done"])
    agg._replay = Counter(state["done"])
    agg._replay_current = Counter(state["current"])
    agg._seed_base = state["seed_base"]
    agg._resume_from = state["call_start"]
    agg._loaded()


def _median_ms(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def measure(kind, n_words, folder, repeats):
    agg = _state(kind, n_words)
    new, old = os.path.join(folder, f"{kind}.ckpt"), os.path.join(folder, f"{kind}.pkl")
    agg.checkpoint = new
    out = {"kind": kind, "n_words": n_words, "n_batches": N_BATCHES}
    out["data_save_ms"] = _median_ms(agg._save_checkpoint, repeats)
    out["pickle_save_ms"] = _median_ms(lambda: _old_save(agg, old), repeats)
    out["data_bytes"], out["pickle_bytes"] = os.path.getsize(new), os.path.getsize(old)
    fresh = _aggregator(kind).fit(DOCS[:5])
    fresh.checkpoint = new
    out["data_load_ms"] = _median_ms(fresh._load_checkpoint, repeats)
    before = _aggregator(kind).fit(DOCS[:5])
    out["pickle_load_ms"] = _median_ms(lambda: _old_load(before, old), repeats)
    for loaded in (fresh, before):  # what was read back is what was saved
        for name in agg._checkpoint_arrays:
            assert np.array_equal(getattr(loaded, name), getattr(agg, name)), name
        assert loaded._words == agg._words and loaded.history_ == agg.history_
    return out


def _report(rows, args):
    import skanchors

    lines = [
        "# Checkpoint save and load time: data format (6) against the pickle (5)",
        "",
        "A state of `n_words` words x 2 classes with random counts, a history and batch keys "
        f"of {N_BATCHES:,} batches; median of {args.repeats} runs, milliseconds. `data`: "
        "skanchors' checkpoint (a zip of state.json and .npy arrays, every field checked on "
        "load); `pickle`: the format of commit 332870d (one pickled dict; on load only the "
        "parameters and classes compared). Load: the file read and put in place in a fresh "
        "aggregator. "
        "The save is paid once per batch.",
        "",
        "| aggregator | words | save data | save pickle | load data | load pickle | "
        "size data | size pickle |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['n_words']:,} | {r['data_save_ms']:.1f} | "
            f"{r['pickle_save_ms']:.1f} | {r['data_load_ms']:.1f} | {r['pickle_load_ms']:.1f} | "
            f"{r['data_bytes'] / 1e6:.2f} MB | {r['pickle_bytes'] / 1e6:.2f} MB |"
        )
    lines += [
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; Python "
        f"{platform.python_version()}, numpy {np.__version__}, skanchors {skanchors.__version__}; "
        f"files in {args.folder or 'a temporary folder'}.",
        "",
        f"Command: `{' '.join(['PYTHONPATH=. python bench/checkpoint.py', *sys.argv[1:]])}`",
        "",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--words", default="1000,10000,100000")
    parser.add_argument("--folder", default=None)
    parser.add_argument("--output", default=os.path.join(HERE, "results_checkpoint"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        rows = []
        for kind in ("anchor", "lime"):
            for n in (int(w) for w in args.words.split(",")):
                rows.append(measure(kind, n, folder, args.repeats))
                print(json.dumps(rows[-1]), flush=True)
    report = _report(rows, args)
    print(report)
    if args.output:
        with open(args.output + ".md", "w") as fh:
            fh.write(report)
        write_json(args.output, {"rows": rows, "repeats": args.repeats, "argv": sys.argv[1:]})


if __name__ == "__main__":
    main()
