"""Candidate filtering of GlobalAnchorAggregator: the exact filter keeps the unfiltered top-k.

The corpora here are built so that every token's anchor test has a known answer: a token's
precision is 1 (an anchor) or at most 1/2 (not one), so the tests come out the same in every
run whichever tokens are tested, and the top-k of each aggregation can be computed by hand.
"""

import itertools

import numpy as np
import pytest

from skanchors.aggregation import GlobalAnchorAggregator, WordFilter, aggregate
from skanchors.aggregation._filtering import entropy_bounds


def _planted_model(texts):
    """1 for ("good" and not "bad") or ("fine" and not "zzz") (issue 44)."""
    p = np.array(
        [
            float(("good" in s and "bad" not in s) or ("fine" in s and "zzz" not in s))
            for s in (set(t.split()) for t in texts)
        ]
    )
    return np.column_stack([1 - p, p])


PLANTED_DOCS = (
    [f"good fine zzz u{i}" for i in range(15)]
    + [f"good alpha v{i}" for i in range(5)]
    + [f"good bad fine x{i}" for i in range(20)]
)
WORDS = dict(min_count=5, stop_words=None)
PLANTED = dict(k=1, order="given", batch_size=20, vocabulary=WordFilter(**WORDS))


def _filtered(params, mode, **words):
    """``params`` with candidate filtering ``mode`` in their word filter."""
    return dict(params, vocabulary=WordFilter(**{**WORDS, **words, "filtering": mode}))


@pytest.mark.parametrize("aggregation", ["av", "pr", "inverse_pr"])
def test_the_optimistic_filter_loses_the_top_word_the_exact_one_keeps(aggregation):
    # After the first batch (15 + 5 documents) "good" is an anchor 20 times out of 20 and
    # "fine" 0 times out of 15: the optimistic bound of "fine" (20 / 35 for av) is below the
    # current best (1.0), so it is never tested again, while "good" falls to 20 / 40 when the
    # last 20 documents are tested; without filtering "fine" ends at 20 / 35 and wins.
    expected = {"av": "fine", "pr": "fine", "inverse_pr": "bad"}[aggregation]
    lost = 0
    for seed in range(10):
        params = dict(PLANTED, aggregation=aggregation, random_state=seed)
        unfiltered = GlobalAnchorAggregator(_planted_model, **_filtered(params, False))
        unfiltered.fit(PLANTED_DOCS)
        exact = GlobalAnchorAggregator(_planted_model, **params).fit(PLANTED_DOCS)
        optimistic = GlobalAnchorAggregator(_planted_model, **_filtered(params, "optimistic"))
        optimistic.fit(PLANTED_DOCS)
        assert [w for w, _ in unfiltered.top_terms_[1]] == [expected]
        assert exact.top_terms_[1] == unfiltered.top_terms_[1]
        lost += optimistic.top_terms_[1] != unfiltered.top_terms_[1]
    assert lost == 10  # the approximate filter, documented as such, loses it every time


def test_the_exact_filter_skips_what_cannot_reach_the_top():
    # av, k=1, batches of 10, all documents predicted 1; "good" has precision 1, "alpha" and
    # "beta" 1/2. After two batches "good" is at 20/20 with 10 occurrences to come (so it ends
    # >= 20/30) and "alpha" at 0/20 with 10 to come (so it ends <= 10/30): the exact filter
    # leaves alpha's last 10 occurrences untested but for the audited tenth.
    docs = [f"good alpha beta v{i}" for i in range(20)] + [f"good alpha x{i}" for i in range(10)]
    params = dict(PLANTED, aggregation="av", batch_size=10, random_state=0)
    unfiltered = GlobalAnchorAggregator(_planted_model, **_filtered(params, False))
    exact = GlobalAnchorAggregator(_planted_model, **params)
    unfiltered.fit(docs)
    exact.fit(docs)
    assert exact.top_terms_ == unfiltered.top_terms_ == {0: [], 1: [("good", 1.0)]}
    skipped = exact._skipped[exact._index["alpha"], 1]
    assert 7 <= skipped <= 10 and exact._skipped.sum() == skipped
    assert exact.n_tokens_tested_ == unfiltered.n_tokens_tested_ - skipped
    assert exact.n_rows_predicted_ < unfiltered.n_rows_predicted_
    assert exact.untested_counts_.loc["alpha", 1] == skipped
    assert exact.negative_counts_.loc["alpha", 1] == 30 - skipped


