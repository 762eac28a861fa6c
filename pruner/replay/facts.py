"""Facts a later message needs that a request's context no longer carries (generated workloads).

Generated workloads carry their ground truth in message metadata
(``pruner.bench.workloads``): which messages carry which version of a fact
(``carries``: ``fact:<key>@<version>``) and which messages refer to it (``uses``
with a ``REF:`` tag, ``untagged_uses`` in a paraphrase). At a request made before
message ``i``, a fact is *needed* when a message at ``i`` or later refers to it
and some message before ``i`` carries it; it is *missing* when none of the
messages carrying its latest version before ``i`` is in the context, and no
compaction summary in the context quotes the sentence that states it. The check
knows the future (it is a measurement, not a policy); no strategy reads it.

Each strategy's count is kept up to date from what changed: the facts whose
needed state or carriers changed at this request, and those whose carriers
entered or left the strategy's context.

>>> from pruner.bench.workloads import generate
>>> s = generate("plain_chat", turns=30, seed=0)
>>> book = FactBook.of(s)
>>> book is not None and book.facts > 0
True
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Iterable

from ..compaction.cut import SUMMARY_KINDS
from ..model import Message, Session
from ..terms import reply_terms

_SENTENCE_END = re.compile(r"[.!?]\s|\n")


def is_summary(m: Message) -> bool:
    """A compaction summary (``pruner.compaction.cut.is_summary_message``, without its type checks: this
    runs on every message that enters or leaves a context)."""
    if m.role == "summary":
        return True
    md = m.metadata
    return bool(md) and md.get("kind") in SUMMARY_KINDS


def squash(text: str) -> str:
    """``text`` with every run of white space one space: a summary that quotes a statement or a line with
    its spaces collapsed (``x = 1  # DEFINE:k`` as ``x = 1 # DEFINE:k``) still quotes it."""
    return " ".join(text.split())


def _statement(text: str, key: str) -> str | None:
    """The sentence of ``text`` that ends with ``DEFINE:key`` (what a summary must quote)."""
    marker = f"DEFINE:{key}"
    end = text.find(marker)
    if end < 0:
        return None
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, end)]
    return squash(text[starts[-1] if starts else 0:end + len(marker)])


class FactBook:
    """The facts of one session: carriers per version and the positions that use them."""

    def __init__(self, carriers: dict[str, list[tuple[int, int, str]]], uses: dict[str, list[int]],
                 statements: dict[tuple[str, str], str] | None = None):
        self._carriers = carriers  # key -> [(position, version, message id)] in position order
        self.statements = statements or {}  # (message id, key) -> the sentence stating it
        self._last_use = {k: max(v) for k, v in uses.items()}
        self._uses = uses
        self.facts = len(carriers)
        self.carrier_facts: dict[str, set[str]] = {}
        for key, rows in carriers.items():
            for _, _, mid in rows:
                self.carrier_facts.setdefault(mid, set()).add(key)
        # Facts whose state can change when the request position passes p: a carrier at p-1
        # (new copy or version), or a last use at p-1 (no longer needed afterwards).
        self._changes_at: dict[int, set[str]] = {}
        for key, rows in carriers.items():
            for pos, _, _ in rows:
                self._changes_at.setdefault(pos + 1, set()).add(key)
        for key, last in self._last_use.items():
            if key in carriers:
                self._changes_at.setdefault(last + 1, set()).add(key)

    @classmethod
    def of(cls, session: Session) -> "FactBook | None":
        """None when the session carries no ground truth (anything but a generated workload)."""
        carriers: dict[str, list[tuple[int, int, str]]] = {}
        uses: dict[str, list[int]] = {}
        statements: dict[tuple[str, str], str] = {}
        for i, m in enumerate(session.messages):
            md = m.metadata or {}
            for entry in md.get("carries", ()):
                item, _, version = str(entry).rpartition("@")
                if item.startswith("fact:") and version.isdigit():
                    carriers.setdefault(item[5:], []).append((i, int(version), m.id))
                    sentence = _statement(m.content, item[5:])
                    if sentence:
                        statements[(m.id, item[5:])] = sentence
            for key in (*md.get("uses", ()), *md.get("untagged_uses", ())):
                uses.setdefault(str(key), []).append(i)
        if not carriers or not uses:
            return None
        return cls(carriers, uses, statements)

    def changed_between(self, start: int, stop: int) -> set[str]:
        """Facts whose needed state or latest carriers change for requests in (start, stop]."""
        out: set[str] = set()
        for p in range(start + 1, stop + 1):
            keys = self._changes_at.get(p)
            if keys:
                out |= keys
        return out

    def current_carriers(self, key: str, position: int) -> tuple[str, ...] | None:
        """Ids of the messages before ``position`` carrying the latest version of ``key``, or None
        when ``key`` is not needed at a request made before message ``position``."""
        if self._last_use.get(key, -1) < position:
            return None
        rows = self._carriers.get(key)
        if not rows:
            return None
        k = bisect_left(rows, (position,))
        if k == 0:
            return None
        latest = max(v for _, v, _ in rows[:k])
        return tuple(mid for _, v, mid in rows[:k] if v == latest)


