"""AOPC^k (seed 001, eq. 7) on a toy model whose probability drops are known exactly."""

import numpy as np
import pytest

from skanchors.metrics import aopc_k, aopc_k_per_class

SPAM_WORDS = {"win", "free", "cash", "prize"}


class ToyModel:
    """p(spam) = 0.3 per distinct spam word present, capped at 1; records what it sees."""

    classes_ = np.array(["ham", "spam"])

    def __init__(self):
        self.seen = []

    def predict_proba(self, X):
        self.seen.extend(X)
        p = np.array([min(1.0, 0.3 * len(SPAM_WORDS & set(t.lower().split()))) for t in X])
        return np.column_stack([1 - p, p])


DOCS = ["win free cash now", "free prize", "win a prize", "hello there", "free time"]


def test_eq7_by_hand():
    # S[spam] = docs 0-2 (p = .9, .6, .6). Prefix drops with terms free, win, cash:
    # doc 0: .3 + .6 + .9 = 1.8; doc 1: .3 + .3 + .3 = .9; doc 2: 0 + .3 + .3 = .6
    values = aopc_k_per_class(ToyModel(), DOCS, {"spam": ["free", "win", "cash"]}, k=3)
    assert values == {"spam": pytest.approx((1.8 + 0.9 + 0.6) / 3 / 4)}
    # (word, score) pairs are accepted; only the first k terms count
    pairs = [("free", 0.9), ("win", 0.5), ("cash", 0.1), ("prize", 0.0)]
    assert aopc_k_per_class(ToyModel(), DOCS, {"spam": pairs}, k=1)["spam"] == pytest.approx(
        (0.3 + 0.3 + 0.0) / 3 / 2
    )


def test_fewer_terms_than_k_hold_the_last_removal_through_rank_k():
    # "free" removed from docs 0 and 1 at ranks 1, 2 and 3 (nothing more to remove): the
    # drops 0.3 count three times each. Ranks beyond the list counted 0, so padding the list
    # with words the model ignores raised AOPC (0.163 -> 0.814 in an audit) and GridSearchCV
    # preferred a padded, wrong list.
    short = aopc_k_per_class(ToyModel(), DOCS, {"spam": ["free"]}, k=3)["spam"]
    assert short == pytest.approx(3 * (0.3 + 0.3) / 3 / 4)
    padded = aopc_k_per_class(ToyModel(), DOCS, {"spam": ["free", "now", "a"]}, k=3)["spam"]
    assert padded == pytest.approx(short)
    better = aopc_k_per_class(ToyModel(), DOCS, {"spam": ["free", "win"]}, k=3)["spam"]
    assert better > short


def test_mean_over_classes_and_unchanged_documents():
    top = {"ham": ["time", "hello"], "spam": ["free", "win", "cash"]}
    per = aopc_k_per_class(ToyModel(), DOCS, top, k=3)
    assert per["ham"] == 0.0  # removing ham words does not change p(ham) here
    assert aopc_k(ToyModel(), DOCS, top, k=3) == pytest.approx(np.mean(list(per.values())))


def test_removal_by_deletion_or_token_and_case():
    model = ToyModel()
    aopc_k_per_class(model, ["win free cash now"], {"spam": ["free"]}, k=1)
    assert "win cash now" in model.seen
    model = ToyModel()
    aopc_k_per_class(model, ["win free cash now"], {"spam": ["free"]}, k=1, removal="[MASK]")
    assert "win [MASK] cash now" in model.seen
    upper = {"spam": ["FREE"]}
    assert aopc_k_per_class(ToyModel(), DOCS, upper, k=1)["spam"] > 0
    assert aopc_k_per_class(ToyModel(), DOCS, upper, k=1, lowercase=False)["spam"] == 0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(k=0), ValueError, "k must be a positive integer"),
        (dict(top_terms={"eggs": ["free"]}), ValueError, "model's classes"),
        (dict(top_terms=["free"]), TypeError, "top_terms must be a dict"),
        (dict(removal=None), TypeError, "removal"),
        (dict(documents=[]), ValueError, "documents contains no documents"),
        (dict(documents=["ok", 1]), TypeError, r"documents\[1\]"),
        # a bare word was read as its letters (AOPC 0.0 for "free", 0.0029 for ["free"])
        (dict(top_terms={"spam": "free"}), TypeError, r"top_terms\['spam'\] must be a list"),
        (dict(top_terms={"spam": None}), TypeError, r"write \[None\]"),
    ],
)
def test_errors(kwargs, error, match):
    args = dict(documents=DOCS, top_terms={"spam": ["free"]}, k=2)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        aopc_k(ToyModel(), **args)
