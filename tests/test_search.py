"""Beam search: rounds that cannot hold an anchor skip the bandit's identification."""

import numpy as np
import pytest
from test_bandit import Coins, _FiniteCoins
from test_tabular import PlantedModel, planted_data, row

from skanchors import KLLUCB, AnchorExplainer
from skanchors import _search as search
from skanchors._bandit import arm_bounds
from skanchors._search import HOPELESS_BUDGET, HOPELESS_MARGIN, _below_threshold
from skanchors.discretizers import EdgesDiscretizer

BETA = np.log(21 / 0.1)  # the search's rate for beam_size 1 and 20 predicates, delta 0.1


def test_round_far_below_the_threshold_holds_no_anchor():
    arms = Coins([0.5, 0.6, 0.7, 0.75], seed=0)
    assert _below_threshold(arms, 0.95, BETA, 100)
    # every arm was sampled until its upper bound fell below the threshold, and keeps them
    assert (arms.n_samples >= 100).all()
    assert (arm_bounds(arms, np.arange(4), BETA)[1] < 0.95).all()
    # a few samples suffice far from the threshold: one model call per step, not per arm
    assert arms.calls <= 3


def test_round_with_a_precise_candidate_goes_to_the_bandit():
    arms = Coins([0.5, 0.6, 0.99], seed=0)
    assert not _below_threshold(arms, 0.95, BETA, 100)
    assert arms.n_positives[2] / arms.n_samples[2] >= 0.95 - HOPELESS_MARGIN


@pytest.mark.parametrize("seed", range(5))
def test_arm_close_to_the_threshold_is_never_declared_hopeless_wrongly(seed):
    # true precision 0.96: the check must hand it to the bandit (only the estimate's luck
    # could say otherwise, and at this rate it does not on these seeds)
    arms = Coins([0.3, 0.96, 0.4], seed=seed)
    assert not _below_threshold(arms, 0.95, BETA, 10)


def test_check_stops_when_the_open_arms_run_out_of_samples():
    # three samples cannot rule out precision 0.95; the pull never exceeds the supply
    arms = _FiniteCoins([0.5, 0.6], available=[3, 3], seed=0)
    assert not _below_threshold(arms, 0.95, BETA, 10)
    assert (arms.n_samples == 3).all()


class RecordingBandit(KLLUCB):
    """KL-LUCB that records the candidates of every selection it makes."""

    def __init__(self):
        super().__init__()
        self.rounds = []

    def select(self, arms, n_best, **kwargs):
        self.rounds.append(list(arms.candidates))
        return super().select(arms, n_best, **kwargs)


def test_planted_rule_found_through_a_round_without_anchor():
    # Predicts 1 iff x0 > 0.7 and colour == red: alone, each predicate holds the prediction
    # about a third of the time, so the first round cannot hold an anchor and the bandit is
    # not asked to rank it; the second round still finds exactly the planted rule.
    bandit = RecordingBandit()
    disc = EdgesDiscretizer(edges={"x0": [0.3, 0.7]})
    explainer = AnchorExplainer(
        PlantedModel(), discretizer=disc, beam_size=1, bandit=bandit, random_state=0
    ).fit(planted_data())
    anchor = explainer.explain(row(0.9, "red"))[0]
    assert anchor.is_anchor
    assert sorted(str(p) for p in anchor.predicates) == ["colour = red", "x0 > 0.7"]
    assert bandit.rounds, "the round holding the anchor is ranked by the bandit"
    assert all(len(c) >= 2 for r in bandit.rounds for c in r)


def test_check_leaves_rounds_with_many_open_candidates_to_the_bandit():
    # 60 sampled candidates, all still open: proving each below the threshold would cost 60
    # batches, more than the budget, so the check draws nothing and the bandit decides
    many = Coins([0.5] * 60, seed=0)
    many.pull(np.arange(60), 5)
    assert not _below_threshold(many, 0.95, BETA, 100)
    assert (many.n_samples == 5).all() and many.calls == 1
    # the same with a few candidates fits in the budget and settles the round
    few = Coins([0.5] * 5, seed=0)
    few.pull(np.arange(5), 5)
    assert HOPELESS_BUDGET >= 5 and _below_threshold(few, 0.95, BETA, 100)
    # arms without samples are not charged: the bandit's warm start draws them anyway
    fresh = Coins([0.5] * 60, seed=0)
    assert _below_threshold(fresh, 0.95, BETA, 100)


def test_text_rounds_are_always_ranked_by_the_bandit(monkeypatch):
    # "win" alone keeps the prediction about half the time: a round without an anchor, which
    # a text search still leaves to the bandit (its samples are shared across candidates)
    from test_text import DOCS, SPAM, WordModel

    from skanchors.samplers import UnkSampler

    def forbidden(*args):
        raise AssertionError("the below-threshold check ran on a text search")

    monkeypatch.setattr(search, "_below_threshold", forbidden)
    explainer = AnchorExplainer(WordModel("free", "win"), sampler=UnkSampler(), random_state=0)
    anchor = explainer.fit(DOCS).explain([SPAM])[0]
    assert anchor.words == ["win", "free"] and anchor.is_anchor
