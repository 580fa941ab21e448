"""Documents as skanchors reads them: validation of a collection of texts and its words.

:func:`tokenize` splits a text into words with their character spans, the unit every text
predicate, sampler and aggregator works on; :func:`check_documents` validates what a user gives
as documents. :mod:`skanchors.samplers.text` re-exports both, :mod:`skanchors.samplers`
:func:`tokenize`.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["check_documents", "tokenize"]

# Unicode's marks (categories Mn, Mc, Me) lie in planes 0, 1 and 14; planes 2 and 3 hold only
# ideographs.
_MARK_PLANES = (range(0x0, 0x20000), range(0xE0000, 0xF0000))


@functools.cache
def _word_re():
    """A word: a word character (``\\w``: a letter of any script, a digit, underscore), then
    word characters and combining marks, so that "naïve" written with a combining diaeresis,
    Hindi "हिन्दी" (vowel signs, virama) and vocalised Arabic stay one word each; an apostrophe
    between two such runs stays inside ("don't", "it’s"). Python's ``re`` has no ``\\p{M}``, so
    the class of marks is built from :mod:`unicodedata` once, on first use."""
    spans = []
    for plane in _MARK_PLANES:
        for cp in plane:
            if unicodedata.category(chr(cp))[0] == "M":
                if spans and spans[-1][1] == cp - 1:
                    spans[-1][1] = cp
                else:
                    spans.append([cp, cp])
    marks = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in spans)
    word = rf"\w[\w{marks}]*"
    return re.compile(rf"{word}(?:['\u2019]{word})*")


def tokenize(text):
    """Split a text into words, with their character spans.

    Words are maximal runs of unicode word characters (``\\w``: letters of any script, digits,
    underscore), with the combining marks that follow them (accents, the vowel signs of Indic
    scripts, Arabic and Hebrew vowel points); an apostrophe (``'`` or ``’``) between two such runs
    stays inside the word (``"don't"`` is one word). Everything else (punctuation, whitespace) is
    the text *between* words; ``text[start:end]`` is exactly the word, so a text can be rebuilt
    from its words and the gaps between them.

    Parameters
    ----------
    text : str

    Returns
    -------
    tokens : list of (str, int, int)
        ``(word, start, end)`` for each word, in order.

    Examples
    --------
    >>> tokenize("Hello, world! It's fine.")
    [('Hello', 0, 5), ('world', 7, 12), ("It's", 14, 18), ('fine', 19, 23)]
    >>> tokenize("Café 東京 ...")
    [('Café', 0, 4), ('東京', 5, 7)]
    >>> [word for word, _, _ in tokenize("हिन्दी भाषा")]
    ['हिन्दी', 'भाषा']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}.")
    return [(m.group(), m.start(), m.end()) for m in _word_re().finditer(text)]


def check_documents(X, name="X", *, allow_wordless=False, allow_empty=False):
    """Validate a collection of documents and return it as a list of str.

    Parameters
    ----------
    X : list, tuple, 1-d array or pandas Series of str
    name : str
        Name of the argument, used in error messages.
    allow_wordless : bool, default=False
        Accept documents without any word (empty, whitespace or punctuation only).
    allow_empty : bool, default=False
        Accept an empty collection.

    Returns
    -------
    documents : list of str

    Raises
    ------
    TypeError
        ``X`` is a single string, not a 1-d collection, or has a non-string entry (the message
        names its index).
    ValueError
        ``X`` is empty, or (unless ``allow_wordless``) a document has no word (the message names
        its index).

    Examples
    --------
    >>> check_documents(("a text", "another one"))
    ['a text', 'another one']
    >>> check_documents(["fine", "?!"])
    Traceback (most recent call last):
    ...
    ValueError: X[1] has no words to explain (it is empty, whitespace or punctuation only): '?!'.
    """
    if isinstance(X, (str, bytes)):
        raise TypeError(
            f"{name} must be a collection of documents (e.g. a list of str), not a single "
            f"string; wrap it in a list: [{name}]."
        )
    if hasattr(X, "columns"):
        raise TypeError(
            f"{name} must be a 1-d collection of str; got a DataFrame: select its text column."
        )
    ndim = getattr(X, "ndim", 1)
    if ndim != 1:
        raise TypeError(f"{name} must be a 1-d collection of str, got an array with {ndim} dims.")
    try:
        docs = X.tolist() if hasattr(X, "tolist") else list(X)
    except TypeError:
        raise TypeError(f"{name} must be a collection of str, got {type(X).__name__}.") from None
    for i, doc in enumerate(docs):
        if isinstance(doc, bytes):
            raise TypeError(
                f"{name}[{i}] is a bytes, not a str: {doc!r:.60}. Decode the documents first, "
                f"e.g. [d.decode('utf-8') for d in {name}]."
            )
        if not isinstance(doc, str):
            raise TypeError(f"{name}[{i}] is a {type(doc).__name__}, not a str: {doc!r:.60}.")
    if not docs and not allow_empty:
        raise ValueError(f"{name} contains no documents.")
    if not allow_wordless:
        for i, doc in enumerate(docs):
            if _word_re().search(doc) is None:
                raise ValueError(
                    f"{name}[{i}] has no words to explain (it is empty, whitespace or "
                    f"punctuation only): {doc!r:.60}."
                )
    return [str(doc) for doc in docs]
