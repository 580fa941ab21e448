"""Command line: ``skanchors demo | explain | global | compare`` (also ``python -m skanchors``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

__all__ = ["main"]


class UsageError(Exception):
    """A bad option value found after parsing: reported by ``main`` as argparse reports its
    own (usage, message, exit status 2)."""


def _bounded(kind, low=None, high=None, low_open=False, high_open=False):
    """An argparse ``type`` for numbers of ``kind`` within bounds, with argparse's message."""

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value != value:  # NaN: every comparison below would be False
            raise argparse.ArgumentTypeError(f"{text!r} is not a number")
        too_low = low is not None and (value <= low if low_open else value < low)
        too_high = high is not None and (value >= high if high_open else value > high)
        if too_low or too_high:
            left, right = "(" if low_open else "[", ")" if high_open else "]"
            span = (
                f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"
            )
            raise argparse.ArgumentTypeError(f"{value} is outside {span}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


_POSITIVE = _bounded(int, 1)


def _n_jobs(text):
    value = _bounded(int)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 workers: use a positive number, or -1 for all cores")
    return value


def _row_numbers(text):
    try:
        return [int(r) for r in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of row numbers"
        ) from None


def _held_out(anchor, X, predicted, skip=None):
    return anchor.check(X, predicted, exclude=skip)[:2]


_N_FRESH = 1000  # fresh perturbations each printed anchor is checked on


def _print_anchor(i, anchor, prec, cov, out, explainer, seed, checked_on="held-out"):
    print(f"\n#{i}: {anchor}", file=out)
    print(
        f"    {checked_on} precision {prec:.3f}, coverage {cov:.3f} | {anchor.n_model_calls} model "
        f"calls, {anchor.n_rows_predicted} rows predicted, {anchor.wall_time:.2f} s",
        file=out,
    )
    fresh = explainer.perturbation_precision(anchor, _N_FRESH, random_state=seed)
    drawn = {
        "reference": "fresh draws of the reference rows it covers",
        "replace": "fresh perturbations (reference rows, values replaced)",
    }.get(anchor.perturbation, "fresh perturbations")
    print(f"    on {_N_FRESH:,} {drawn}: precision {fresh:.3f}", file=out)


def demo_tabular(args, out):
    """Titanic: fit a model, explain passengers, check the rules on held-out passengers."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    from . import AnchorExplainer
    from .datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=0)
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    model.fit(X_train, y_train)
    print(
        f"Titanic: {len(X_train)} training passengers, {len(X_test)} held out; model "
        f"accuracy {model.score(X_test, y[X_test.index]):.3f}",
        file=out,
    )
    explainer = AnchorExplainer(
        model, threshold=args.threshold, random_state=args.random_state, n_jobs=args.n_jobs
    ).fit(X_train)
    rows = X_test.iloc[: args.rows]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anchors = explainer.explain(rows)
    elapsed = time.perf_counter() - start
    predicted = model.predict(X_test)
    for i, anchor in enumerate(anchors):
        prec, cov = _held_out(anchor, X_test, predicted, skip=i)
        print(f"\npassenger: {rows.iloc[i].to_dict()}", file=out)
        _print_anchor(i, anchor, prec, cov, out, explainer, args.random_state)
    print(f"\n{len(anchors)} passengers explained in {elapsed:.1f} s", file=out)
    return anchors


def demo_text(args, out):
    """SMS spam: explain messages of a TF-IDF + logistic regression model."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from . import AnchorExplainer
    from .datasets import load_sms_spam
    from .samplers import UnkSampler

    texts, labels = load_sms_spam(return_X_y=True)
    tr, te, y_tr, _ = train_test_split(texts, labels, test_size=0.3, random_state=0)
    model = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(C=10, max_iter=1000))
    model.fit(tr, y_tr)
    print(
        f"\nSMS spam: TF-IDF + logistic regression on {len(tr)} messages; perturbations "
        "replace words by UNK",
        file=out,
    )
    explainer = AnchorExplainer(
        model,
        threshold=args.threshold,
        sampler=UnkSampler(),
        random_state=args.random_state,
        n_jobs=args.n_jobs,
    ).fit(tr)
    pred = model.predict(te)
    chosen = [i for i in range(len(te)) if pred[i] == "spam"][:2]
    chosen += [i for i in range(len(te)) if pred[i] == "ham" and len(te[i]) > 40][:2]
    docs = [te[i] for i in chosen]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anchors = explainer.explain(docs)
    for j, (doc, anchor) in enumerate(zip(docs, anchors)):
        prec, cov = _held_out(anchor, te, pred, skip=chosen[j])
        print(f"\nmessage: {doc!r}", file=out)
        _print_anchor(j, anchor, prec, cov, out, explainer, args.random_state)
    demo_global(model, te, args, out)
    return anchors