def _precision(table, words, a):
    """Precision of keeping ``a`` in a document holding ``words`` (the others kept or masked
    with probability 1/2 each), for the model ``table``."""
    others = sorted(words - {a})
    kept = [
        frozenset([a, *s])
        for r in range(len(others) + 1)
        for s in itertools.combinations(others, r)
    ]
    return float(np.mean([table[s] == table[words] for s in kept]))


class SubsetModel:
    """The class of a text is ``table[set of the relevant words it holds]``.

    Documents hold one to three relevant words, chosen so that every token's precision is 1
    or at most 1/2 (see :func:`_case`), and a word of their own, too rare to be tested: every
    anchor test has a known answer, whatever else the run tests.
    """

    def __init__(self, words, table, n_classes):
        self.words = frozenset(words)
        self.table = table
        self.classes_ = np.arange(n_classes)

    def predict_proba(self, X):
        out = np.zeros((len(X), len(self.classes_)))
        for i, text in enumerate(X):
            out[i, self.table[frozenset(self.words.intersection(text.split()))]] = 1.0
        return out

    def truth(self, docs, min_count):
        """``A+``, ``A-``, document counts and occurrences of every word, by hand."""
        vocab = sorted({w for d in docs for w in d.split()})
        index = {w: j for j, w in enumerate(vocab)}
        shape = (len(vocab), len(self.classes_))
        a_pos, a_neg, doc_freq = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        occ = np.zeros(len(vocab))
        for d in docs:
            for w in d.split():
                occ[index[w]] += 1
        for d in docs:
            tokens = d.split()
            present = frozenset(self.words.intersection(tokens))
            c = self.table[present]
            for w in set(tokens):
                doc_freq[index[w], c] += 1
            for w in tokens:
                if occ[index[w]] >= min_count:
                    anchor = _precision(self.table, present, w) == 1.0
                    (a_pos if anchor else a_neg)[index[w], c] += 1
        return vocab, a_pos, a_neg, doc_freq, occ


def _case(seed):
    """A random corpus and SubsetModel. The model's table is random; documents hold the word
    sets of one to three words whose tokens all have precision 1 or at most 1/2. They come in
    phases, each drawing from its own random mix of sets, processed in the given order: a
    word's share of anchors early on can be far from its final one."""
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(2, 4))
    words = [f"w{chr(97 + j)}" for j in range(int(rng.integers(5, 9)))]
    table = {
        frozenset(s): int(rng.integers(n_classes))
        for r in range(4)
        for s in itertools.combinations(words, r)
    }
    sets = [
        s
        for s in table
        if s and all(p == 1.0 or p <= 0.5 for p in (_precision(table, s, a) for a in s))
    ]
    docs = []
    for _ in range(int(rng.integers(2, 5))):
        mix = rng.dirichlet(np.full(len(sets), 0.2))
        for j in rng.choice(len(sets), size=int(rng.integers(10, 25)), p=mix):
            docs.append(" ".join([*sorted(sets[j]), f"z{len(docs)}"]))
    params = dict(
        k=int(rng.integers(1, 4)),
        batch_size=int(rng.integers(3, 9)),
        order="given",
        vocabulary=WordFilter(min_count=2, stop_words=None),
        random_state=seed,
    )
    return SubsetModel(words, table, n_classes), docs, params


def _expected_top(model, docs, name, k, min_count):
    vocab, a_pos, a_neg, doc_freq, occ = model.truth(docs, min_count)
    scores = aggregate(name, a_pos, a_neg, doc_freq, n_occurrences=occ, min_count=min_count)
    out = {}
    for c in model.classes_.tolist():
        ok = ~np.isnan(scores[:, c])
        if name in ("pr", "sq", "av", "h"):
            ok &= a_pos[:, c] > 0
        order = sorted(np.flatnonzero(ok).tolist(), key=lambda j: (-scores[j, c], vocab[j]))
        out[c] = [vocab[j] for j in order[:k]]
    return out


@pytest.mark.parametrize("aggregation", ["av", "sq", "h", "pr"])
def test_exact_filtering_gives_the_unfiltered_top_k_on_random_corpora(aggregation):
    skipped = 0
    n_cases = 25
    for seed in range(n_cases):
        model, docs, params = _case(seed)
        min_count = params["vocabulary"].min_count
        expected = _expected_top(model, docs, aggregation, params["k"], min_count)
        runs = {
            mode: GlobalAnchorAggregator(
                model, aggregation=aggregation, **_filtered(params, mode, min_count=min_count)
            ).fit(docs)
            for mode in (False, True)
        }
        for mode, agg in runs.items():
            got = {c: [w for w, _ in t] for c, t in agg.top_terms_.items()}
            assert got == expected, (seed, mode)
        skipped += runs[True].n_tokens_tested_ < runs[False].n_tokens_tested_
    # the exact filter does skip (h: where the entropies allow), except for pr, whose totals
    # couple every occurrence
    assert skipped >= {"av": 12, "sq": 12, "h": 5, "pr": 0}[aggregation], skipped
    if aggregation == "pr":
        assert skipped == 0


