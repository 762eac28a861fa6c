"""What the model receives after each turn, kept up to date from what changed.

``IncrementalPruner`` knows, after an append, which messages' pass results may have
changed (the new ones, and the earlier ones its trackers touched). ``ContextTracker``
turns exactly those into the context: which messages are sent, the placeholder that
answers each kept call whose result was pruned, and the token total. It settles
orphaned calls the way ``prune`` does (``pruner.engine.prune._settle_orphans``), but
only for the assistant messages whose calls or results changed, so a turn costs what
it changed, not the length of the conversation.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, cast

from ..model import Message
from ..rules import placeholder_text
from ..tokens import HeuristicCounter, TokenCounter

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.index import SessionIndex


@dataclass(frozen=True)
class Context:
    """What the model receives after the latest append: the kept messages in order, and
    the placeholder text that answers each kept call whose result was pruned
    (call id -> text). ``tokens`` counts both, under the pruner's encoding; it equals
    ``prune(...).stats.tokens_after`` of everything appended so far."""

    messages: tuple[Message, ...]
    placeholders: Mapping[str, str]
    tokens: int


@dataclass(frozen=True)
class ContextChange:
    """How the context changed in one append: ids that entered or left it (in position
    order) and the placeholders set or changed (call id -> text) or removed (call id -> None)."""

    entered: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    placeholders: Mapping[str, str | None] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.placeholders is None:
            object.__setattr__(self, "placeholders", {})


#: ``removal(i)`` for a message the passes removed: ``(rule, related index or None, the removal's detail)``.
RemovalOf = Callable[[int], tuple[str, "int | None", tuple[Any, ...]]]


class ContextTracker:
    """The context as flags, a token total and placeholders, refreshed message by message."""

    def __init__(self, index: SessionIndex, counter: TokenCounter | HeuristicCounter, policy: str):
        self._index = index
        self._messages = index.messages
        self._counter = counter
        self._count = counter.count
        self._policy = policy
        self._sent = bytearray()  # 1: the message is in the context
        self._sent_idx: list[int] = []  # the same, as sorted positions ...
        self._sent_msgs: list[Message] = []  # ... and their messages: a turn's edits are mostly appends
        self._snapshot: Context | None = None
        self._tokens: list[int] = []
        self._results_of: dict[int, list[int]] = {}  # assistant index -> indices of its results
        self._held: dict[int, dict[str, str]] = {}  # assistant index -> its calls' placeholders
        self._placeholders: dict[str, str] = {}
        self._last: tuple[list[int], list[int]] = ([], [])  # entered and left in the last refresh
        self._replaced: dict[str, str | None] = {}
        self.tokens = 0

    def grow(self) -> None:
        """Take note of messages appended since the last call (not yet in the context)."""
        owner_of = self._index.call_owner
        tokens = self._index.tokens(self._counter)
        for i in range(len(self._sent), len(self._messages)):
            self._sent.append(0)
            self._tokens.append(tokens[i])
            owner = owner_of[i]
            if owner >= 0:
                self._results_of.setdefault(owner, []).append(i)

    def refresh(self, changed: Iterable[int], alive: Callable[[int], bool], removal: RemovalOf) -> ContextChange:
        """Bring the context up to date after the messages in ``changed`` may have changed.

        ``alive(i)``: message ``i`` is kept by the passes (before orphaned calls are settled);
        ``removal(i)``: why a message that is not alive was removed.
        """
        msgs = self._messages
        owner_of = self._index.call_owner
        owners: set[int] = set()
        touched: set[int] = set()
        for i in changed:
            touched.add(i)
            if msgs[i].tool_calls:
                owners.add(i)
            owner = owner_of[i]
            if owner >= 0:
                owners.add(owner)
        entered: list[int] = []
        left: list[int] = []
        placeholders: dict[str, str | None] = {}
        self._replaced = {}  # call id -> placeholder before this refresh
        for i in sorted(touched - owners):
            self._set(i, alive(i), entered, left)
        for a in sorted(owners):
            self._settle(a, alive, removal, entered, left, placeholders)
        self._last = (entered, left)
        return ContextChange(entered=tuple(msgs[i].id for i in sorted(entered)),
                             left=tuple(msgs[i].id for i in sorted(left)), placeholders=placeholders)

    def _set(self, i: int, sent: bool, entered: list[int], left: list[int]) -> None:
        if sent != bool(self._sent[i]):
            self._sent[i] = sent
            self._snapshot = None
            idx = self._sent_idx
            if sent:
                self.tokens += self._tokens[i]
                entered.append(i)
                if not idx or idx[-1] < i:
                    idx.append(i)
                    self._sent_msgs.append(self._messages[i])
                else:
                    k = bisect_left(idx, i)
                    idx.insert(k, i)
                    self._sent_msgs.insert(k, self._messages[i])
            else:
                self.tokens -= self._tokens[i]
                left.append(i)
                k = bisect_left(idx, i)
                del idx[k]
                del self._sent_msgs[k]

    def _settle(self, a: int, alive: Callable[[int], bool], removal: RemovalOf, entered: list[int], left: list[int],
                placeholders: dict[str, str | None]) -> None:
        """An assistant message and its results: who is sent, and the placeholders its calls need."""
        results = self._results_of.get(a, ())
        orphaned = []
        answered = False
        for r in results:
            keep = alive(r)
            self._set(r, keep, entered, left)
            if keep:
                answered = True
            else:
                orphaned.append(r)
        sent = alive(a)
        if sent and orphaned and self._policy == "drop_pair":
            m = self._messages[a]
            if not m.content.strip() and not m.defines and not answered:
                sent = False
        self._set(a, sent, entered, left)
        new: dict[str, str] = {}
        if sent:
            for r in orphaned:
                rule, related, detail = removal(r)
                m = self._messages[r]
                # an orphaned result answers a call
                new[cast(str, m.tool_call_id)] = placeholder_text(
                    rule, None if related is None else self._messages[related], m, detail)
        old = self._held.pop(a, {})
        if new:
            self._held[a] = new
        for cid, text in old.items():
            if new.get(cid) != text:
                self._snapshot = None
                del self._placeholders[cid]
                self.tokens -= self._count(text)
                placeholders[cid] = None
                self._replaced.setdefault(cid, text)
        for cid, text in new.items():
            if old.get(cid) != text:
                self._snapshot = None
                self._replaced.setdefault(cid, None)
                self._placeholders[cid] = text
                self.tokens += self._count(text)
                placeholders[cid] = text

    def context(self) -> Context:
        """The context now: a copy of the kept list (its length, in C) unless nothing changed."""
        if self._snapshot is None:
            self._snapshot = Context(messages=tuple(self._sent_msgs), placeholders=dict(self._placeholders),
                                     tokens=self.tokens)
        return self._snapshot

    def previous_context(self) -> Context:
        """The context as it was before the last ``refresh`` (tokens left out: 0). Costs the
        conversation's length; only for the rare turn whose context comes from a full prune."""
        entered, left = self._last
        sent = bytearray(self._sent)
        for i in entered:
            sent[i] = 0
        for i in left:
            sent[i] = 1
        placeholders = dict(self._placeholders)
        for cid, text in self._replaced.items():
            if text is None:
                placeholders.pop(cid, None)
            else:
                placeholders[cid] = text
        return Context(messages=tuple(compress(self._messages, sent)), placeholders=placeholders, tokens=0)


def change_between(before: Context | None, after: Context) -> ContextChange:
    """The change from one context to another, by comparing them whole (for the rare turns
    the incremental pruner prunes everything again)."""
    old_ids = {m.id for m in before.messages} if before else set()
    new_ids = {m.id for m in after.messages}
    old_ph = dict(before.placeholders) if before else {}
    changed: dict[str, str | None] = {cid: None for cid in old_ph if cid not in after.placeholders}
    changed.update({cid: t for cid, t in after.placeholders.items() if old_ph.get(cid) != t})
    positions = {m.id: k for k, m in enumerate(before.messages)} if before else {}
    return ContextChange(entered=tuple(m.id for m in after.messages if m.id not in old_ids),
                         left=tuple(sorted(old_ids - new_ids, key=positions.__getitem__)),
                         placeholders=changed)