def demo_global(model, documents, args, out):
    """Global explanation: the top words of each class over 500 held-out messages."""
    from .aggregation import GlobalAnchorAggregator

    agg = GlobalAnchorAggregator(
        model,
        k=10,
        threshold=args.threshold,
        delta=0.3,
        sample_size=32,
        max_documents=500,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
    ).fit(list(documents))
    print(
        f"\nGlobal anchors (G_pr) over {agg.n_documents_seen_} held-out messages in "
        f"{agg.elapsed_time_:.1f} s ({agg.n_rows_predicted_} rows predicted):",
        file=out,
    )
    _print_top_terms(agg.top_terms_, out)
    return agg


def _print_top_terms(top_terms, out):
    for label, terms in top_terms.items():
        print(f"  {label}: {', '.join(w for w, _ in terms)}", file=out)


def cmd_demo(args, out=None):
    out = sys.stdout if out is None else out
    from threadpoolctl import threadpool_limits

    if args.rows is None:
        args.rows = 100 if args.compare else 5
    # The explainer makes many small model calls; OpenMP thread start-up in each of them can
    # cost more than the prediction itself (histogram gradient boosting on a few rows).
    with threadpool_limits(limits=1):
        if args.compare and args.images:
            raise SystemExit("skanchors demo: give --compare or --images, not both")
        if args.compare:
            from ._compare_demo import demo_compare

            demo_compare(args, out)
            return 0
        if args.images:
            from ._image_demo import demo_images

            demo_images(args, out)
            return 0
        demo_tabular(args, out)
        demo_text(args, out)
    return 0


def _read_table(path, option):
    import pandas as pd

    name = str(path).lower()
    for packed in (".gz", ".bz2", ".xz", ".zip", ".zst", ".tar"):  # pandas unpacks these
        name = name.removesuffix(packed)
    sep = "\t" if name.endswith((".tsv", ".tab")) else ","
    try:
        return pd.read_csv(path, sep=sep)
    except FileNotFoundError:
        raise UsageError(f"{option}: no file {path!r}") from None
    except (OSError, ValueError, UnicodeDecodeError) as error:  # pandas' ParserError included
        raise UsageError(f"{option}: {path!r} is not a CSV/TSV table ({error})") from None


def _load_model(path, option="--model", methods=("predict_proba", "predict")):
    """The fitted model saved in the joblib file ``path``: one with one of ``methods``, or a
    function. A joblib file is a pickle, which can run any code when it is loaded: the help
    of ``--model`` says to load only files one trusts."""
    import os

    import joblib
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if not os.path.isfile(path):
        raise UsageError(f"{option}: no file {path!r}")
    try:
        model = joblib.load(path)
    except Exception as error:  # noqa: BLE001 - unpickling junk fails in many ways
        raise UsageError(
            f"{option}: {path!r} is not a model saved with joblib.dump "
            f"({type(error).__name__}: {error})"
        ) from None
    wanted = f"a fitted model (an object with {' or '.join(methods)}, or a function)"
    if isinstance(model, type):  # (a class is callable and has the methods)
        raise UsageError(
            f"{option}: {path!r} holds the class {model.__qualname__}, not {wanted}: save a "
            "fitted instance"
        )
    if not (callable(model) or any(hasattr(model, m) for m in methods)):
        raise UsageError(f"{option}: {path!r} holds a {type(model).__name__}, not {wanted}")
    if isinstance(model, BaseEstimator):
        try:
            check_is_fitted(model)
        except NotFittedError:
            raise UsageError(
                f"{option}: {path!r} holds an unfitted {type(model).__name__}: save it after fit"
            ) from None
    return model


