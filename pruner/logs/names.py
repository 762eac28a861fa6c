"""Text a home folder can hold that UTF-8 cannot: file names that are not UTF-8, and lone surrogates.

Python gives a file name's undecodable bytes as the surrogates U+DC80..U+DCFF (PEP 383), so
``os.listdir`` never fails; but such a string cannot be written to a Parquet string column, a
terminal or a JSON file read by another program. A Codex rollout's ``cwd`` can be a lone
surrogate escape (``"\\ud800"``) for the same reason one side of it was cut. ``printable`` is how
the logs command shows and stores such text: the undecodable bytes of a name as ``\\xNN`` (what
``ls -b`` shows), any other lone surrogate as ``\\udNNN``; clean text is unchanged.

>>> printable("/h/bad" + b"\\xff".decode("utf-8", "surrogateescape") + ".jsonl")
'/h/bad\\\\xff.jsonl'
>>> printable("\\ud800"), printable("fine")
('\\\\ud800', 'fine')
"""

from __future__ import annotations

import os


def clean(text: str) -> bool:
    """Whether ``text`` is UTF-8-encodable (no undecodable byte of a name, no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode escaped (see the module); ``text`` itself when it is clean."""
    if clean(text):
        return text
    try:
        raw = os.fsencode(text)  # the name's own bytes: its undecodable ones are shown as \xNN
    except UnicodeEncodeError:  # a surrogate no name decoding makes (U+D800..U+DC7F): escape it as it is
        return text.encode("utf-8", "backslashreplace").decode("ascii")
    return raw.decode("utf-8", "backslashreplace")
