"""A corpus with planted words and a model that decides by them (shared by the global tests)."""

import numpy as np

from skanchors.samplers import tokenize

PLANTED = ("prize", "cash", "winner")
FILLER = "alpha bravo delta echo golf hotel india kilo lima mike oscar papa romeo tango".split()
STOP = ("the", "and", "to", "of")


def make_docs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        words = list(rng.choice(FILLER, size=5)) + list(rng.choice(STOP, size=2))
        if i % 3 == 0:
            words.append(str(rng.choice(PLANTED)))
        rng.shuffle(words)
        docs.append(" ".join(words))
    return docs


class PlantedModel:
    """Spam (``high``) iff a planted word is present, else ``low``; counts calls; can be armed
    to fail."""

    classes_ = np.array(["ham", "spam"])

    def __init__(self, words=PLANTED, high=0.9, low=0.1):
        self.words = set(words)
        self.high, self.low = high, low
        self.calls = 0
        self.fail = False

    def predict_proba(self, X):
        if self.fail:
            raise RuntimeError("model crashed")
        self.calls += 1
        p = np.array(
            [
                self.high if self.words & {w.lower() for w, _, _ in tokenize(d)} else self.low
                for d in X
            ]
        )
        return np.column_stack([1 - p, p])


DOCS = make_docs()