def cmd_explain(args, out=None):
    out = sys.stdout if out is None else out
    from . import AnchorExplainer, NoAnchorWarning
    from .samplers import TabularSampler

    _writable(args.json, "--json")
    model = _load_model(args.model)
    reference = _read_table(args.reference, "--reference")
    data = _read_table(args.data, "--data") if args.data else reference
    if args.drop:
        for name, table in (("--reference", reference), ("--data", data)):
            missing = [c for c in args.drop if c not in table.columns]
            if missing:
                raise UsageError(f"--drop: {missing} not in the columns of {name}")
        reference = reference.drop(columns=args.drop)
        data = data.drop(columns=args.drop)
    rows = args.rows if args.rows else list(range(min(5, len(data))))
    bad = [r for r in rows if not 0 <= r < len(data)]
    if bad:
        raise UsageError(f"--rows: {bad} out of range for {len(data)} rows of data")
    explainer = AnchorExplainer(
        model,
        threshold=args.threshold,
        beam_size="auto" if args.beam_size is None else args.beam_size,
        sampler=TabularSampler(perturbation=args.perturbation, bounds=args.bounds),
        random_state=args.random_state,
        n_jobs=args.n_jobs,
    )
    try:
        explainer.fit(reference)
    except (ValueError, TypeError) as error:  # data the model cannot take, in words
        hint = " Leave such columns out with --drop." if "not fitted on" in str(error) else ""
        raise UsageError(f"--reference: {error}{hint}") from None
    with warnings.catch_warnings():
        # a rule that is not an anchor says so where it is printed ([NOT AN ANCHOR: ...])
        warnings.simplefilter("ignore", NoAnchorWarning)
        anchors = explainer.explain(data.iloc[rows])
    predicted = model.predict(data)
    # without --data the rows come from the reference data: not held out
    checked_on = "held-out" if args.data else "reference-data"
    for r, anchor in zip(rows, anchors):
        prec, cov = _held_out(anchor, data, predicted, skip=r)
        _print_anchor(r, anchor, prec, cov, out, explainer, args.random_state, checked_on)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([a.to_dict() for a in anchors], fh, indent=2)
        print(f"\nwrote {args.json}", file=out)
    return 0


def _load_text_model(spec):
    """A saved sklearn model (joblib file) or a Hugging Face model (folder or hub name)."""
    import os

    if os.path.isfile(spec) or spec.lower().endswith((".joblib", ".pkl", ".pickle")):
        # (a missing file is named as such, not sought on the hub)
        return _load_model(spec, methods=("predict_proba",))
    from .hf import HFTextClassifier

    model = HFTextClassifier(spec)
    try:
        model._load()  # now, to name a bad --model before the documents are read
    except ImportError as error:
        raise UsageError(f"--model: {spec!r} is not a file; {error}") from None
    except (OSError, ValueError) as error:  # transformers: not found, offline, not a model
        raise UsageError(
            f"--model: {spec!r} is neither a joblib file nor a Hugging Face model folder or "
            f"hub name that could be loaded ({error})"
        ) from None
    return model


def _writable(path, option):
    """Check an output file can be written before the work that fills it is done."""
    import os

    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{option}: {path!r} is a folder, not a file")
    if not os.path.isdir(folder):
        raise UsageError(f"{option}: no folder {folder!r} to write {os.path.basename(path)!r} in")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{option}: {path!r} cannot be written")


def _html_report(top_terms, title):
    """A self-contained HTML page with one bar chart (inline SVG) per class."""
    from html import escape

    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title></head><body style='font-family:sans-serif'>",
        f"<h1>{escape(title)}</h1>",
    ]
    for label, terms in top_terms.items():
        parts.append(f"<h2>class {escape(str(label))}</h2>")
        if not terms:
            parts.append("<p>no anchor words</p>")
            continue
        finite = [s for _, s in terms if np.isfinite(s)]
        top = max(finite) if finite and max(finite) > 0 else 1.0
        height = 22 * len(terms) + 10
        parts.append(f"<svg width='640' height='{height}' role='img'>")
        for i, (word, score) in enumerate(terms):
            width = 400 * (min(score, top) / top if np.isfinite(score) else 1.0)
            y = 22 * i + 5
            parts.append(
                f"<text x='150' y='{y + 14}' text-anchor='end' font-size='13'>"
                f"{escape(word)}</text><rect x='160' y='{y}' width='{max(width, 1):.1f}' "
                f"height='18' fill='#4c78a8'/><text x='{165 + width:.1f}' y='{y + 14}' "
                f"font-size='11'>{score:.4g}</text>"
            )
        parts.append("</svg>")
    parts.append("</body></html>")
    return "\n".join(parts)


