"""What one strategy sends at a request, kept up to date in place.

A ``Wire`` is the context of one strategy: the messages it sends, in order,
plus the placeholder text sent as the result of each call whose result it left
out (``substitutes``, call id -> text; the export puts each right after its
call). Strategies change it with ``extend``, ``delete`` and ``replace``; the
wire remembers the first position any change touched since the previous
request (``changed_at``), so the cache models read the longest common prefix
with the previous request instead of comparing contexts. Every operation costs
the part it changes, never the whole context: appending is the common case.

>>> from pruner.model import Message
>>> book = TokenBook()
>>> w = Wire(book)
>>> a, b, c = (Message(id=x, role="user", content=x * 40) for x in "abc")
>>> w.extend([a, b]); w.mark(); w.extend([c]); w.changed_at
2
>>> w.mark(); w.replace([a, c]); w.changed_at, len(w), w.tokens == book.tokens(a) + book.tokens(c)
(1, 2, True)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import compress, count
from operator import is_not
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Protocol, Sequence

from ..engine.prune import message_tokens
from ..model import Message
from ..tokens import DEFAULT_ENCODING, get_counter

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.context import ContextChange

def blocks(m: Message) -> int:
    """Lookback positions of a message on its own, the unit of Anthropic's cache lookback: its text
    is one, and the run of tool_use blocks it ends with is one more, however many calls it makes
    (a run of consecutive tool_use blocks is one position); a tool result is one (and a run of
    consecutive results is one together: see ``lookback_start``)."""
    if m.tool_calls:
        return (1 if m.content else 0) + 1
    return 1


def system_head(messages: Sequence[Message]) -> int:
    """How many messages at the start are system messages (a cache breakpoint follows them)."""
    n = 0
    for m in messages:
        if m.role != "system":
            break
        n += 1
    return n


class Messages(Protocol):
    """What ``lookback_start`` walks back over: a list of messages, or a view that indexes one."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> Message: ...


def lookback_start(messages: Messages, positions: int) -> int:
    """The first message a cache lookback of ``positions`` positions, ending at the last message's
    breakpoint, can reach. A run of consecutive tool results counts as one position, as a run of
    tool_use blocks does (``blocks``)."""
    used, i = 0, len(messages)
    in_results = False  # the message after this one (already counted) is a tool result
    while i > 0:
        m = messages[i - 1]
        result = m.tool_call_id is not None
        b = 0 if result and in_results else blocks(m)
        if used + b > positions - 1:
            break
        used += b
        in_results = result
        i -= 1
    return i


