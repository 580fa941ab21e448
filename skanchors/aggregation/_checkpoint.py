"""The checkpoint file of the global aggregators: data only, never a pickle.

A checkpoint is one zip archive laid out as numpy's ``.npz``, its members stored uncompressed:

- ``state.json``: a JSON object with the format's name and version, the aggregator's class,
  the parameters it was made with (as :func:`~skanchors.aggregation._base._describe` writes
  them), the classes, the words (in the order of the arrays' rows), the running totals, the
  keys of the batches counted, the seed, the resume point and the history;
- one ``<name>.npy`` per count array of the state (numpy's array format, no object arrays).

Reading it runs no code of the file: the JSON is parsed with :mod:`json`, the arrays are read
with ``allow_pickle=False`` after their headers (dtype and shape) were checked against what the
aggregator expects (so no member takes more memory than its share of the file), and every
field is checked (types, shapes consistent with the words and classes, counts non-negative,
the parameters the same) before the state is used. Anything else (an old pickled checkpoint,
another file, a damaged or edited one) raises :class:`CheckpointError`, a ``ValueError``
naming the file and the field.

The file is written to a temporary file next to it and moved into place (``os.replace``), so
an interrupted save leaves the previous checkpoint whole.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import zipfile

import numpy as np

__all__ = ["CheckpointError", "load", "save"]

FORMAT = "skanchors checkpoint"
# 6: data only (a zip of state.json and .npy arrays). Formats 1-5 were pickles, which are
# never read: 5: the anchor aggregator's occurrences skipped by candidate filtering; 4: one
# format for both aggregators ("kind"), the sampler and max_documents compared, parameters
# described independently of the process, the seed and the interrupted call's start saved;
# 3: adaptive_threshold=True is the "confidence" mode; 2: blake2b batch keys, audit counts;
# 1: joblib.hash, no audit.
VERSION = 6
STATE = "state.json"
_FIELDS = (
    "format",
    "version",
    "kind",
    "params",
    "classes",
    "words",
    "counters",
    "done",
    "current",
    "seed_base",
    "call_start",
    "history",
)
_INT_MAX = 2**63 - 1  # the counts are int64 in the arrays; no running total is larger
_BATCH_KEY = re.compile(r"[0-9a-f]{32}")  # _batch_key: blake2b, 16 bytes, hex
_ADVICE = "delete it (the run then starts over) or give another checkpoint file"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be resumed from; the message names the file and why."""


