"""The lines of the history an offline summary quotes: each key term in the line that last used it.

A summary that lists bare terms (``alert_manual``, ``4178``) holds names without what they meant:
which value went with which name, which file a path's line came from. Context recall, which counts
terms, then credits the summary with what a reader of it cannot use (issue 20's validation found
95 file lines compaction had lost whose terms still stood in such a list). Quoting the line a term
stood in (``alert_manual = 4178``) keeps the binding, and a line usually holds several key terms,
so it costs about what the terms alone cost.

Terms are ranked as ``key_terms`` ranks them (most reused first, what the conversation wrote itself
counting twice what a tool returned, ties to the newest); each term not yet quoted brings the newest
line that holds it, cut to ``LINE_CHARS`` around the term. Deterministic: same history, same lines.

>>> from pruner.model import Message
>>> msgs = [Message(id="t", role="tool", tool_call_id="c", tool_name="read_file",
...                 content="# conf/app.toml\\nretry_limit = 7\\nsensor_cached = 7105")]
>>> key_lines(msgs)
['sensor_cached = 7105', '# conf/app.toml', 'retry_limit = 7']
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from ..model import Message
from ..terms import message_text, reply_terms
from .flatten import one_line

#: The longest quoted line; a longer one is cut to a window around its term.
LINE_CHARS = 120
# A file viewer's line-number gutter (Claude Code's Read: "  112→", ``cat -n``: "   112\t"): the
# tool's display, not the file's text. Left on, every number of a read file's margin is a key term
# and the summary quotes "111→" for it.
_GUTTER = re.compile(r"^\s*\d{1,7}(?:→|\t)")


def key_terms(messages: Sequence[Message]) -> list[str]:
    """The history's distinctive terms (paths, identifiers, numbers, quoted literals: the ones
    ``pruner.terms`` counts as used), most reused first: what the conversation wrote itself
    (user and assistant, tool-call arguments) counts twice what a tool returned, ties go to the newest."""
    score: dict[str, list[int]] = {}
    for p, m in enumerate(messages):
        weight = 1 if m.role == "tool" or m.tool_call_id is not None else 2
        for t in _terms(message_text(m)):
            entry = score.setdefault(t, [0, 0])
            entry[0] += weight
            entry[1] = p
    return [t for t, _ in sorted(score.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))]


# The hindsight bound's search compacts the same messages again and again (one history per state
# and request): the terms of a text are a pure function of it, so they are read once per text.
@lru_cache(maxsize=16_384)
def _terms(text: str) -> frozenset[str]:
    return frozenset(reply_terms(text))


@lru_cache(maxsize=16_384)
def _lines(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each line of ``text`` on one line (gutter and terminal residue dropped), with its terms."""
    out = []
    for raw in text.splitlines():
        line = one_line(_GUTTER.sub("", raw), 10 ** 6)
        out.append((line, _terms(line) if line else frozenset()))
    return tuple(out)


def _window(line: str, term: str) -> str:
    """``line`` if short enough, else ``LINE_CHARS`` of it around ``term`` (marked cut with ``…``)."""
    if len(line) <= LINE_CHARS:
        return line
    at = max(line.find(term), 0)
    start = max(0, min(at - LINE_CHARS // 3, len(line) - LINE_CHARS))
    piece = line[start:start + LINE_CHARS].strip()
    return ("…" if start else "") + piece + ("…" if start + LINE_CHARS < len(line) else "")


def key_lines(messages: Sequence[Message], *, skip: frozenset[str] = frozenset()) -> list[str]:
    """The lines to quote, most important first: for each key term (``skip``: already in the summary)
    not yet held by a chosen line, the newest line of the history holding it, on one line."""
    newest: dict[str, str] = {}  # term -> the newest line holding it (later messages overwrite)
    terms_of: dict[str, frozenset[str]] = {}
    for m in messages:
        for line, found in _lines(message_text(m)):
            for t in found:
                newest[t] = line
            if found:
                terms_of[line] = terms_of.get(line, frozenset()) | found
    out: list[str] = []
    held: set[str] = set(skip)
    for term in key_terms(messages):
        if term in held or term not in newest:
            continue
        line = newest[term]
        quoted = _window(line, term)
        out.append(quoted)
        held.update(t for t in terms_of[line] if t in quoted)
        held.add(term)
    return out
