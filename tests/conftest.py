"""Shared fixtures. Every test runs offline: HF_HUB_OFFLINE=1."""

import pytest
from hf_models import _build


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def hf(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    # The models are tiny: thread synchronisation would cost more than the arithmetic.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        base = tmp_path_factory.mktemp("hf")
        paths = {
            "bert_mlm": _build(base / "bert_mlm", "bert", "mlm"),
            "bpe_mlm": _build(base / "bpe_mlm", "bpe", "mlm"),
            "clf": _build(base / "clf", "bert", "clf", id2label={0: "zeta", 1: "alpha"}),
            "clf3": _build(
                base / "clf3", "bpe", "clf", id2label={0: "pos", 1: "neg", 2: "neutral"}
            ),
        }
    yield paths
    torch.set_num_threads(threads)


# The planted tabular task's fixtures (``data``, ``planted_explainer``), for the test files of
# the explainer, the rows' explanation and the tabular sampler.
pytest_plugins = ["tabular_planted"]
