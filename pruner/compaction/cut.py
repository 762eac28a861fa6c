"""Where compaction cuts: the context window, the cut point and split turns.

The *window* is the part of the conversation that may still be compacted:
everything the model currently sees except leading system messages (kept
ahead of the summary) and the previous compaction summary. After an earlier
compaction the window starts at the first message that compaction kept, so
nothing kept before is lost.

The cut walks back from the newest message, adding up estimated tokens until
``keep_recent_tokens`` is reached, then moves forward to the nearest valid cut
point: a user or assistant message that no tool call/result pair straddles.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id="u1", role="user", content="one two three"),
...                 Message(id="a1", role="assistant", content="four five six"),
...                 Message(id="u2", role="user", content="seven eight nine")])
>>> window = context_window(s)
>>> cut = find_cut_point(s, window, [3, 3, 3], keep_recent_tokens=3)
>>> cut.index, cut.message_id, cut.split_turn
(2, 'u2', False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TypeGuard

from ..model import Message, Session

#: ``metadata["kind"]`` values that mark a message as an earlier compaction summary.
SUMMARY_KINDS: frozenset[str] = frozenset({"compaction", "compaction_summary"})
_SUMMARY_TAG = re.compile(r"<summary>\n?(.*?)\n?</summary>", re.DOTALL)


def is_summary_message(m: Message) -> bool:
    """True for a message that holds an earlier compaction's summary."""
    kind = m.metadata.get("kind") if isinstance(m.metadata, Mapping) else None
    # A summary of another kind (Pi's "branch_summary") is ordinary context, not a compaction.
    return kind in SUMMARY_KINDS or (m.role == "summary" and kind is None)


def summary_text(content: str) -> str:
    """The summary inside ``<summary>...</summary>`` when present, else the whole text."""
    match = _SUMMARY_TAG.search(content)
    return (match.group(1) if match else content).strip()


@dataclass(frozen=True)
class PreviousCompaction:
    """An earlier compaction found in the session."""

    summary: str  # the summary text, file lists included
    message_index: int | None  # where its summary message sits in session.messages
    first_kept_index: int | None  # the first message it kept (index into session.messages)
    source: str  # "recorded" (session.metadata) or "message" (a summary message alone)


@dataclass(frozen=True)
class ContextWindow:
    """What the model sees now, split into the parts compaction treats differently.

    All values are indices into ``session.messages``.
    """

    pinned: tuple[int, ...]  # leading system messages: kept ahead of the summary
    previous: PreviousCompaction | None
    window: tuple[int, ...]  # the messages that may be compacted, in order
    already_compacted: tuple[int, ...]  # summarised by an earlier compaction; not in the context

    def context(self) -> tuple[int, ...]:
        """Indices of the messages the model sees now, in the order it sees them."""
        prev = () if self.previous is None or self.previous.message_index is None \
            else (self.previous.message_index,)
        return self.pinned + prev + self.window


