"""The terms context recall counts: what a reply used, and what a context holds.

A *term* is a maximal run of letters, digits and ``_ . / -`` that starts and ends
with a letter, digit or underscore: ``src/pruner/replay/recall.py``,
``context_recall``, ``claude-sonnet-4-5``, ``41.80``, ``owner_1``. A colon, a
space, quotes and brackets end a term, so ``DEFINE:owner_1`` is ``DEFINE`` and
``owner_1``, and ``recall.py:42`` is ``recall.py`` and ``42``. A number with thousands separators is
one term (``1,200``, ``40,442``): read as ``200`` or ``442`` it would match any
number ending so. Matching is exact
and case-sensitive: code is case-sensitive, and a term the reply spells
differently from its context is simply not a used term (never a false loss).

A reply's *distinctive* terms are those a person would check against the
context: numbers of at least three digits, and terms of at least four
characters that hold a digit, an underscore or a slash, a dot inside
(``node.js``, ``recall.py``), or a capital after the first letter (camelCase,
``README``) -- or any term of at least four characters inside a backtick span or
a double-quoted string (the model marked it as literal). Plain words are left
out: "update", "Session", "cache-aware" are language, and would count as used
wherever the context holds the same word anywhere; so are SQL's keywords and literals
in capitals (``SELECT``, ``WHERE``, ``NULL``, ``TRUE``: ``GRAMMAR``).

A context holds a term when one of its messages' text holds it (content, tool
call arguments' values; placeholders and summaries are messages like any
other). Because a reply may name part of a path or of a dotted name the context
spells in full, a context term also yields its pieces: every ``/``- and
``.``-separated segment and every trailing run of segments (``/work/src/a.py``
holds ``src/a.py``, ``a.py``, ``src``, ``a``, ``py``). A grouped number is not
split at its commas on this side either: ``44,190`` does not hold ``190``, or a
reply's ``190`` (a calculator's operand) would count as used, and as lost, because
some old result printed ``44,190``.

>>> sorted(reply_terms("Edit `render` in src/pruner/cli.py:42 (owner_1, 3 of 1,200 rows); see README."))
['1,200', 'README', 'owner_1', 'render', 'src/pruner/cli.py']
>>> sorted(context_terms("cat /work/src/pruner/cli.py"))[:4]
['cat', 'cli', 'cli.py', 'pruner']
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from .model import Message, parse_arguments

# A number with thousands separators (``40,442``, ``1,200.50``) is one term: split at the comma, ``442``
# would match any other number ending so (``45,442``), a chance match, not the value. For the same reason
# a context's grouped number yields no comma groups as pieces (``44,190`` does not hold a reply's ``190``).
TERM = re.compile(r"(?<![\w,.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|[A-Za-z0-9_](?:[A-Za-z0-9_./\-]*[A-Za-z0-9_])?")
_QUOTED = re.compile(r"`([^`\n]{1,200})`|\"([^\"\n]{1,200})\"")
_SEPARATORS = re.compile(r"[/.]+")
_MARKED = re.compile(r"[0-9_/]|[a-z][A-Z]|[A-Z]{2}|\w\.\w")
MIN_LENGTH = 4  # terms (numbers: MIN_DIGITS)
MIN_DIGITS = 3
# SQL's keywords and literals, as queries write them, in capitals: grammar,
# not information. Counted as terms they were "used" by every query and "held" by any context with
# another query in it, so a re-run whose table and columns (plain words) were gone still showed recall 1
# (75 of compact's missing copies on tool_agent 2,000).
GRAMMAR = frozenset(
    "SELECT FROM WHERE GROUP ORDER HAVING LIMIT OFFSET JOIN INNER OUTER LEFT RIGHT FULL CROSS UNION "
    "INSERT INTO VALUES UPDATE DELETE CREATE TABLE DROP ALTER INDEX VIEW WITH DISTINCT COUNT CASE WHEN THEN "
    "ELSE LIKE ILIKE BETWEEN EXISTS DESC NULL TRUE FALSE".split())


def distinctive(term: str, *, quoted: bool = False) -> bool:
    """Whether ``term`` counts as used when a reply writes it (see the module docstring)."""
    if term.isdigit():
        return len(term) >= MIN_DIGITS
    if len(term) < MIN_LENGTH or term in GRAMMAR:
        return False
    return quoted or _MARKED.search(term) is not None


def _values(arguments: Any) -> Iterator[str]:
    """The string and number values of tool-call arguments (keys are the tool's schema, not content)."""
    stack = [parse_arguments(arguments)]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, (int, float)):
            yield str(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))


def message_text(m: Message) -> str:
    """What a message sends that terms are read from: its content and its calls' argument values."""
    if not m.tool_calls:
        return m.content
    return "\n".join([m.content, *(v for c in m.tool_calls for v in _values(c.arguments))])


def reply_terms(text: str) -> set[str]:
    """The distinctive terms of a reply's text."""
    out = {t for t in TERM.findall(text) if distinctive(t)}
    for a, b in _QUOTED.findall(text):
        out.update(t for t in TERM.findall(a or b) if distinctive(t, quoted=True))
    return out


def pieces(term: str) -> set[str]:
    """``term``'s segments and trailing runs of segments, split at ``/`` and ``.`` (never a number's ``,``)."""
    out = {p for p in _SEPARATORS.split(term) if p}
    for i, ch in enumerate(term):
        if ch in "/.":
            tail = term[i + 1:].lstrip("/.")
            if tail:
                out.add(tail)
    return out


def context_terms(text: str, vocabulary: set[str] | frozenset[str] | None = None) -> set[str]:
    """The terms a context message's text holds (pieces included), restricted to ``vocabulary``."""
    found = set(TERM.findall(text))
    compound = [t for t in found if "/" in t or "." in t]
    for t in compound:
        found.update(pieces(t))
    return found & vocabulary if vocabulary is not None else found
