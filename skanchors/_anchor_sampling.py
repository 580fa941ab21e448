"""Fresh perturbations of a found anchor: :meth:`~skanchors.AnchorExplainer.sample` and
:meth:`~skanchors.AnchorExplainer.perturbation_precision`."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._explanation import Anchor
from ._validation import check_memory


class _AnchorSampling:
    """:class:`~skanchors.AnchorExplainer`'s methods that draw from an anchor's distribution."""

    def sample(self, anchor, n_samples=1000, *, random_state=None):
        """Draw fresh perturbations from ``D(z | A)``, the distribution ``anchor`` is about.

        The anchor's precision is a claim about these draws: the model keeps
        ``anchor.prediction`` on at least ``threshold - 0.025`` of them, with probability at
        least ``1 - delta`` (see the user guide's "Statistical guarantees"). Drawing anew lets
        you check that claim, or look at what the rule was tested on; :meth:`Anchor.covers`
        checks it on real rows instead.

        Parameters
        ----------
        anchor : Anchor
            An anchor this explainer returned (it keeps the explained row in
            ``anchor.instance``; anchors rebuilt from JSON do not).
        n_samples : int >= 1, default=1000
        random_state : int, numpy Generator or RandomState, or None, default=None
            Seeds the draws (independent of the explainer's own ``random_state``).

        Returns
        -------
        Z : model input with ``n_samples`` rows or documents, each satisfying the anchor
            A DataFrame or array with the reference data's columns, or a list of str.
        """
        instance, ids = self._anchor_instance(anchor)
        if not isinstance(n_samples, Integral) or isinstance(n_samples, bool) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
        width = max(getattr(self, "n_features_in_", 1), instance.n_predicates)
        check_memory("n_samples", n_samples, 4 * n_samples * width, "the perturbations")
        keys = instance.sample(ids, int(n_samples), _generator(random_state))[0]
        return instance.decode(keys)

    def perturbation_precision(self, anchor, n_samples=2000, *, random_state=None):
        """Share of fresh perturbations of ``anchor`` (:meth:`sample`) on which the model
        keeps ``anchor.prediction`` (regression: stays within ``tolerance`` of it).

        An estimate from ``n_samples`` draws (its standard error is at most
        ``0.5 / sqrt(n_samples)``), made without the samples the search used, so it checks the
        anchor's ``precision`` independently. The model calls it makes are not counted in any
        anchor.

        Returns
        -------
        precision : float in [0, 1]
        """
        Z = self.sample(anchor, n_samples, random_state=random_state)
        self._current_model()
        task = self._task()
        outcomes = task.outcomes(Z, self)
        if anchor.tolerance is not None:  # the anchor's own band (set_params may have moved ours)
            return float(np.mean(np.abs(outcomes - anchor.prediction) <= anchor.tolerance))
        return float(np.mean(task.agrees(outcomes, anchor.prediction)))

    def _anchor_instance(self, anchor):
        """The instance sampler of the anchor's row and the anchor's predicate indices."""
        check_is_fitted(self, "sampler_")
        self._validate_params()
        if not isinstance(anchor, Anchor):
            raise TypeError(
                f"anchor must be an Anchor returned by explain(), got {type(anchor).__name__}."
            )
        if anchor.instance is None:
            raise ValueError(
                "anchor has no instance (the explained row): anchors rebuilt from JSON do not "
                "keep it. Explain the row again with this explainer."
            )
        if anchor.perturbation is not None:
            instance = self.sampler_.instance(anchor.instance, perturbation=anchor.perturbation)
        else:
            instance = self.sampler_.instance(anchor.instance)
        ids = []
        for p in anchor.predicates:
            try:
                ids.append(instance.predicates.index(p))
            except ValueError:
                raise ValueError(
                    f"anchor's predicate {str(p)!r} is not one this explainer forms for the "
                    "anchor's row: was the anchor found by another explainer, or before a new "
                    "fit?"
                ) from None
        return instance, tuple(sorted(set(ids)))


def _generator(random_state):
    """A numpy Generator from an int, None, a Generator or a RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if random_state is None or (
        isinstance(random_state, Integral) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be an int, a numpy Generator or RandomState, or None; got "
        f"{random_state!r}."
    )