def _recorded(session: Session) -> list[Mapping[str, Any]]:
    entries = session.metadata.get("recorded_compactions") if isinstance(session.metadata, Mapping) else None
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _index_ok(value: Any, n: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n


def context_window(session: Session) -> ContextWindow:
    """Find the pinned system prompt, the latest earlier compaction, and the window."""
    msgs = session.messages
    n = len(msgs)
    pinned: list[int] = []
    while len(pinned) < n and msgs[len(pinned)].role == "system":
        pinned.append(len(pinned))
    summary_positions = [i for i, m in enumerate(msgs) if is_summary_message(m)]
    entries = _recorded(session)
    previous = None
    start = len(pinned)
    if summary_positions:
        p = summary_positions[-1]
        entry = next((e for e in reversed(entries) if e.get("position_index") == p), None)
        first_kept = entry.get("first_kept_index") if entry is not None else None
        if not _index_ok(first_kept, n):
            first_kept = p + 1 if p + 1 < n else None
        previous = PreviousCompaction(summary=summary_text(msgs[p].content), message_index=p,
                                      first_kept_index=first_kept,
                                      source="recorded" if entry is not None else "message")
        start = first_kept if first_kept is not None else n
    elif entries and isinstance(entries[-1].get("summary"), str):
        entry = entries[-1]
        first_kept = entry.get("first_kept_index")
        if not _index_ok(first_kept, n):
            pos = entry.get("position_index")
            first_kept = pos + 1 if _index_ok(pos, n + 1) and pos + 1 < n else None
        previous = PreviousCompaction(summary=summary_text(entry["summary"]), message_index=None,
                                      first_kept_index=first_kept, source="recorded")
        start = first_kept if first_kept is not None else n
    skip = set(pinned) | set(summary_positions)
    window = tuple(i for i in range(max(start, len(pinned)), n) if i not in skip)
    in_context = set(window) | set(pinned) | ({previous.message_index} if previous and
                                               previous.message_index is not None else set())
    already = tuple(i for i in range(n) if i not in in_context)
    return ContextWindow(pinned=tuple(pinned), previous=previous, window=window, already_compacted=already)


@dataclass(frozen=True)
class CutPoint:
    """Where the kept part of the window starts.

    ``index`` is the first kept message (index into ``session.messages``), or
    None when nothing is compacted (``reason`` says why). On a split turn the
    cut falls on an assistant message inside a turn whose user message,
    ``turn_start_index``, lies before it.
    """

    index: int | None
    message_id: str | None
    split_turn: bool
    turn_start_index: int | None
    reason: str
    kept_tokens: int  # estimated tokens of the kept part of the window


def valid_cut_positions(messages: Sequence[Message]) -> list[bool]:
    """For each position, whether the window may start its kept part there.

    Valid: a user or assistant message that is not a tool result and that no
    call/result pair straddles (a call before it whose result comes at or after it).
    """
    position_of_call: dict[str, int] = {}
    for j, m in enumerate(messages):
        for c in m.tool_calls:
            position_of_call.setdefault(c.id, j)
    straddled = [0] * (len(messages) + 1)
    for j, m in enumerate(messages):
        start = position_of_call.get(m.tool_call_id) if m.tool_call_id is not None else None
        if start is not None and start < j:
            straddled[start + 1] += 1  # positions start+1 .. j would separate the call from its result
            straddled[j + 1] -= 1
    open_pairs = 0
    valid = []
    for j, m in enumerate(messages):
        open_pairs += straddled[j]
        valid.append(m.role in ("user", "assistant") and m.tool_call_id is None and open_pairs == 0)
    return valid


def find_cut_point(session: Session, window: ContextWindow, token_counts: Sequence[int], *,
                   keep_recent_tokens: int) -> CutPoint:
    """The cut for ``window``; ``token_counts[i]`` is the estimate for ``session.messages[i]``."""
    idx = window.window
    msgs = [session.messages[i] for i in idx]
    total = sum(token_counts[i] for i in idx)
    if not idx:
        return CutPoint(None, None, False, None, "the window holds no messages; nothing to compact", 0)
    acc = 0
    start = None
    for j in range(len(idx) - 1, -1, -1):
        acc += token_counts[idx[j]]
        if acc >= keep_recent_tokens:
            start = j
            break
    if start is None:
        return CutPoint(None, None, False, None,
                        f"the window holds {total:,} tokens, fewer than keep_recent_tokens "
                        f"({keep_recent_tokens:,}); nothing to compact", total)
    valid = valid_cut_positions(msgs)
    cut = next((j for j in range(start, len(idx)) if valid[j]), None)
    if cut is None:
        return CutPoint(None, None, False, None,
                        f"no user or assistant message at or after message {msgs[start].id!r} can start "
                        "the kept part without separating a tool call from its result; nothing to compact",
                        total)
    kept_tokens = sum(token_counts[i] for i in idx[cut:])
    if cut == 0:
        return CutPoint(None, None, False, None,
                        f"the cut falls on the first message of the window ({msgs[0].id!r}); "
                        "nothing before it to compact", kept_tokens)
    turn_start = None
    if msgs[cut].role == "assistant":
        turn_start = next((j for j in range(cut - 1, -1, -1) if msgs[j].role == "user"), None)
    split = turn_start is not None
    where = f"message {msgs[cut].id!r} ({msgs[cut].role})"
    reason = (f"kept {kept_tokens:,} tokens from {where}, the first valid cut at or after the "
              f"{keep_recent_tokens:,}-token budget")
    if turn_start is not None:
        reason += f"; it falls inside the turn started by user message {msgs[turn_start].id!r}"
    return CutPoint(index=idx[cut], message_id=msgs[cut].id, split_turn=split,
                    turn_start_index=idx[turn_start] if turn_start is not None else None, reason=reason,
                    kept_tokens=kept_tokens)
