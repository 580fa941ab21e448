"""Checkpoints are data: a hostile or damaged file runs nothing and is refused by name.

The catalogue edits a real checkpoint of each aggregator one field at a time (through a small
adapter that reads and writes the file as the tests' own trusted code, never as the package
does) and expects a ``ValueError`` whose message names the file and the field; a malicious
pickle at the checkpoint path, through the Python API and the command line, must run nothing.
"""

import io
import json
import os
import pickle
import re
import shutil
import zipfile

import joblib
import numpy as np
import pandas as pd
import pytest
from planted_corpus import DOCS, PlantedModel

from skanchors import GlobalAnchorAggregator
from skanchors.aggregation import WordFilter
from skanchors.aggregation.lime_aggregator import GlobalLimeAggregator
from skanchors.cli import main

ANCHOR = dict(
    k=3, vocabulary=WordFilter(min_count=2), sample_size=40, batch_size=10, random_state=0
)
LIME = dict(
    k=3,
    vocabulary=WordFilter(min_count=2),
    n_samples=150,
    n_features=5,
    batch_size=10,
    random_state=0,
)
KINDS = {
    "anchor": (GlobalAnchorAggregator, ANCHOR, "_a_pos"),
    "lime": (GlobalLimeAggregator, LIME, "_dc"),
}


class Exploit:
    """Unpickling this runs ``exec``: it writes ``marker`` (what a hostile file would do)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


def _aggregator(kind, path, **extra):
    cls, params, _ = KINDS[kind]
    return cls(PlantedModel(), checkpoint=str(path), **{**params, **extra})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint of each aggregator after 3 batches of 10 documents."""
    out = {}
    for kind in KINDS:
        path = tmp_path_factory.mktemp(kind) / "state.ckpt"
        _aggregator(kind, path, callback=lambda a: a.n_documents_seen_ >= 30).fit(DOCS)
        out[kind] = path.read_bytes()
    return out


# ------------------------------------------------------------------ reading and writing
class File:
    """A checkpoint opened by the test to be edited: ``state`` (its fields but the arrays)
    and ``arrays``; :meth:`write` puts it back. Reads both the data format (a zip of
    state.json and .npy members) and the pickled format of skanchors before it (only ever a
    file this test wrote itself), so that the catalogue can be run against either."""

    def __init__(self, data):
        self.zipped = data[:2] == b"PK"
        if self.zipped:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = {name: zf.read(name) for name in zf.namelist()}
            self.state = json.loads(members.pop("state.json"))
            self.arrays = {
                name.removesuffix(".npy"): np.load(io.BytesIO(raw), allow_pickle=False)
                for name, raw in members.items()
            }
        else:
            self.state = pickle.loads(data)  # the test's own file of the base code
            self.arrays = self.state.pop("arrays")

    def write(self, path, raw=None):
        """The edited file (``raw``: member name -> bytes replacing what is written)."""
        raw = raw or {}
        if not self.zipped:
            with open(path, "wb") as fh:
                pickle.dump(dict(self.state, arrays=self.arrays), fh)
            return
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("state.json", raw.get("state.json", json.dumps(self.state)))
            for name, array in self.arrays.items():
                if f"{name}.npy" in raw:
                    zf.writestr(f"{name}.npy", raw[f"{name}.npy"])
                    continue
                buf = io.BytesIO()
                np.save(buf, array, allow_pickle=array.dtype == object)
                zf.writestr(f"{name}.npy", buf.getvalue())
            for name, data in raw.items():
                if name != "state.json" and name.removesuffix(".npy") not in self.arrays:
                    zf.writestr(name, data)


def _first_array(f, kind):
    return KINDS[kind][2]


def _set(field, value):
    def edit(f, kind):
        f.state[field] = value

    return edit


def _set_in(field, key, value):
    def edit(f, kind):
        f.state[field][key] = value

    return edit


def _array(function):
    def edit(f, kind):
        name = _first_array(f, kind)
        f.arrays[name] = function(f.arrays[name])

    return edit