def cmd_global(args, out=None):
    """Top words per class over a CSV/TSV of texts (``skanchors global``)."""
    out = sys.stdout if out is None else out
    import pandas as pd

    from .aggregation import GlobalAnchorAggregator

    _writable(args.json, "--json")
    _writable(args.html, "--html")
    _writable(args.checkpoint, "--checkpoint")  # (written after the first batch)
    table = _read_table(args.data, "--data")
    column = args.text_column
    if column is None:
        # (pandas 3 reads text as its string dtype, earlier versions as object)
        texts = [
            c
            for c in table.columns
            if pd.api.types.is_object_dtype(table[c]) or pd.api.types.is_string_dtype(table[c])
        ]
        if not texts:
            raise UsageError(f"--data: {args.data} has no text column")
        # the texts rather than, say, a label column of strings: the longest on average
        length = {c: table[c].dropna().astype(str).str.len().mean() for c in texts}
        column = max(texts, key=lambda c: (length[c], -texts.index(c)))
    elif column not in table.columns:
        raise UsageError(f"--text-column: no column {column!r} in {list(table.columns)}")
    documents = table[column].fillna("").astype(str).tolist()
    model = _load_text_model(args.model)
    from .aggregation._checkpoint import CheckpointError

    agg = GlobalAnchorAggregator(
        model,
        aggregation=args.aggregation,
        k=args.k,
        threshold=args.threshold,
        delta=args.delta,
        max_documents=args.max_documents,
        batch_size=args.batch_size,
        max_time=args.max_time,
        checkpoint=args.checkpoint,
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=args.verbose,
    )
    try:
        agg.fit(documents)
    except CheckpointError as error:  # (read before any document is explained)
        raise UsageError(f"--checkpoint: {error}") from None
    state = "stopped early" if agg.stopped_early_ else "complete"
    print(
        f"{agg.n_documents_seen_} documents ({state}), {agg.elapsed_time_:.1f} s, "
        f"{agg.n_rows_predicted_} rows predicted; top {args.k} words by G_{args.aggregation}:",
        file=out,
    )
    for label, terms in agg.top_terms_.items():
        print(f"\nclass {label}", file=out)
        for rank, (word, score) in enumerate(terms, 1):
            print(f"  {rank:3d}. {word:<20s} {score:.4g}", file=out)
    # strict JSON has no Infinity (inverse_pr scores a word never anchored +inf): null, the
    # list's order still ranks it
    result = {
        str(label): [{"word": w, "score": s if np.isfinite(s) else None} for w, s in terms]
        for label, terms in agg.top_terms_.items()
    }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
        print(f"\nwrote {args.json}", file=out)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(_html_report(agg.top_terms_, f"Top words per class: {args.data}"))
        print(f"wrote {args.html}", file=out)
    return 0


def _model_names(paths):
    """A name per model file: its name without the suffix, or the path where two share it."""
    import os

    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    return [stem if stems.count(stem) == 1 else path for stem, path in zip(stems, paths)]