class TokenBook:
    """Token counts per message object, computed once (placeholders and summaries included).

    Messages are frozen dataclasses holding dicts, so they are not hashable: the book is
    keyed by object identity and keeps every message it has counted alive, so an id is
    never reused for another message while the book lives.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING):
        self.counter = get_counter(encoding)
        self._counts: dict[int, tuple[int, Message]] = {}
        self._texts: dict[str, int] = {}

    def add_all(self, messages: Iterable[Message]) -> None:
        messages = [m for m in messages if id(m) not in self._counts]
        self.counter.count_many([m.content for m in messages])  # batch-encode the texts first
        for m in messages:
            self._counts[id(m)] = (message_tokens(m, self.counter), m)

    def tokens(self, m: Message) -> int:
        entry = self._counts.get(id(m))
        if entry is None:
            entry = self._counts[id(m)] = (message_tokens(m, self.counter), m)
        return entry[0]

    def text(self, text: str) -> int:
        n = self._texts.get(text)
        if n is None:
            n = self._texts[text] = self.counter.count(text)
        return n

    def total(self, messages: Iterable[Message]) -> int:
        get = self._counts.get
        n = 0
        for m in messages:
            entry = get(id(m))
            n += entry[0] if entry is not None else self.tokens(m)
        return n


class Wire:
    """The context one strategy sends; see the module docstring."""

    def __init__(self, book: TokenBook, *, track_ids: bool = False):
        self.book = book
        # Ids sent, and the messages that came and went since mark() (only when asked: the facts check).
        self.track_ids = track_ids
        self.ids: set[str] = set()
        self.entered: list[Message] = []
        self.left: list[Message] = []
        self.messages: list[Message] = []
        self.substitutes: dict[str, str] = {}
        self.tokens = 0  # messages plus substitutes
        self.changed_at = 0  # first position changed since mark()
        self._incoming: Mapping[str, str] = {}  # the last substitutes passed to sync_substitutes
        # (list, its length, positions, valid while changed_at >= this, answer)
        self._lookback: tuple[list[Message], int, int, int, int] | None = None

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def length(self) -> int:
        return len(self.messages)

    @property
    def head(self) -> int:
        """Leading system messages (a cache breakpoint follows them)."""
        return system_head(self.messages)

    @property
    def head_tokens(self) -> int:
        return self.book.total(self.messages[:self.head])

    # -- changes ---------------------------------------------------------------------------

    def extend(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)
        self.tokens += self.book.total(messages)
        if self.track_ids:
            self._track((), messages)

    def _track(self, gone: Sequence[Message], came: Sequence[Message]) -> None:
        self.ids.difference_update([m.id for m in gone])
        self.ids.update([m.id for m in came])
        self.left.extend(gone)
        self.entered.extend(came)

    def delete(self, start: int, stop: int) -> list[Message]:
        """Remove ``messages[start:stop]`` (and the substitutes of their calls)."""
        gone = self.messages[start:stop]
        del self.messages[start:stop]
        self.tokens -= self.book.total(gone)
        if self.track_ids:
            self._track(gone, ())
        for m in gone:
            for c in m.tool_calls:
                self.drop_substitute(c.id)
        self.changed_at = min(self.changed_at, start)
        return gone

    def truncate(self, stop: int) -> None:
        self.delete(stop, len(self.messages))

    def replace(self, messages: Sequence[Message]) -> None:
        """Send ``messages`` from now on; finds where they first differ from what was sent."""
        old = self.messages
        new = messages if isinstance(messages, list) else list(messages)
        k = len(old)
        if len(new) >= k and new[:k] == old:  # identity fast path: only appended
            lcp = k
        else:
            lcp = next(compress(count(), map(is_not, old, new)), min(k, len(new)))
        self.tokens += self.book.total(new[lcp:]) - self.book.total(old[lcp:])
        if self.track_ids and (lcp < k or lcp < len(new)):
            self._track(old[lcp:], new[lcp:])
        self.messages = new
        self.changed_at = min(self.changed_at, lcp)

    def switch(self, messages: Sequence[Message], substitutes: Mapping[str, str], tokens: int) -> None:
        """Send another context, ``messages`` with ``substitutes``, whose token total (substitutes
        included) the caller knows: ``tokens``. Costs the comparison of the common prefix (in C), never
        a count of the rest; ``changed_at`` moves to where the messages first differ."""
        old = self.messages
        new = messages if isinstance(messages, list) else list(messages)
        k = len(old)
        lcp = next(compress(count(), map(is_not, old, new)), min(k, len(new)))
        if self.track_ids and (lcp < k or lcp < len(new)):
            self._track(old[lcp:], new[lcp:])
        self.messages = new
        self.substitutes = dict(substitutes)
        self._incoming = self.substitutes.copy()
        self.tokens = tokens
        self.changed_at = min(self.changed_at, lcp)

    def apply(self, messages: Sequence[Message], tokens: int, change: ContextChange, *, index_of: Mapping[str, int],
              message_of: Callable[[str], Message], call_owner: Mapping[str, int]) -> None:
        """Send the incremental pruner's new context, given how it changed (``ContextChange``: ids that
        entered or left, placeholders set or removed). Costs what changed: each change is placed with
        a binary search by session position, and the token total is the pruner's own."""
        old = self.messages
        new = messages if isinstance(messages, list) else list(messages)

        def key(m: Message) -> int:
            return index_of.get(m.id, -1)

        first = len(old)
        for mid in change.left:
            first = min(first, bisect_left(old, index_of[mid], key=key))
            break  # ids come in position order: the first is the earliest
        for mid in change.entered:
            first = min(first, bisect_left(new, index_of[mid], key=key))
            break
        for cid, text in change.placeholders.items():
            owner = call_owner.get(cid)
            if owner is not None:
                first = min(first, bisect_right(new, owner, key=key))
            if text is None:
                self.substitutes.pop(cid, None)
            else:
                self.substitutes[cid] = text
        if self.track_ids and (change.entered or change.left):
            self._track([message_of(mid) for mid in change.left], [message_of(mid) for mid in change.entered])
        self.messages = new
        self.tokens = tokens
        self.changed_at = min(self.changed_at, first)

    def sync_substitutes(self, incoming: Mapping[str, str], *, position: Callable[[str], int],
                         relevant: Callable[[str], bool] | None = None) -> None:
        """Send ``incoming`` (call id -> placeholder text; only the ``relevant`` calls) as the
        substitutes from now on. Costs the entries that changed since the last call, found
        with C-level dict and set operations; ``position(call_id)`` says where a changed
        substitute sits, so it moves ``changed_at``."""
        last = self._incoming
        if incoming == last:
            return
        changed = last.keys() ^ incoming.keys()
        changed.update(cid for cid in incoming.keys() & last.keys() if incoming[cid] != last[cid])
        for cid in sorted(changed):
            text = incoming.get(cid)
            if text is not None and (relevant is None or relevant(cid)):
                self.set_substitute(cid, text, position(cid))
            elif cid in self.substitutes:
                self.drop_substitute(cid)
                self.changed_at = min(self.changed_at, position(cid))
        self._incoming = dict(incoming)

    def resync_substitutes(self, incoming: Mapping[str, str], *, relevant: Callable[[str], bool]) -> None:
        """Rebuild the substitutes from scratch (after a change of what is relevant)."""
        for cid in list(self.substitutes):
            self.drop_substitute(cid)
        for cid, text in incoming.items():
            if relevant(cid):
                self.substitutes[cid] = text
                self.tokens += self.book.text(text)
        self._incoming = dict(incoming)

    def set_substitute(self, call_id: str, text: str, position: int) -> None:
        """Send ``text`` as the result of ``call_id`` (whose call sits before ``position``)."""
        old = self.substitutes.get(call_id)
        if old == text:
            return
        if old is not None:
            self.tokens -= self.book.text(old)
        self.substitutes[call_id] = text
        self.tokens += self.book.text(text)
        self.changed_at = min(self.changed_at, position)

    def drop_substitute(self, call_id: str) -> None:
        old = self.substitutes.pop(call_id, None)
        if old is not None:
            self.tokens -= self.book.text(old)

    def mark(self) -> None:
        """The current state has been sent: later changes are measured from here."""
        self.changed_at = len(self.messages)
        self.entered.clear()
        self.left.clear()

    # -- reading -----------------------------------------------------------------------------

    def tokens_before(self, position: int) -> int:
        """Tokens of ``messages[:position]`` and the substitutes of calls among them
        (costs the part after ``position``)."""
        tail = self.messages[position:]
        n = self.book.total(tail)
        if self.substitutes:
            tail_calls = {c.id for m in tail for c in m.tool_calls}
            n += sum(self.book.text(t) for cid, t in self.substitutes.items() if cid in tail_calls)
        return self.tokens - n

    def lookback_start(self, positions: int) -> int:
        """The smallest position ``q`` whose prefix ends within ``positions`` block positions
        of the end, counting the last block as the first (so ``messages[q:]`` holds at most
        ``positions - 1`` blocks). Walks back from the end: costs at most that many messages."""
        msgs = self.messages
        memo = self._lookback
        if memo is not None and memo[0] is msgs and memo[1] == len(msgs) and memo[2] == positions \
                and memo[3] <= self.changed_at:
            return memo[4]  # asked again for the same request (each cache lens asks)
        i = lookback_start(msgs, positions)
        self._lookback = (msgs, len(msgs), positions, i, i)
        return i

    def materialize(self) -> list[Message]:
        """The messages exactly as sent (see ``materialize``)."""
        return materialize(self.messages, self.substitutes)


def materialize(messages: Sequence[Message], substitutes: Mapping[str, str]) -> list[Message]:
    """The messages exactly as sent, each substitute right after its call, as a tool-role message
    with ``metadata["kind"] == "placeholder"``."""
    if not substitutes:
        return list(messages)
    out: list[Message] = []
    for m in messages:
        out.append(m)
        for c in m.tool_calls:
            text = substitutes.get(c.id)
            if text is not None:
                out.append(placeholder_message(c.id, c.name, text))
    return out


_PLACEHOLDERS: dict[tuple[str, str], Message] = {}


def placeholder_message(call_id: str, tool_name: str, text: str) -> Message:
    """The message a substitute is sent as (made once per call and text)."""
    key = (call_id, text)
    m = _PLACEHOLDERS.get(key)
    if m is None:
        if len(_PLACEHOLDERS) > 100_000:
            _PLACEHOLDERS.clear()
        m = _PLACEHOLDERS[key] = Message(id=f"{call_id}~placeholder", role="tool", content=text,
                                          tool_call_id=call_id, tool_name=tool_name,
                                          metadata={"kind": "placeholder"})
    return m
