"""Sphinx configuration for the skanchors documentation.

Build with ``sphinx-build -b html doc doc/_build/html`` from the repository root. The build needs
no network: intersphinx is not enabled and nothing is downloaded.
"""

import os
import sys

# Document the package of this work tree, installed or not.
sys.path.insert(0, os.path.abspath(".."))


def _version():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return "unknown"
    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["project"]["version"]


project = "skanchors"
author = "the skanchors developers"
copyright = "2026, the skanchors developers"
release = _version()
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
]

# The API pages are generated from the docstrings into doc/generated/ (ignored by git).
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"

# numpydoc renders the members of a class itself; autosummary's stubs would duplicate them.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Examples in the guides use ``.. code-block:: python`` and are not run; docstring examples
# are run by ``pytest --doctest-modules``.
doctest_test_doctest_blocks = ""

# A class page is its autodoc entry alone: autosummary's default class template adds tables
# of members that link to targets numpydoc does not create (the docstrings' Attributes).
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
default_role = "literal"


html_theme = "alabaster"
html_title = f"skanchors {release}"
html_theme_options = {
    "description": "Anchors: high-precision IF-THEN rules that explain any classifier",
    "fixed_sidebar": True,
}
html_static_path = []


def _skip_scikit_learn_boilerplate(app, what, name, obj, skip, options):
    # scikit-learn generates set_{method}_request on every estimator for metadata routing,
    # and its mixins add methods such as ClassifierMixin.score: their docstrings are
    # scikit-learn's, with links into its own documentation.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if getattr(obj, "__module__", None) and obj.__module__.startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_boilerplate)