def cmd_compare(args, out=None):
    """Compare saved models by what their anchors rely on (``skanchors compare``)."""
    out = sys.stdout if out is None else out
    from . import AnchorExplainer
    from .aggregation import GlobalAnchorAggregator
    from .compare import compare_models

    _writable(args.json, "--json")
    _writable(args.html, "--html")
    if len(set(args.model)) < len(args.model):
        raise UsageError("--model: the same file is given twice")
    table = _read_table(args.data, "--data")
    labels = None
    if args.label is not None:
        if args.label not in table.columns:
            raise UsageError(f"--label: no column {args.label!r} in {list(table.columns)}")
        labels = table[args.label].to_numpy()
    text = args.text_column is not None
    reference = None
    if text:
        if args.reference or args.drop:
            raise UsageError("--reference and --drop apply to tables, not to --text-column")
        if args.text_column not in table.columns:
            raise UsageError(
                f"--text-column: no column {args.text_column!r} in {list(table.columns)}"
            )
        data = table[args.text_column].fillna("").astype(str).tolist()
        models = [_load_text_model(path) for path in args.model]
    else:
        drop = list(args.drop or []) + ([args.label] if args.label is not None else [])
        missing = [c for c in args.drop or [] if c not in table.columns]
        if missing:
            raise UsageError(f"--drop: {missing} not in the columns of --data")
        data = table.drop(columns=drop)
        if args.reference:
            reference = _read_table(args.reference, "--reference")
            reference = reference.drop(columns=[c for c in drop if c in reference.columns])
        models = [_load_model(path) for path in args.model]
    named = dict(zip(_model_names(args.model), models))
    try:
        result = compare_models(
            named,
            data,
            y=labels,
            reference=reference,
            n_rows=args.n_rows,
            k=args.k,
            explainer=AnchorExplainer(None, threshold=args.threshold),
            aggregator=GlobalAnchorAggregator(None, threshold=args.threshold) if text else None,
            random_state=args.random_state,
            n_jobs=args.n_jobs,
        )
    except (ValueError, TypeError) as error:  # models or data that do not fit together
        hint = ""
        if "not fitted on" in str(error) or "unseen at fit time" in str(error):
            hint = " Leave such columns out with --drop (a label column: name it with --label)."
        raise UsageError(f"{error}{hint}") from None
    print(result, file=out)
    reliance = by_class = None
    if args.features:
        try:
            reliance = result.reliance(args.features)
        except ValueError as error:
            raise UsageError(f"--features: {error}") from None
        by_class = result.reliance(args.features, by_class=True)
        print(f"\nreliance on {', '.join(args.features)} (share of explained rows):", file=out)
        for name, share in reliance.items():
            split = ", ".join(f"predicted {c}: {v:.3f}" for c, v in by_class[name].items())
            print(f"  {name}: {share:.3f} ({split})", file=out)
    if len(result.disagreements_):
        shown = result.disagreements_.head(args.show_disagreements)
        print(f"\nrows predicted differently (the first {len(shown)} explained):", file=out)
        for row, values in shown.iterrows():
            print(f"  row {row}:", file=out)
            for name in result.names_:
                print(
                    f"    {name} predicts {values[f'{name} prediction']}: "
                    f"{values[f'{name} anchor']}",
                    file=out,
                )
    if args.json:
        data = result.to_dict()
        if reliance is not None:
            data["reliance"] = {
                "features": list(args.features),
                "share": {str(n): v for n, v in reliance.items()},
                "by_class": {
                    str(n): {str(c): (None if v != v else v) for c, v in split.items()}
                    for n, split in by_class.items()
                },
            }
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=2, allow_nan=False)
        print(f"\nwrote {args.json}", file=out)
    if args.html:
        page = result.to_html(title=f"Model comparison: {args.data}", features=args.features)
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(page)
        print(f"wrote {args.html}", file=out)
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="skanchors", description="Anchors: IF-THEN rules that explain any classifier."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument(
            "--threshold",
            type=_bounded(float, 0, 1, low_open=True),
            default=0.95,
            help="precision threshold, in (0, 1]",
        )
        p.add_argument("--random-state", type=_bounded(int, 0, 2**32 - 1), default=0, help="seed")
        p.add_argument("--n-jobs", type=_n_jobs, default=None)

    demo = sub.add_parser("demo", help="explain a model on the shipped demo data")
    common(demo)
    demo.add_argument(
        "--rows",
        type=_POSITIVE,
        default=None,
        help="passengers to explain (default 5); with --compare, rows or messages explained "
        "per model (default 100)",
    )
    demo.add_argument(
        "--compare",
        action="store_true",
        help="model selection by explanations: two models per data set, one of which learned "
        "a planted leak that accuracy on the validation split rewards",
    )
    demo.add_argument(
        "--images",
        action="store_true",
        help="explain faces instead: a model that learned a bright corner (needs the image extra)",
    )
    demo.set_defaults(func=cmd_demo, parser=demo)

    ex = sub.add_parser("explain", help="explain rows of a CSV with a saved sklearn model")
    common(ex)
    ex.add_argument(
        "--model",
        required=True,
        help="joblib file of a fitted model (a pickle, which can run code when loaded: load "
        "only files you trust)",
    )
    ex.add_argument("--reference", required=True, help="CSV/TSV of reference (training) data")
    ex.add_argument("--data", help="CSV/TSV with the rows to explain (default: reference)")
    ex.add_argument(
        "--rows", type=_row_numbers, help="comma-separated row numbers (default: the first 5)"
    )
    ex.add_argument("--drop", nargs="*", help="columns to drop (e.g. the label)")
    ex.add_argument(
        "--beam-size", type=_POSITIVE, default=None, help="default: 10 (AnchorExplainer's 'auto')"
    )
    ex.add_argument(
        "--perturbation",
        choices=("auto", "reference", "replace"),
        default="auto",
        help="what precision is measured on: the reference rows that satisfy a rule, the "
        "reference rows with values replaced, or the first where a rule validates on them, "
        "else the second (default; see TabularSampler)",
    )
    ex.add_argument(
        "--bounds",
        choices=("interval", "bin", "all"),
        default="interval",
        help="a numeric feature's predicates: its bin (default), the bin's two edges, or "
        "every edge (see TabularSampler)",
    )
    ex.add_argument("--json", help="write the anchors as JSON to this file")
    ex.set_defaults(func=cmd_explain, parser=ex)

    gl = sub.add_parser("global", help="top words per class over a CSV/TSV of texts")
    common(gl)
    gl.add_argument(
        "--model",
        required=True,
        help="joblib file (a pickle, which can run code when loaded: load only files you "
        "trust) or Hugging Face model path/name",
    )
    gl.add_argument("--data", required=True, help="CSV/TSV with a text column")
    gl.add_argument(
        "--text-column",
        help="column of texts (default: the string column with the longest values on average)",
    )
    gl.add_argument(
        "--aggregation", default="pr", choices=["pr", "sq", "av", "h", "base", "inverse_pr"]
    )
    gl.add_argument("-k", type=_POSITIVE, default=20, help="top terms per class")
    gl.add_argument(
        "--delta", type=_bounded(float, 0, 1, low_open=True, high_open=True), default=0.1
    )
    gl.add_argument("--max-documents", type=_POSITIVE, default=None)
    gl.add_argument("--batch-size", type=_POSITIVE, default=50, help="documents per anytime step")
    gl.add_argument(
        "--max-time",
        type=_bounded(float, 0, low_open=True),
        default=None,
        help="stop after this many seconds",
    )
    gl.add_argument(
        "--checkpoint",
        help="save the state in this file after each batch, and resume from it when it "
        "exists (data only: loading it runs no code)",
    )
    gl.add_argument(
        "--json", help="write the top terms as JSON to this file (infinite scores as null)"
    )
    gl.add_argument("--html", help="write an HTML report with a bar chart per class")
    gl.add_argument("--verbose", type=_bounded(int, 0), default=0)
    gl.set_defaults(func=cmd_global, parser=gl)

    cm = sub.add_parser(
        "compare", help="compare saved models by what their anchors rely on (model selection)"
    )
    common(cm)
    cm.add_argument(
        "--model",
        required=True,
        action="append",
        help="a model to compare, given once per model: joblib file of a fitted classifier (a "
        "pickle, which can run code when loaded: load only files you trust) or, with "
        "--text-column, a Hugging Face model path/name",
    )
    cm.add_argument("--data", required=True, help="CSV/TSV with the rows or documents to explain")
    cm.add_argument(
        "--text-column", help="compare text classifiers on this column of documents of --data"
    )
    cm.add_argument("--label", help="column of true labels: reports each model's accuracy")
    cm.add_argument("--reference", help="tables: CSV/TSV of reference data (default: --data)")
    cm.add_argument("--drop", nargs="*", help="tables: columns to drop (e.g. ids)")
    cm.add_argument(
        "--features",
        nargs="+",
        help="columns (or words) to report each model's reliance on",
    )
    cm.add_argument(
        "--n-rows", type=_POSITIVE, default=200, help="rows explained, at random (default 200)"
    )
    cm.add_argument("-k", type=_POSITIVE, default=10, help="top features per class")
    cm.add_argument(
        "--show-disagreements",
        type=_bounded(int, 0),
        default=5,
        help="rows predicted differently to print with each model's anchor (default 5; the "
        "JSON and HTML files hold all that were explained)",
    )
    cm.add_argument("--json", help="write the comparison as JSON to this file")
    cm.add_argument("--html", help="write a self-contained HTML report to this file")
    cm.set_defaults(func=cmd_compare, parser=cm)
    return parser


def main(argv=None):
    """Entry point of the ``skanchors`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as error:
        # the subcommand's usage and the message on stderr, exit status 2
        getattr(args, "parser", parser).error(str(error))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