def _negative(a):
    a = a.copy()
    a.flat[0] = -3
    return a


def _object_array(marker):
    def function(a):
        out = np.empty(a.shape, dtype=object)
        out.flat[0] = Exploit(marker)
        return out

    return function


def _drop_array(f, kind):
    del f.arrays[_first_array(f, kind)]


def _extra_array(f, kind):
    f.arrays["_junk"] = np.zeros(3, dtype=np.int64)


def _one_word_less(f, kind):
    f.state["words"] = f.state["words"][:-1]


def _duplicate_word(f, kind):
    f.state["words"][1] = f.state["words"][0]


def _current_over_done(f, kind):
    key = next(iter(f.state["done"]))
    f.state["current"][key] = f.state["done"][key] + 1


def _seen_before_start(f, kind):
    f.state["call_start"] = f.state["counters"]["n_documents_seen_"] + 1


def _history_without(f, kind):
    f.state["history"][0].pop("n_documents")


def _history_negative(f, kind):
    f.state["history"][0]["elapsed_time"] = -1.0


def _drop_param(f, kind):
    f.state["params"].pop("batch_size")


def _bad_done_key(f, kind):
    f.state["done"]["not a key"] = 1


def _zero_done(f, kind):
    f.state["done"][next(iter(f.state["done"]))] = 0


def _other_class(f, kind):
    f.state["classes"] = ["ham", "eggs"]


def _params(name, value):
    def edit(f, kind):
        if name in f.state["params"]:
            f.state["params"][name] = value

    return edit


def _counter(name, value):
    def edit(f, kind):
        f.state["counters"][name] = value

    return edit


def _missing(field):
    def edit(f, kind):
        f.state.pop(field)

    return edit


# (id, edit of the state, what the message must name)
FIELD_CASES = [
    ("shape: one word fewer than the rows", _one_word_less, r"shape|words"),
    ("shape: one row more", _array(lambda a: np.concatenate([a, a[:1]])), r"shape"),
    ("shape: a class more", _array(lambda a: np.zeros((len(a), 3), a.dtype)), r"shape"),
    ("shape: 1-d", _array(lambda a: a.ravel()), r"shape"),
    ("dtype: float for counts", _array(lambda a: a.astype(np.float64)), r"dtype"),
    ("dtype: int32", _array(lambda a: a.astype(np.int32)), r"dtype"),
    ("dtype: big-endian int64", _array(lambda a: a.astype(">i8")), r"dtype"),
    ("dtype: strings", _array(lambda a: a.astype("U3")), r"dtype"),
    ("negative counts", _array(_negative), r"negative"),
    ("missing member", _drop_array, r"_a_pos|_dc"),
    ("extra member", _extra_array, r"_junk"),
    ("extra field", _set("junk", 1), r"junk"),
    ("missing field: words", _missing("words"), r"words"),
    ("missing field: counters", _missing("counters"), r"counters"),
    ("missing field: done", _missing("done"), r"done"),
    ("words: not a list", _set("words", "prize"), r"words"),
    ("words: a number", lambda f, k: f.state["words"].__setitem__(0, 5), r"words"),
    ("words: twice the same", _duplicate_word, r"words"),
    ("counters: negative", _counter("n_documents_seen_", -1), r"n_documents_seen_"),
    ("counters: a float count", _counter("n_documents_seen_", 2.5), r"n_documents_seen_"),
    ("counters: a bool count", _counter("n_model_calls_", True), r"n_model_calls_"),
    ("counters: a string", _counter("elapsed_time_", "soon"), r"elapsed_time_"),
    ("counters: a list", _counter("n_rows_predicted_", [1]), r"n_rows_predicted_"),
    ("counters: too large", _counter("n_rows_predicted_", 10**30), r"n_rows_predicted_"),
    ("counters: missing", lambda f, k: f.state["counters"].pop("elapsed_time_"), r"counters"),
    ("counters: not an object", _set("counters", [1, 2]), r"counters"),
    ("done: not an object", _set("done", ["x"]), r"done"),
    ("done: a bad batch key", _bad_done_key, r"done"),
    ("done: a zero count", _zero_done, r"done"),
    ("current: more than done", _current_over_done, r"current"),
    ("seed: negative", _set("seed_base", -5), r"seed_base"),
    ("seed: a string", _set("seed_base", "0"), r"seed_base"),
    ("resume point past the documents seen", _seen_before_start, r"call_start"),
    ("history: not a list", _set("history", {"a": 1}), r"history"),
    ("history: an entry without a key", _history_without, r"history"),
    ("history: a negative time", _history_negative, r"history"),
    ("history: an entry not an object", lambda f, k: f.state["history"].append(3), r"history"),
    ("params: another value", _params("batch_size", "11"), r"other parameters.*batch_size"),
    ("params: one missing", _drop_param, r"other parameters.*batch_size"),
    ("params: not an object", _set("params", "k=3"), r"params"),
    ("classes: others", _other_class, r"classes"),
    ("kind: the other aggregator", None, r"holds a Global\w+ state, not a Global"),
    ("version: older", _set("version", 4), r"another version of skanchors .format 4"),
    ("version: a string", _set("version", "6"), r"'version' must be an integer"),
]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("case, edit, names", FIELD_CASES, ids=[c[0] for c in FIELD_CASES])
def test_an_edited_checkpoint_is_refused_naming_the_field(saved, tmp_path, kind, case, edit, names):
    path = tmp_path / "state.ckpt"
    if edit is None:  # the other aggregator's checkpoint
        path.write_bytes(saved["lime" if kind == "anchor" else "anchor"])
    else:
        f = File(saved[kind])
        edit(f, kind)
        f.write(path)
    _refused(kind, path, names)