def _marked_model(texts):
    """Class 1 if a ``p*`` marker is present, 0 if an ``n*`` one is; without markers, 1 iff
    "xx" or "yy" is present. Every token of the documents below has precision >= 0.999."""
    out = []
    for t in texts:
        words = t.split()
        if any(w.startswith("p") for w in words):
            out.append(1.0)
        elif any(w.startswith("n") for w in words):
            out.append(0.0)
        else:
            out.append(float("xx" in words or "yy" in words))
    p = np.array(out)
    return np.column_stack([1 - p, p])


def _marked(word, label, n, start):
    return [
        " ".join([word, *(f"{'pn'[1 - label]}{start + i}m{j}" for j in range(10))])
        for i in range(n)
    ]


@pytest.mark.parametrize("last", ["ww", "yy"])
def test_exact_h_filtering_respects_the_entropy_range(last):
    # Anchors (every token is one): xx 36 times in class 1 and once in class 0 (entropy
    # 0.41), yy only in class 1, zz only in class 0, ww once in each class (entropy log 2,
    # the largest: it sets H_max). G_h(xx, 1) = 6 (1 - 0.41 / H_max).
    # ww last: ww cannot reach either top-1 (sqrt(1) < zz's and yy's sqrt(4)), but without
    # it H_max would be xx's own entropy and xx's score 0, so yy (2) would beat xx (2.45):
    # ww's occurrences must be tested. yy last (9 of them): yy ends at 3 > 2.45, but its
    # bound sqrt(9) is below xx's sqrt(36) = 6: only the entropy factor of xx's lower bound
    # (<= 1 - 0.41 / log 2) keeps yy tested.
    parts = {
        "xx1": _marked("xx", 1, 36, 0),
        "xx0": _marked("xx", 0, 1, 100),
        "zz": _marked("zz", 0, 4, 200),
        "ww": _marked("ww", 0, 1, 300) + _marked("ww", 1, 1, 400),
        "yy": _marked("yy", 1, 4 if last == "ww" else 9, 500),
    }
    order = ["xx1", "xx0", "zz", "yy", "ww"] if last == "ww" else ["xx1", "xx0", "zz", "ww", "yy"]
    docs = [d for part in order for d in parts[part]]
    params = dict(aggregation="h", k=1, order="given")
    expected = {0: "zz", 1: "xx" if last == "ww" else "yy"}
    for seed in range(3):
        runs = [
            GlobalAnchorAggregator(
                _marked_model,
                batch_size=5,
                random_state=seed,
                **_filtered(params, mode, min_count=2),
            ).fit(docs)
            for mode in (False, True)
        ]
        for agg in runs:
            assert {c: [w for w, _ in t] for c, t in agg.top_terms_.items()} == {
                c: [w] for c, w in expected.items()
            }
        assert runs[1].top_terms_ == runs[0].top_terms_
        # the case is sharp: without the late word's occurrences the answer changes
        counts = runs[0].positive_counts_.copy()
        counts.loc[last] = 0 if last == "ww" else [0, 4]
        scores = aggregate("h", counts.to_numpy(), np.zeros(counts.shape))
        best = counts.index[np.nanargmax(scores[:, 1])]
        assert best != expected[1]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_entropy_bounds_hold_the_entropy_of_every_completion(n_classes):
    rng = np.random.default_rng(n_classes)
    low = rng.integers(0, 4, size=(300, n_classes)).astype(float)
    low[rng.random(low.shape) < 0.3] = 0
    high = low + rng.integers(0, 4, size=low.shape) * (rng.random(low.shape) < 0.6)
    h_lo, h_hi = entropy_bounds(low, high)
    for i in range(len(low)):
        grids = [np.arange(lo, hi + 1) for lo, hi in zip(low[i], high[i])]
        seen = []
        for counts in itertools.product(*grids):
            s = np.sqrt(np.array(counts, dtype=float))
            if s.sum() == 0:
                continue
            p = s / s.sum()
            seen.append(-(p[p > 0] * np.log(p[p > 0])).sum())
        if seen:
            assert h_lo[i] <= min(seen) + 1e-12 and max(seen) <= h_hi[i] + 1e-12, i
            if n_classes == 2:  # exact there
                assert h_lo[i] == pytest.approx(min(seen), abs=1e-12)
                assert h_hi[i] >= max(seen) - 1e-12