# ------------------------------------------------------------------------------- writing
def _plain(value):
    """numpy scalars as Python numbers, for ``json.dumps``."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a checkpoint cannot hold {type(value).__name__} values")


def json_classes(classes):
    """The class labels as the checkpoint stores and compares them: JSON numbers and strings
    as they are, anything else by ``repr``."""
    out = []
    for c in np.asarray(classes).tolist():
        plain = (
            c is None
            or isinstance(c, (str, bool, int))
            or (isinstance(c, float) and math.isfinite(c))
        )
        out.append(c if plain else repr(c))
    return out


def save(path, state, arrays):
    """Write ``state`` (a dict of JSON values, without ``format`` and ``version``) and the
    ``arrays`` (name -> ndarray) to ``path`` as one checkpoint file, atomically."""
    text = json.dumps(
        {"format": FORMAT, "version": VERSION, **state},
        allow_nan=False,  # strict JSON: the reader refuses NaN and infinities
        separators=(",", ":"),
        default=_plain,
    )
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        # stored, not deflated: the counts are written after every batch
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            zf.writestr(STATE, text)
            for name, array in arrays.items():
                with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                    np.lib.format.write_array(fh, np.ascontiguousarray(array), allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


# ------------------------------------------------------------------------------- reading
class _Reader:
    """Reads one checkpoint file; every refusal names the file (and the field)."""

    def __init__(self, path, kind):
        self.path = os.fspath(path)
        self.kind = kind

    def fail(self, problem, advice=_ADVICE):
        return CheckpointError(f"checkpoint {self.path!r} {problem}; {advice}.")

    def bad(self, field, problem):
        return self.fail(f"is damaged or was not written by skanchors: {field} {problem}")

    # ------------------------------------------------------------------ the container
    def open(self):
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(8)
        except OSError as error:
            raise self.fail(f"could not be read ({type(error).__name__}: {error})") from None
        if not head:
            raise self.fail(f"could not be read as a {self.kind} state: the file is empty")
        if head[:1] == b"\x80":  # the PROTO opcode that starts a pickle (protocol 2 on)
            raise self.fail(
                "is a pickle, the format of checkpoints written before skanchors' checkpoint "
                f"format {VERSION} (or another pickled object): it is not loaded, because "
                "unpickling a file can run any code in it",
                "delete it and re-run (the run starts over), or give another checkpoint file",
            )
        if not head.startswith(b"PK"):
            raise self.fail(
                f"could not be read as a {self.kind} state: it is not a skanchors checkpoint "
                "(not a zip archive)"
            )
        try:
            zf = zipfile.ZipFile(self.path)
        except Exception as error:  # noqa: BLE001 - a damaged zip fails in many ways
            # (BadZipFile, EOFError, NotImplementedError for a garbled version, ...)
            raise self.fail(
                f"could not be read as a {self.kind} state: a damaged or truncated zip "
                f"archive ({error})"
            ) from None
        names = zf.namelist()
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            zf.close()
            raise self.bad("its members", f"{twice} appear more than once")
        for info in zf.infolist():
            # Written uncompressed: a member is no larger than the file, so that no member
            # expands into more memory than the file takes (a "zip bomb").
            if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
                zf.close()
                raise self.bad(
                    f"member {info.filename!r:.80}",
                    "is compressed (a checkpoint's members are stored uncompressed)",
                )
        return zf

    def member(self, zf, name):
        try:
            return zf.read(name)
        except Exception as error:  # noqa: BLE001 - a damaged member fails in many ways
            raise self.bad(f"member {name!r}", f"could not be read ({error})") from None

    # ------------------------------------------------------------------ state.json
    def state(self, zf):
        if STATE not in zf.namelist():
            raise self.fail(
                f"could not be read as a {self.kind} state: it is not a skanchors checkpoint "
                f"(no member {STATE!r})"
            )
        data = self.member(zf, STATE)
        try:
            state = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise self.bad(STATE, f"is not JSON ({type(error).__name__}: {error})") from None
        if not isinstance(state, dict):
            raise self.bad(STATE, f"holds a JSON {type(state).__name__}, not an object")
        if state.get("format") != FORMAT:
            raise self.fail(
                f"could not be read as a {self.kind} state: it is not a skanchors checkpoint "
                f"('format' is {state.get('format')!r}, not {FORMAT!r})"
            )
        version = state.get("version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise self.bad("'version'", f"must be an integer, got {version!r:.80}")
        if version != VERSION:
            raise self.fail(
                f"was written by another version of skanchors (format {version!r}; this one "
                f"reads format {VERSION})",
                "delete it and re-run (the run starts over), or give another checkpoint file",
            )
        if state.get("kind") != self.kind:
            saved = state.get("kind")
            raise self.fail(
                f"holds a {saved:.80} state, not a {self.kind} one"
                if isinstance(saved, str)
                else f"holds no aggregator's state ('kind' is {saved!r:.80})",
                "give another checkpoint file",
            )
        missing = [f for f in _FIELDS if f not in state]
        if missing:
            raise self.bad(STATE, f"lacks the field(s) {missing}")
        extra = sorted(set(state) - set(_FIELDS))
        if extra:
            raise self.bad(STATE, f"has unexpected field(s) {extra}")
        return state

    # ------------------------------------------------------------------ typed fields
    def integer(self, field, value, low=0, high=_INT_MAX):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.bad(field, f"must be an integer in [{low}, {high}], got {value!r:.80}")
        return value

    def real(self, field, value, low=-math.inf):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < low:
            span = "a finite number" if low == -math.inf else f"a finite number >= {low}"
            raise self.bad(field, f"must be {span}, got {value!r:.80}")
        return float(value) if isinstance(value, float) else value

    def mapping(self, field, value):
        if not isinstance(value, dict):
            raise self.bad(field, f"must be a JSON object, got {type(value).__name__}")
        return value

    def same_keys(self, field, value, expected):
        keys = set(self.mapping(field, value))
        if keys != set(expected):
            missing, extra = sorted(set(expected) - keys), sorted(keys - set(expected))
            raise self.bad(
                field,
                f"must have the keys {sorted(expected)} (missing {missing}, unexpected {extra})",
            )
        return value

    def batches(self, field, value):
        out = {}
        for key, count in self.mapping(field, value).items():
            if not _BATCH_KEY.fullmatch(key):
                raise self.bad(
                    field, f"must map batch keys (32 hex digits) to counts, got key {key!r:.80}"
                )
            out[key] = self.integer(f"{field}[{key!r}]", count, low=1)
        return out

    def words(self, value):
        """The words and their index (word -> row)."""
        if not isinstance(value, list):
            raise self.bad("'words'", f"must be a list of strings, got {type(value).__name__}")
        if set(map(type, value)) - {str}:
            i, w = next((i, w) for i, w in enumerate(value) if not isinstance(w, str))
            raise self.bad("'words'", f"must be a list of strings, entry {i} is {w!r:.80}")
        index = dict(zip(value, range(len(value))))
        if len(index) != len(value):
            dup = next(w for i, w in enumerate(value) if index[w] != i)
            raise self.bad("'words'", f"must be distinct, {dup!r:.80} appears more than once")
        return value, index

    # ------------------------------------------------------------------ arrays
    def array(self, zf, name, template, n_words, signed):
        member = f"{name}.npy"
        field = f"array {member!r}"
        expected_shape = (n_words, *template.shape[1:])
        try:
            info = zf.getinfo(member)
            with zf.open(info) as fh:
                major, _ = np.lib.format.read_magic(fh)
                if major == 1:
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                elif major == 2:
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                else:
                    raise ValueError(f"numpy array format {major} (expected 1 or 2)")
                offset = fh.tell()
        except ValueError as error:  # numpy: not the .npy format
            raise self.bad(field, f"has no valid .npy header ({error})") from None
        except Exception as error:  # noqa: BLE001 - a damaged member fails in many ways
            raise self.bad(field, f"could not be read ({error})") from None
        if dtype != template.dtype:
            raise self.bad(field, f"has dtype {dtype}, expected {template.dtype}")
        if tuple(shape) != expected_shape:
            raise self.bad(
                field,
                f"has shape {tuple(shape)}, expected {expected_shape} (one row per word of "
                f"'words' and one column per class)"
                if len(expected_shape) == 2
                else f"has shape {tuple(shape)}, expected {expected_shape} (one entry per word "
                "of 'words')",
            )
        size = offset + math.prod(expected_shape) * dtype.itemsize
        if info.file_size != size:
            raise self.bad(field, f"holds {info.file_size} bytes, its header says {size}")
        try:
            with zf.open(info) as fh:
                array = np.lib.format.read_array(fh, allow_pickle=False)
        except Exception as error:  # noqa: BLE001 - (a bad CRC, truncated data, ...)
            raise self.bad(field, f"could not be read ({error})") from None
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise self.bad(field, "holds NaN or infinite values")
        if not signed and array.size and array.min() < 0:
            what = "counts" if array.dtype.kind in "iu" else "sums of absolute values"
            raise self.bad(field, f"holds negative values (its entries are {what})")
        return np.ascontiguousarray(array)


def load(path, *, kind, params, classes, arrays, signed=(), counters, history_keys):
    """Read and check the checkpoint ``path`` of an aggregator of class ``kind``.

    Parameters
    ----------
    params : dict of str
        The described parameters of the aggregator resuming (compared with the saved ones).
    classes : array-like
        The model's classes (compared).
    arrays : dict of str -> ndarray
        The empty arrays of a fresh state: their dtype, and their shape after the first axis
        (one row per word), are what the saved arrays must have.
    signed : collection of str
        The arrays that may hold negative values (the others are counts or sums of
        absolute values).
    counters : dict of str -> int or float
        The running totals of a fresh state: an int is a non-negative integer, a float a
        finite number.
    history_keys : set of str
        The keys of a history entry.

    Returns
    -------
    dict
        ``words``, ``index`` (word -> row), ``arrays``, ``counters``, ``done``,
        ``current``, ``seed_base``, ``call_start`` and ``history``, all checked.
    """
    reader = _Reader(path, kind)
    with reader.open() as zf:
        state = reader.state(zf)
        saved = state["params"]
        if not isinstance(saved, dict) or not all(isinstance(v, str) for v in saved.values()):
            raise reader.bad("'params'", "must be a JSON object of strings")
        missing = "(not saved)"
        diff = {
            k: (saved.get(k, missing), params.get(k, missing))
            for k in sorted(set(saved) | set(params))
            if saved.get(k, missing) != params.get(k, missing)
        }
        if diff:
            raise reader.fail(
                f"was written with other parameters (saved, current): {diff}",
                "give another checkpoint file or the same parameters",
            )
        mine = json_classes(classes)
        if state["classes"] != mine:
            raise reader.fail(
                f"has classes {state['classes']!r:.200}, the model {mine}",
                "give another checkpoint file",
            )
        words, index = reader.words(state["words"])
        counts = reader.same_keys("'counters'", state["counters"], counters)
        checked = {}
        for name, template in counters.items():
            field = f"'counters'[{name!r}]"
            if isinstance(template, (int, np.integer)):
                checked[name] = reader.integer(field, counts[name])
            else:
                checked[name] = float(reader.real(field, counts[name]))
        done = reader.batches("'done'", state["done"])
        current = reader.batches("'current'", state["current"])
        over = [k for k, n in current.items() if n > done.get(k, 0)]
        if over:
            raise reader.bad("'current'", f"counts batches more often than 'done' ({over[0]})")
        seed_base = reader.integer("'seed_base'", state["seed_base"], high=2**31 - 2)
        seen = checked.get("n_documents_seen_", _INT_MAX)
        call_start = reader.integer("'call_start'", state["call_start"], high=seen)
        history = state["history"]
        if not isinstance(history, list):
            raise reader.bad("'history'", f"must be a list, got {type(history).__name__}")
        for i, entry in enumerate(history):
            reader.same_keys(f"'history'[{i}]", entry, history_keys)
            for key, value in entry.items():
                reader.real(f"'history'[{i}][{key!r}]", value, low=0)
        expected = {STATE} | {f"{name}.npy" for name in arrays}
        names = set(zf.namelist())
        if expected - names:
            raise reader.bad("its members", f"lack {sorted(expected - names)}")
        if names - expected:
            raise reader.bad("its members", f"include unexpected {sorted(names - expected)}")
        loaded = {
            name: reader.array(zf, name, template, len(words), name in signed)
            for name, template in arrays.items()
        }
    return dict(
        words=words,
        index=index,
        arrays=loaded,
        counters=checked,
        done=done,
        current=current,
        seed_base=seed_base,
        call_start=call_start,
        history=history,
    )
