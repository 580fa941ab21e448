#!/usr/bin/env bash
# Create the benchmark's own virtualenv with the packages skanchors is compared with (alibi,
# anchor-exp, lime) and the benchmark-only packages (xgboost, vaderSentiment and its corpora),
# next to skanchors. None of them is a dependency of skanchors: they live only here.
#
# usage: bash bench/setup_peers.sh [VENV_DIR]      (default: bench/.venv)
#        PYTHON=/usr/bin/python3.11 bash bench/setup_peers.sh
#
# alibi 0.9.6 needs numpy<2, so this venv pins numpy<2 and installs skanchors with --no-deps
# after its own dependencies, so pip cannot upgrade numpy past 2. No torch, no spaCy model:
# the text explainers of alibi and anchor-exp can use spacy.blank("en").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${1:-$here/.venv}"
python="${PYTHON:-python3.11}"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: $python not found (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi

echo "creating $venv with $("$python" --version)"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install --upgrade pip setuptools wheel

# numpy<2 first and in every install line, so no later resolver step can lift it.
np_pin="numpy>=1.23,<2"
"${pip[@]}" install "$np_pin" "scipy>=1.9,<1.14" "scikit-learn>=1.6,<1.7" "pandas>=1.5,<2.3" \
    "joblib>=1.3" click
"${pip[@]}" install "$np_pin" "scikit-learn>=1.6,<1.7" click "alibi==0.9.6"
"${pip[@]}" install "$np_pin" "scikit-learn>=1.6,<1.7" "anchor-exp==0.0.2.0"
# lime: anchor-exp pulls it; named, so that lime_sampling.py compares with a known version
"${pip[@]}" install "$np_pin" "scikit-learn>=1.6,<1.7" "lime==0.2.0.1"
# XGBoost for paper_protocol.py (the Anchors paper's XGBClassifier); the CPU-only wheel
"${pip[@]}" install "$np_pin" "xgboost-cpu>=3,<4"

# skanchors itself, editable, without letting pip touch numpy.
# compat mode = a plain path entry: files and subpackages added later (the library is young) are
# seen without reinstalling, unlike the default finder, which freezes the package layout.
"${pip[@]}" install --no-deps --no-build-isolation -e "$repo" --config-settings editable_mode=compat
# and its fast extra (numba: the compiled forest traversal), numpy still pinned
"${pip[@]}" install "$np_pin" "numba>=0.59"
# text_default.py: the VADER model, and the tweets and Amazon sentences of its paper, which
# its source distribution carries (read from bench/.data, git-ignored, at run time)
"${pip[@]}" install "$np_pin" "vaderSentiment==3.3.2"
mkdir -p "$here/.data"
"${pip[@]}" download --no-deps --no-binary :all: "vaderSentiment==3.3.2" -d "$here/.data"

"$venv/bin/python" - <<'EOF'
import numpy, sklearn, pandas
import numba
import alibi
from alibi.explainers import AnchorTabular  # noqa: F401
import anchor
from anchor import anchor_tabular  # noqa: F401
import lime.lime_tabular  # noqa: F401
import vaderSentiment  # noqa: F401
import xgboost
assert int(numpy.__version__.split(".")[0]) < 2, numpy.__version__
print("numpy", numpy.__version__, "sklearn", sklearn.__version__, "pandas", pandas.__version__,
      "numba", numba.__version__, "xgboost", xgboost.__version__)
print("alibi", alibi.__version__, "anchor-exp, lime, vaderSentiment OK")
try:
    import skanchors
    print("skanchors", getattr(skanchors, "__version__", "?"), "from", skanchors.__file__)
except Exception as exc:  # the library may still be in progress
    print("skanchors not importable yet:", type(exc).__name__, exc)
EOF
echo "done: $venv"
