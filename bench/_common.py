"""What the benchmark scripts share: their result files.

A run's per-row records are written as compact gzipped JSON (``PREFIX.json.gz``), a tenth of
the indented text, so that the committed results stay small; the ``.md`` next to it is the
report. :func:`read_json` reads either form, so a plain ``PREFIX.json`` of an earlier run still
works, and takes a prefix, a ``.json`` or a ``.json.gz`` path alike.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def prefix_of(path):
    """``path`` without its ``.json`` / ``.json.gz`` / ``.md`` suffix, as a string."""
    text = str(path)
    for suffix in (".json.gz", ".json", ".md"):
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def read_json(path):
    """The JSON at ``path``: ``PREFIX.json.gz`` or ``PREFIX.json``, whichever exists."""
    prefix = prefix_of(path)
    for candidate in (Path(path), Path(prefix + ".json.gz"), Path(prefix + ".json")):
        if candidate.is_file():
            if candidate.name.endswith(".gz"):
                with gzip.open(candidate, "rt", encoding="utf-8") as fh:
                    return json.load(fh)
            return json.loads(candidate.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"no {prefix}.json.gz or {prefix}.json")


def write_json(prefix, obj, default=None):
    """Write ``obj`` to ``PREFIX.json.gz`` (compact, no time stamp: the same results give the
    same bytes) and return that path."""
    path = Path(prefix_of(prefix) + ".json.gz")
    text = json.dumps(obj, separators=(",", ":"), default=default)
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return path