class FactCheck:
    """One strategy's count of missing facts, updated request by request."""

    def __init__(self, book: FactBook):
        self.book = book
        self.missing: set[str] = set()
        self.needed: set[str] = set()
        self.summaries: dict[str, str] = {}  # compaction summaries in the context: id -> text
        self.position = 0

    def _carried(self, key: str, carriers: tuple[str, ...], ids: set[str]) -> bool:
        if any(c in ids for c in carriers):
            return True
        statements = self.book.statements
        for c in carriers:
            sentence = statements.get((c, key))
            if sentence and any(sentence in text for text in self.summaries.values()):
                return True
        return False

    def update(self, position: int, ids: set[str], entered: Iterable[Message], left: Iterable[Message]) -> int:
        book = self.book
        affected = book.changed_between(self.position, position)
        summaries_changed = False
        for m in (*left, *entered):
            keys = book.carrier_facts.get(m.id)
            if keys:
                affected |= keys
            if is_summary(m):
                summaries_changed = True
        if summaries_changed:
            for m in left:
                self.summaries.pop(m.id, None)
            for m in entered:
                if is_summary(m) and m.id in ids:
                    self.summaries[m.id] = squash(m.content)
            affected |= self.needed
        self.position = position
        for key in affected:
            carriers = book.current_carriers(key, position)
            if carriers is None:
                self.needed.discard(key)
                self.missing.discard(key)
                continue
            self.needed.add(key)
            if self._carried(key, carriers, ids):
                self.missing.discard(key)
            else:
                self.missing.add(key)
        return len(self.missing)


class CopyBook:
    """What each generated tool call copies from the context (metadata ``copies``, see
    ``pruner.bench.workloads.world``), and the earlier messages that show it: for ``line:<path>:<i>`` at
    a lowest version, the messages carrying ``file:<path>`` at that version or later and the edit that
    wrote the line (``sets``); for ``args:<item>``, every message carrying the item and every call that
    made one (a re-run's arguments, a re-read path, a document id). Ground truth for what a reply reuses
    that no fact labels, at about the grain context recall counts (a line is a name and a value). As for a
fact, a compaction summary that quotes the copied text (``copied``) shows it too.

    >>> from pruner.bench.workloads import generate
    >>> book = CopyBook.of(generate("tool_agent", turns=60, seed=0))
    >>> all(ps and max(ps) < p for p, needs in book.needs.items() for _, ps, _, _ in needs)
    True
    """

    def __init__(self, needs: dict[int, tuple[tuple[str, tuple[int, ...], str, bool], ...]]):
        # reply position -> ((item, positions of the messages that show it, the text copied, whether that
        # text holds a distinctive term: recall cannot see a copy of plain words), ...)
        self.needs = needs

    @classmethod
    def of(cls, session: Session) -> "CopyBook | None":
        """None when no message records what it copies (anything but a generated workload)."""
        messages = session.messages
        caller = {c.id: p for p, m in enumerate(messages) for c in m.tool_calls}
        shown: dict[str, list[tuple[int, int]]] = {}  # item (or line) -> [(position, version)]
        made_by: dict[str, list[int]] = {}  # item -> positions of the calls whose result carried it
        needs: dict[int, tuple[tuple[str, tuple[int, ...], str, bool], ...]] = {}
        for p, m in enumerate(messages):
            md = m.metadata or {}
            wanted = []
            copied = list(md.get("copied", ()))
            for n, entry in enumerate(md.get("copies", ())):
                item, _, version = str(entry).rpartition("@")
                least = int(version) if version.isdigit() else 1
                if item.startswith("args:"):
                    base = item[5:]
                    at = {q for q, _ in shown.get(base, ())} | set(made_by.get(base, ()))
                else:  # line:<path>:<i>: a full view of the file from that version on, or its edit
                    path = item[5:].rpartition(":")[0]
                    at = {q for q, v in (*shown.get(f"file:{path}", ()), *shown.get(item, ())) if v >= least}
                text = squash(str(copied[n])) if n < len(copied) else ""
                wanted.append((item, tuple(sorted(at)), text, bool(reply_terms(text))))
            if wanted:
                needs[p] = tuple(wanted)
            for entry in (*md.get("carries", ()), *md.get("partial", ()), *md.get("sets", ())):
                item, _, version = str(entry).rpartition("@")
                if not version.isdigit():
                    continue
                shown.setdefault(item, []).append((p, int(version)))
                if m.tool_call_id is not None and m.tool_call_id in caller:
                    made_by.setdefault(item, []).append(caller[m.tool_call_id])
        return cls(needs) if needs else None
