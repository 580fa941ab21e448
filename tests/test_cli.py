"""The command line: ``skanchors demo`` (the main job), ``skanchors explain``, ``python -m``."""

import json
import re
import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from skanchors._explanation import Anchor
from skanchors.cli import main

_ANCHOR = re.compile(r"^#\d+: IF .+ THEN PREDICT .+ WITH PRECISION ([\d.]+) AND COVERAGE ([\d.]+)")
_CHECK = re.compile(
    r"(?:held-out|reference-data) precision (nan|[\d.]+), coverage ([\d.]+) \| (\d+) model calls"
)
_FRESH = re.compile(r"^    on 1,000 fresh (?:perturbations|draws)[^:]*: precision ([\d.]+)$")


def _anchors(text):
    """(precision, coverage, held-out precision, held-out coverage, calls, precision on fresh
    perturbations) of each anchor."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _ANCHOR.match(line)
        if m:
            c = _CHECK.search(lines[i + 1])
            assert c, f"no held-out check after {line!r}"
            f = _FRESH.match(lines[i + 2])
            assert f, f"no check on fresh perturbations after {line!r}"
            out.append((float(m[1]), float(m[2]), float(c[1]), float(c[2]), int(c[3]), float(f[1])))
    return out


def test_demo_explains_passengers_and_messages_and_checks_them(capsys):
    assert main(["demo", "--rows", "3"]) == 0
    text = capsys.readouterr().out
    titanic, _, rest = text.partition("SMS spam")
    sms, _, global_part = rest.partition("Global anchors")
    assert titanic.count("passenger: {") == 3
    passengers = _anchors(titanic)
    assert len(passengers) == 3
    for prec, cov, held_prec, held_cov, calls, fresh in passengers:
        assert 0 <= prec <= 1 and 0 < cov <= 1 and calls > 0
        assert 0 <= held_cov <= 1 and (np.isnan(held_prec) or 0 <= held_prec <= 1)
        assert 0 <= fresh <= 1
    assert "3 passengers explained in" in titanic
    assert len(_anchors(sms)) == sms.count("message: ") == 4
    assert re.search(r"^  spam: \w+", global_part, re.M)
    assert re.search(r"^  ham: \w+", global_part, re.M)


def test_module_entry_point_lists_the_commands():
    done = subprocess.run(
        [sys.executable, "-m", "skanchors", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    assert all(cmd in done.stdout for cmd in ("demo", "explain", "global"))


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x0": rng.uniform(size=400), "x1": rng.uniform(size=400)})
    y = (X["x0"] > 0.5).astype(int)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    joblib.dump(model, tmp_path / "model.joblib")
    X.assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path


def test_explain_prints_and_writes_the_anchors(saved, capsys):
    args = ["explain", "--model", str(saved / "model.joblib"), "--reference"]
    args += [str(saved / "train.csv"), "--drop", "label", "--rows", "0,3"]
    assert main(args + ["--json", str(saved / "a.json")]) == 0
    text = capsys.readouterr().out
    # without --data the rows are reference rows: their check is not called held-out
    assert "reference-data precision" in text and "held-out" not in text
    printed = _anchors(text)
    written = [Anchor.from_dict(d) for d in json.loads((saved / "a.json").read_text())]
    assert len(printed) == len(written) == 2
    for (prec, *_, fresh), anchor in zip(printed, written):
        # The model decides by x0 alone: so does every anchor, which then holds everywhere.
        assert anchor.is_anchor and anchor.features == ["x0"]
        assert fresh == 1.0
        assert prec == pytest.approx(anchor.precision, abs=0.005)


def test_explain_bounds_choose_a_numeric_feature_s_predicates(saved, capsys):
    # the tree splits x0 at about 0.5, the quartile edge: row 0 (x0 = 0.64) is in the bin
    # (0.5, 0.75], the interval by default and only its lower edge with --bounds bin
    args = ["explain", "--model", str(saved / "model.joblib"), "--reference"]
    args += [str(saved / "train.csv"), "--drop", "label", "--rows", "0"]
    rules = {}
    for bounds in ("interval", "bin"):
        assert main(args + ["--bounds", bounds, "--json", str(saved / "a.json")]) == 0
        capsys.readouterr()
        (anchor,) = [Anchor.from_dict(d) for d in json.loads((saved / "a.json").read_text())]
        rules[bounds] = [(p.op, p.feature) for p in anchor.predicates]
    assert rules == {"interval": [("in", "x0")], "bin": [(">", "x0")]}
    with pytest.raises(SystemExit) as exit_:
        main(args + ["--bounds", "none"])
    assert exit_.value.code == 2 and "invalid choice: 'none'" in capsys.readouterr().err


def test_explain_flags_non_anchors_in_its_output_not_in_warnings(tmp_path, capsys):
    # a raw "skanchors:8: NoAnchorWarning ... sys.exit(main())" preceded the output, which
    # already tags the rule [NOT AN ANCHOR: ...]
    import warnings

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x0": rng.uniform(size=400), "x1": rng.uniform(size=400)})
    noise = DecisionTreeClassifier(random_state=0).fit(X, rng.integers(0, 2, 400))
    joblib.dump(noise, tmp_path / "noise.joblib")
    X.to_csv(tmp_path / "x.csv", index=False)
    args = ["explain", "--model", str(tmp_path / "noise.joblib"), "--reference"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(args + [str(tmp_path / "x.csv"), "--rows", "0,1,2,3"]) == 0
    assert "NOT AN ANCHOR" in capsys.readouterr().out
    assert not [w for w in caught if "no rule reached precision" in str(w.message)]


def _usage_error(args, capsys):
    """Exit status and message of a command refused as argparse refuses options."""
    with pytest.raises(SystemExit) as exit_:
        main(args)
    return exit_.value.code, capsys.readouterr().err


def test_explain_rejects_rows_out_of_range(saved, capsys):
    args = ["explain", "--model", str(saved / "model.joblib"), "--reference"]
    args += [str(saved / "train.csv"), "--drop", "label", "--rows", "0,400"]
    code, err = _usage_error(args, capsys)
    assert code == 2 and "--rows: [400] out of range for 400 rows" in err


@pytest.mark.parametrize(
    "options, message",
    [
        (["--rows", "a"], "'a' is not a comma-separated list of row numbers"),
        (["--drop", "nosuch"], "--drop: ['nosuch'] not in the columns of --reference"),
        (["--threshold", "1.5"], "1.5 is outside (0, 1]"),
        (["--n-jobs", "0"], "0 workers"),
        (["--beam-size", "0"], "0 is outside [1, inf]"),
        (["--threshold", "nan"], "'nan' is not a number"),  # NaN passed every range check
        # blamed --reference (scikit-learn's message); demo and global: a traceback
        (["--random-state", "-1"], "-1 is outside [0, 4294967295]"),
        # the work was done, then lost to a FileNotFoundError
        (["--json", "/nonexistent/folder/a.json"], "--json: no folder '/nonexistent/folder'"),
        # the label left in the data was anchored: "... AND label > 0.0 THEN PREDICT 1"
        ([], "--reference: X has the column(s) ['label'] that the model was not fitted on"),
        ([], "Leave such columns out with --drop."),
    ],
)
def test_explain_refuses_bad_options_as_usage_errors(saved, capsys, options, message):
    # these ended in tracebacks with exit status 1
    args = ["explain", "--model", str(saved / "model.joblib"), "--reference"]
    code, err = _usage_error(args + [str(saved / "train.csv")] + options, capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert "explain: error:" in err  # the subcommand's usage, not the top level's


def test_missing_or_wrong_files_are_named(saved, capsys):
    # FileNotFoundError and UnpicklingError tracebacks
    model, table = str(saved / "model.joblib"), str(saved / "train.csv")
    for args, message in [
        (["--model", "nosuch.joblib", "--reference", table], "--model: no file 'nosuch.joblib'"),
        (["--model", table, "--reference", table], "is not a model saved with joblib.dump"),
        (["--model", model, "--reference", "nosuch.csv"], "--reference: no file 'nosuch.csv'"),
        (["--model", model, "--reference", model], "is not a CSV/TSV table"),
    ]:
        code, err = _usage_error(["explain"] + args, capsys)
        assert code == 2 and message in err and "Traceback" not in err
    code, err = _usage_error(["global", "--model", model, "--data", "nosuch.tsv"], capsys)
    assert code == 2 and "--data: no file 'nosuch.tsv'" in err
    # a mistyped model file was sought on the Hugging Face hub: a connection traceback
    texts = str(saved / "texts.csv")
    pd.DataFrame({"text": ["win cash now", "see you at lunch"]}).to_csv(texts, index=False)
    for spec, message in [
        ("nosuch.joblib", "--model: no file 'nosuch.joblib'"),
        (str(saved / "nosuch-folder"), "is neither a joblib file nor a Hugging Face model"),
    ]:
        code, err = _usage_error(["global", "--model", spec, "--data", texts], capsys)
        assert code == 2 and message in err and "Traceback" not in err


def test_compressed_tables_are_split_as_their_inner_suffix_says(tmp_path):
    # texts.tsv.gz was split on commas: one column "label\ttext", the label read as text
    from skanchors.cli import _read_table

    table = pd.DataFrame({"label": ["ham", "spam"], "text": ["see you at lunch", "win, now"]})
    for name, sep in [("t.tsv.gz", "\t"), ("t.csv.bz2", ","), ("T.TAB.XZ", "\t")]:
        table.to_csv(tmp_path / name, sep=sep, index=False)
        read = _read_table(tmp_path / name, "--data")
        assert read.equals(table), name


@pytest.mark.parametrize(
    "options, message",
    [
        (["--rows", "-2"], "-2 is outside [1, inf]"),  # explained 266 passengers, exit 0
        (["--rows", "0"], "0 is outside [1, inf]"),
        (["--threshold", "0"], "0.0 is outside (0, 1]"),
        (["--n-jobs", "x"], "'x' is not an integer"),
        (["--random-state", "5000000000"], "5000000000 is outside [0, 4294967295]"),
    ],
)
def test_demo_refuses_bad_options_as_usage_errors(capsys, options, message):
    code, err = _usage_error(["demo"] + options, capsys)
    assert code == 2 and message in err


def test_demo_images_catches_the_bright_corner(capsys):
    pytest.importorskip("skimage")
    import argparse

    from skanchors._image_demo import CUE, demo_images

    args = argparse.Namespace(threshold=0.95, random_state=0, n_jobs=None)
    found = demo_images(args, sys.stdout)
    corner = np.zeros((25, 25), dtype=bool)
    corner[CUE] = True
    for anchor, e in zip(*found["leaky"]):
        assert anchor.is_anchor and anchor.mask[corner].all() and anchor.mask.mean() < 0.1
        assert e.mask(1)[corner].mean() > 0.8
    for anchor, _ in zip(*found["clean"]):
        assert anchor.is_anchor and anchor.mask[corner].mean() < 0.5
    assert main(["demo", "--images"]) == 0
    assert "100% of the corner" in capsys.readouterr().out