def _refused(kind, path, names, marker=None):
    before = path.read_bytes()
    with pytest.raises(ValueError) as info:
        _aggregator(kind, path).fit(DOCS)
    message = str(info.value)
    print(f"[{kind}] {message}")
    if marker is not None:
        assert not os.path.exists(marker), "the checkpoint ran code"
    assert str(path) in message, message
    assert re.search(names, message), message
    assert path.read_bytes() == before  # a refused checkpoint is left as it was
    return message


def _whole_file(saved, kind):
    return saved[kind]


def _zip_of(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npz():
    buf = io.BytesIO()
    np.savez(buf, counts=np.zeros((3, 2), dtype=np.int64))
    return buf.getvalue()


def _old_pickle(data):
    """The checkpoint as skanchors wrote it before (format 5: a pickled dict)."""
    f = File(data)
    return pickle.dumps(dict(f.state, version=5, arrays=f.arrays))


def _flip_byte_in_an_array(data):
    first = next(iter(File(data).arrays.values()))
    at = data.index(first.tobytes()) + 8  # in the first array's data, past its header
    return data[:at] + bytes([data[at] ^ 0x04]) + data[at + 1 :]


def _truncate_array_member(data):
    f = File(data)
    if not f.zipped:
        return None
    buf = io.BytesIO()
    np.save(buf, f.arrays["_occ"])
    path = io.BytesIO()
    f.write(path, raw={"_occ.npy": buf.getvalue()[:-9]})
    return path.getvalue()


def _deflated(data):
    """The checkpoint's state.json compressed, as a zip bomb's members are."""
    if data[:2] != b"PK":
        return None
    f = File(data)
    f.state["history"] += [f.state["history"][0]] * 100_000
    path = io.BytesIO()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("state.json", json.dumps(f.state))
    return path.getvalue()


def _not_json(data):
    if data[:2] != b"PK":
        return None
    f = File(data)
    path = io.BytesIO()
    f.write(path, raw={"state.json": b"{'format': no json"})
    return path.getvalue()


def _json_list(data):
    if data[:2] != b"PK":
        return None
    f = File(data)
    path = io.BytesIO()
    f.write(path, raw={"state.json": b"[1, 2, 3]"})
    return path.getvalue()


def _bad_header(data):
    if data[:2] != b"PK":
        return None
    f = File(data)
    path = io.BytesIO()
    f.write(path, raw={"_occ.npy": b"plain text, no array"})
    return path.getvalue()


def _lime_array(name, function):
    def edit(f, kind):
        f.arrays[name] = function(f.arrays[name].copy())

    return edit


def _put(index, value):
    def function(a):
        a[index] = value
        return a

    return function


# the LIME aggregator's float sums and its 1-d occurrence counts
LIME_CASES = [
    ("weight sums: NaN", _lime_array("_ws", _put((0, 0), np.nan)), r"_ws\.npy' holds NaN"),
    ("weight sums: infinite", _lime_array("_ws", _put((1, 1), -np.inf)), r"_ws\.npy' holds NaN"),
    ("absolute sums: negative", _lime_array("_abs", _put((0, 1), -0.5)), r"_abs\.npy' holds neg"),
    ("occurrences: 2-d", _lime_array("_occ", lambda a: a[:, None]), r"_occ\.npy' has shape"),
    ("occurrences: negative", _lime_array("_occ", _put(0, -1)), r"_occ\.npy' holds negative"),
    ("r2 sum: infinite", _counter("_r2_sum", float("inf")), r"'_r2_sum'\] must be a finite"),
    ("explained: a float", _counter("_n_explained", 3.0), r"'_n_explained'\] must be an int"),
]


@pytest.mark.parametrize("case, edit, names", LIME_CASES, ids=[c[0] for c in LIME_CASES])
def test_an_edited_lime_checkpoint_is_refused_naming_the_field(saved, tmp_path, case, edit, names):
    f = File(saved["lime"])
    edit(f, "lime")
    path = tmp_path / "state.ckpt"
    f.write(path)
    _refused("lime", path, names)


def test_the_signed_weight_sums_may_be_negative(saved, tmp_path):
    f = File(saved["lime"])
    assert (f.arrays["_ws"] < 0).any()  # the checkpoint read back holds negative sums
    path = tmp_path / "state.ckpt"
    path.write_bytes(saved["lime"])
    assert _aggregator("lime", path).fit(DOCS).n_documents_seen_ == len(DOCS)


# (id, the file's bytes from a valid checkpoint's bytes, what the message must name); None:
# the case is not one of that format
FILE_CASES = [
    ("empty file", lambda d: b"", r"empty"),
    ("plain text", lambda d: b"not a checkpoint\n", r"not a skanchors checkpoint"),
    ("truncated to half", lambda d: d[: len(d) // 2], r"damaged or truncated"),
    ("truncated by 10 bytes", lambda d: d[:-10], r"damaged or truncated"),
    ("a zip of other files", lambda d: _zip_of({"notes.txt": b"hello"}), r"state\.json"),
    ("a numpy .npz", lambda d: _npz(), r"state\.json"),
    ("a compressed member (a zip bomb)", _deflated, r"'state\.json' is compressed"),
    ("state.json not JSON", _not_json, r"state\.json.*not JSON"),
    ("state.json a list", _json_list, r"state\.json.*not an object"),
    ("a flipped byte", _flip_byte_in_an_array, r"(_a_pos|_ws)\.npy' could not be read .Bad CRC"),
    ("an array member truncated", _truncate_array_member, r"_occ\.npy"),
    ("an array member not .npy", _bad_header, r"_occ\.npy"),
    ("the old pickled format", _old_pickle, r"is a pickle.*delete it"),
    ("one byte of a pickle", lambda d: b"\x80", r"is a pickle"),
]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("case, make, names", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_damaged_or_foreign_file_is_refused_naming_it(saved, tmp_path, kind, case, make, names):
    data = make(saved[kind])
    if data is None:
        pytest.skip("not a case of this checkpoint format")
    path = tmp_path / "state.ckpt"
    path.write_bytes(data)
    _refused(kind, path, names)


@pytest.mark.parametrize("kind", list(KINDS))
def test_random_damage_is_refused_by_name_or_harmless(saved, tmp_path, kind):
    # bytes changed, inserted, deleted or cut off anywhere: zipfile raised NotImplementedError
    # for a garbled version field
    from skanchors.aggregation._checkpoint import CheckpointError

    good = saved[kind]
    agg = _aggregator(kind, tmp_path / "unused").set_params(checkpoint=None).fit(DOCS[:5])
    path = tmp_path / "damaged.ckpt"
    agg.checkpoint = str(path)
    rng = np.random.default_rng(0)
    outcomes = {"refused": 0, "loaded": 0}
    for _ in range(300):
        d = bytearray(good)
        at = int(rng.integers(len(d)))
        how = int(rng.integers(4))
        if how == 0:
            d[at] ^= int(rng.integers(1, 256))
        elif how == 1:
            del d[at:]
        elif how == 2:
            d[at:at] = rng.integers(0, 256, int(rng.integers(1, 20))).astype(np.uint8).tobytes()
        else:
            del d[at : at + int(rng.integers(1, 50))]
        path.write_bytes(bytes(d))
        try:
            agg._load_checkpoint()
        except CheckpointError as error:
            assert str(path) in str(error)
            outcomes["refused"] += 1
        else:  # a byte of no meaning (a zip header's date, ...): the same state
            assert agg._words == File(good).state["words"]
            for name, array in File(good).arrays.items():
                assert np.array_equal(getattr(agg, name), array)
            outcomes["loaded"] += 1
    assert outcomes["refused"] > 250


# ------------------------------------------------------------------ malicious files
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("protocol", [0, pickle.HIGHEST_PROTOCOL])
def test_a_malicious_pickle_at_the_checkpoint_path_runs_nothing(tmp_path, kind, protocol):
    marker = tmp_path / "ran"
    path = tmp_path / "state.ckpt"
    path.write_bytes(pickle.dumps(Exploit(marker), protocol=protocol))
    assert not marker.exists()
    if protocol == 0:  # a text pickle: no pickle's opcode first
        _refused(kind, path, r"not a skanchors checkpoint", marker=marker)
        return
    message = _refused(kind, path, r"is a pickle", marker=marker)
    assert "can run any code" in message and "delete it" in message


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_malicious_object_array_in_a_checkpoint_runs_nothing(saved, tmp_path, kind):
    marker = tmp_path / "ran"
    f = File(saved[kind])
    if not f.zipped:
        f.arrays[_first_array(f, kind)] = _object_array(marker)(f.arrays[_first_array(f, kind)])
    else:
        _array(_object_array(marker))(f, kind)
    path = tmp_path / "state.ckpt"
    f.write(path)
    _refused(kind, path, r"dtype object", marker=marker)


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    folder = tmp_path_factory.mktemp("cli")
    labels = PlantedModel().predict_proba(DOCS).argmax(axis=1)
    model = make_pipeline(CountVectorizer(), LogisticRegression()).fit(DOCS, labels)
    joblib.dump(model, folder / "model.joblib")
    pd.DataFrame({"text": DOCS}).to_csv(folder / "texts.csv", index=False)
    return folder


def _cli(args, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    return exit_.value.code, capsys.readouterr().err


def test_the_cli_refuses_a_malicious_checkpoint_as_a_usage_error(cli_files, tmp_path, capsys):
    marker = tmp_path / "ran"
    path = tmp_path / "state.ckpt"
    path.write_bytes(pickle.dumps(Exploit(marker)))
    args = ["global", "--model", str(cli_files / "model.joblib")]
    args += ["--data", str(cli_files / "texts.csv"), "--checkpoint", str(path), "-k", "3"]
    code, err = _cli(args, capsys)
    assert not marker.exists()
    assert code == 2 and "Traceback" not in err and "global: error: --checkpoint:" in err
    assert str(path) in err and "is a pickle" in err


@pytest.mark.parametrize(
    "data, names",
    [
        (b"", r"empty"),
        (b"PK\x03\x04 truncated", r"damaged or truncated"),
        (_zip_of({"state.json": b"[]"}), r"not an object"),
    ],
)
def test_the_cli_reports_a_bad_checkpoint_as_a_usage_error(
    cli_files, tmp_path, capsys, data, names
):
    path = tmp_path / "state.ckpt"
    path.write_bytes(data)
    args = ["global", "--model", str(cli_files / "model.joblib")]
    args += ["--data", str(cli_files / "texts.csv"), "--checkpoint", str(path)]
    code, err = _cli(args, capsys)
    assert code == 2 and "Traceback" not in err and "--checkpoint:" in err
    last = err.strip().splitlines()[-1]  # the message: one line, after the usage
    assert last.startswith("skanchors global: error: --checkpoint: checkpoint ")
    assert re.search(names, last) and str(path) in last


@pytest.mark.parametrize(
    "content, names",
    [
        ({"predict_proba": 1}, "holds a dict, not a fitted model"),
        (np.zeros((3, 2)), "holds a ndarray, not a fitted model"),
        (GlobalAnchorAggregator, "holds the class GlobalAnchorAggregator"),
    ],
)
@pytest.mark.parametrize("command", ["explain", "global"])
def test_a_joblib_file_without_a_model_is_a_model_error(
    cli_files, tmp_path, capsys, content, names, command
):
    # a dict was reported as a --reference error (explain) or a traceback (global)
    model = tmp_path / "model.joblib"
    joblib.dump(content, model)
    table = tmp_path / "table.csv"
    pd.DataFrame({"x": [0.0, 1.0], "text": ["win cash", "see you"]}).to_csv(table, index=False)
    args = [command, "--model", str(model)]
    args += ["--reference" if command == "explain" else "--data", str(table)]
    code, err = _cli(args, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"--model: {str(model)!r} {names}" in err


def test_an_unfitted_model_is_a_model_error(tmp_path, capsys):
    from sklearn.tree import DecisionTreeClassifier

    model = tmp_path / "model.joblib"
    joblib.dump(DecisionTreeClassifier(), model)
    table = tmp_path / "table.csv"
    pd.DataFrame({"x": [0.0, 1.0]}).to_csv(table, index=False)
    code, err = _cli(["explain", "--model", str(model), "--reference", str(table)], capsys)
    assert code == 2 and "--model:" in err and "holds an unfitted DecisionTreeClassifier" in err


def test_the_help_says_a_model_file_is_a_pickle(capsys):
    for command in ("explain", "global"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "load only files you trust" in text


# ------------------------------------------------------------------ what still works
def _state(agg):
    counters = {n: getattr(agg, n) for n in agg._checkpoint_counters if n != "elapsed_time_"}
    arrays = {n: getattr(agg, n) for n in agg._checkpoint_arrays}
    return list(agg._words), counters, arrays


def _assert_same_state(resumed, whole):
    words, counters, arrays = _state(resumed)
    words_w, counters_w, arrays_w = _state(whole)
    assert words == words_w and counters == counters_w
    for name, array in arrays.items():
        assert array.dtype == arrays_w[name].dtype
        assert array.tobytes() == arrays_w[name].tobytes(), name  # bit for bit
    assert [{k: v for k, v in e.items() if k != "elapsed_time"} for e in resumed.history_] == [
        {k: v for k, v in e.items() if k != "elapsed_time"} for e in whole.history_
    ]
    assert resumed.top_terms_ == whole.top_terms_


class _Interrupting(PlantedModel):
    """Raises KeyboardInterrupt at its ``at``-th call (Ctrl-C while the model predicts)."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def predict_proba(self, X):
        if self.calls + 1 == self.at:
            self.calls += 1
            raise KeyboardInterrupt
        return super().predict_proba(X)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("when", ["first call of batch 3", "middle of batch 4", "last call"])
def test_a_run_interrupted_anywhere_resumes_to_the_uninterrupted_counts_bit_for_bit(
    tmp_path, kind, when
):
    cls, params, _ = KINDS[kind]
    model, calls = PlantedModel(), []  # the model's calls when each batch is done
    whole = cls(model, callback=lambda a: calls.append(model.calls), **params).fit(DOCS)
    at = {
        "first call of batch 3": calls[1] + 1,
        "middle of batch 4": (calls[2] + calls[3]) // 2 + 1,
        "last call": calls[-1],
    }[when]
    assert at > calls[0]  # a batch was saved before the interrupt
    path = tmp_path / "state.ckpt"
    with pytest.raises(KeyboardInterrupt):
        cls(_Interrupting(at), checkpoint=str(path), **params).fit(DOCS)
    saved = File(path.read_bytes())
    assert saved.zipped and 0 < saved.state["counters"]["n_documents_seen_"] < len(DOCS)
    resumed = cls(PlantedModel(), checkpoint=str(path), **params).fit(DOCS)
    assert resumed.n_documents_seen_ == whole.n_documents_seen_ == len(DOCS)
    _assert_same_state(resumed, whole)
    assert sorted(os.listdir(tmp_path)) == ["state.ckpt"]  # no temporary file left


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_interrupt_while_saving_keeps_the_last_whole_checkpoint(tmp_path, kind, monkeypatch):
    cls, params, _ = KINDS[kind]
    path = tmp_path / "state.ckpt"
    real = np.lib.format.write_array
    saves = []

    def write_array(fh, array, **kwargs):
        saves.append(1)
        if len(saves) == 2 * len(cls._checkpoint_arrays) + 2:  # the third save, half written
            raise KeyboardInterrupt
        return real(fh, array, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_array)
    with pytest.raises(KeyboardInterrupt):
        cls(PlantedModel(), checkpoint=str(path), **params).fit(DOCS)
    monkeypatch.setattr(np.lib.format, "write_array", real)
    assert sorted(os.listdir(tmp_path)) == ["state.ckpt"]
    assert File(path.read_bytes()).state["counters"]["n_documents_seen_"] == 20
    resumed = cls(PlantedModel(), checkpoint=str(path), **params).fit(DOCS)
    whole = cls(PlantedModel(), **params).fit(DOCS)
    _assert_same_state(resumed, whole)


def test_a_checkpoint_holds_what_its_state_needs_and_nothing_else(saved, tmp_path):
    with zipfile.ZipFile(io.BytesIO(saved["anchor"])) as zf:
        names = zf.namelist()
        state = json.loads(zf.read("state.json"))
        counts = np.load(io.BytesIO(zf.read("_a_pos.npy")), allow_pickle=False)
    assert names[0] == "state.json"
    assert sorted(names[1:]) == sorted(
        f"{n}.npy" for n in GlobalAnchorAggregator._checkpoint_arrays
    )
    assert state["format"] == "skanchors checkpoint" and state["version"] == 6
    assert state["kind"] == "GlobalAnchorAggregator" and state["classes"] == ["ham", "spam"]
    assert counts.shape == (len(state["words"]), 2) and counts.dtype == np.int64
    assert state["counters"]["n_documents_seen_"] == 30 and len(state["history"]) == 3
    # numpy reads it as the .npz it is laid out as
    path = tmp_path / "state.npz"
    path.write_bytes(saved["anchor"])
    with np.load(path, allow_pickle=False) as npz:
        assert np.array_equal(npz["_a_pos"], counts)


def test_a_copied_checkpoint_resumes_like_the_original(saved, tmp_path):
    path = tmp_path / "a.ckpt"
    path.write_bytes(saved["anchor"])
    shutil.copy(path, tmp_path / "b.ckpt")
    a = _aggregator("anchor", path).fit(DOCS)
    b = _aggregator("anchor", tmp_path / "b.ckpt").fit(DOCS)
    _assert_same_state(a, b)
