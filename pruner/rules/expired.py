"""Expired context (pass 1): results that something newer has made stale.

Three rules, in precedence order: ``superseded_call`` (a newer result of the same
call), ``file_state`` (the file it read shown whole again: re-read or written) and ``ttl`` (its time to live
ran out). Each comes with its tracker, which carries it from append to append in
``IncrementalPruner``: these removals only accumulate as the conversation grows, so a
tracker only ever adds to what it removed.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from typing import TYPE_CHECKING, Callable, Sequence, cast

from ..analysis.fileops import READ
from ..analysis.index import SessionIndex
from ..model import Message
from . import Alive, Removal, explains, register_rule

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.config import PruneConfig


def _short(key: str, limit: int = 60) -> str:
    return key if len(key) <= limit else key[: limit - 1] + "…"


# -- superseded_call --------------------------------------------------------------------------

def _later_result_kept(index: SessionIndex, r: int, kept: Callable[[int], int]) -> int | None:
    """A kept result of the same call after ``r`` (newest first: usually the first is kept)."""
    key = index.result_key[r]
    for j in reversed(index.by_key.get(key, ())) if key is not None else ():
        if j <= r:
            break
        if kept(j):
            return j
    return None


class SupersedeTracker:
    """Each result's next newer result of the same call, kept up to date as results arrive."""

    def __init__(self, index: SessionIndex, config: PruneConfig):
        self.index = index
        self._seen = 0  # how many of index.keyed have been taken in
        self._last_of_key: dict[str, int] = {}
        self._next_newer: dict[int, int] = {}

    def advance(self, start: int) -> set[int]:
        """Take in messages from ``start`` on; returns the messages whose removal changed."""
        index, changed = self.index, set()
        keyed = index.keyed
        keys = cast("list[str]", index.result_key)  # index.keyed lists the messages that have a key
        for i in keyed[self._seen:]:
            key = keys[i]
            prev = self._last_of_key.get(key)
            if prev is not None:
                self._next_newer[prev] = i
                changed.add(prev)
            self._last_of_key[key] = i
        self._seen = len(keyed)
        return changed

    def removal(self, i: int) -> Removal | None:
        j = self._next_newer.get(i)
        return None if j is None else Removal(i, "superseded_call", j, (self.index.result_key[i],))


@register_rule("superseded_call", stage="expired", short="sup", tracker=SupersedeTracker,
               placeholder="[superseded by the result{where}]",
               removes_again=_later_result_kept,
               description="a tool result is replaced by a newer result of the same call "
                           "(same tool name and arguments, or the same explicit key)")
def supersede_calls(index: SessionIndex, alive: Alive, config: PruneConfig) -> list[Removal]:
    """Every result but the newest of its key goes; each points at the next newer one.

    Pointing at the next newer result (not the newest) keeps a decision stable as
    the conversation grows: a later re-run changes only the previous newest.
    """
    out: list[Removal] = []
    next_newer: dict[str, int] = {}
    keys = cast("list[str]", index.result_key)  # index.keyed lists the messages that have a key
    new = tuple.__new__  # a Removal without the named tuple's Python-level __new__: thousands per prune
    for i in reversed(index.keyed):  # position decides "newer", never the id
        if not alive[i]:
            continue
        key = keys[i]
        j = next_newer.get(key)
        if j is not None:
            out.append(new(Removal, (i, "superseded_call", j, (key,))))
        next_newer[key] = i
    return out


@explains("superseded_call")
def _explain_superseded(r: Removal, messages: Sequence[Message]) -> str:
    assert r.related is not None  # a superseded result points at its newer one
    return f"superseded by a newer result of {_short(r.detail[0])} at turn {messages[r.related].turn}"


# -- file_state -------------------------------------------------------------------------------

def _later_change_kept(index: SessionIndex, r: int, kept: Callable[[int], int]) -> int | None:
    """A kept message after ``r`` that writes or fully re-reads a file ``r`` read."""
    for a in index.file_access[r]:
        if a.op == READ:
            changes = index.changes.get(a.path, ())
            for k in range(bisect_right(changes, r), len(changes)):
                if kept(changes[k]):
                    return changes[k]
    return None


class FileStateTracker:
    """For each file read, the first later message that shows the same file whole again (a write or a
    full re-read; an edit does not: the read still shows the lines it left), recorded when it arrives."""

    def __init__(self, index: SessionIndex, config: PruneConfig):
        self.index = index
        self._seen = 0
        self._pending: dict[str, list[int]] = {}  # path -> reads not yet stale
        self._stale: dict[int, dict[str, tuple[int, str]]] = {}  # read -> path -> (change, op)

    def advance(self, start: int) -> set[int]:
        index, changed = self.index, set()
        ops = index.file_ops
        for i in ops[self._seen:]:
            accesses = index.file_access[i]
            for a in accesses:
                if a.shows_whole_file:
                    for r in self._pending.pop(a.path, ()):
                        if r != i:
                            self._stale.setdefault(r, {})[a.path] = (i, a.op)
                            changed.add(r)
            for a in accesses:
                if a.op == READ:
                    self._pending.setdefault(a.path, []).append(i)
        self._seen = len(ops)
        return changed

    def removal(self, i: int) -> Removal | None:
        stale = self._stale.get(i)
        if stale:
            for a in self.index.file_access[i]:
                if a.op == READ and a.path in stale:
                    v, op = stale[a.path]
                    return Removal(i, "file_state", v, (a.path, op))
        return None


@register_rule("file_state", stage="expired", short="file", tracker=FileStateTracker,
               placeholder="[stale file read; the file changed{where}]",
               removes_again=_later_change_kept,
               description="a file read is stale once the same path is written or read again in full "
                           "(an edit leaves the read's other lines current)")
def expire_stale_reads(index: SessionIndex, alive: Alive, config: PruneConfig) -> list[Removal]:
    out: list[Removal] = []
    later: dict[str, tuple[int, str]] = {}  # path -> nearest later (index, op) that makes a read stale
    for i in reversed(index.file_ops):
        accesses = index.file_access[i]
        if alive[i]:
            for a in accesses:
                if a.op == READ and a.path in later:
                    j, op = later[a.path]
                    out.append(Removal(i, "file_state", j, (a.path, op)))
                    break
        for a in accesses:
            if a.shows_whole_file:
                later[a.path] = (i, a.op)
    return out


@explains("file_state")
def _explain_file_state(r: Removal, messages: Sequence[Message]) -> str:
    path, op = r.detail
    what = "read again" if op == READ else "written"  # only a write or a full re-read makes a read stale
    assert r.related is not None  # a stale read points at the change that made it stale
    return f"stale read of {path}: the file was {what} at turn {messages[r.related].turn}"


# -- ttl --------------------------------------------------------------------------------------

def _ttl_passed(index: SessionIndex, r: int, kept: Callable[[int], int]) -> bool:
    eat = index.messages[r].expires_after_turn
    return eat is not None and eat < index.last_turn


class TTLTracker:
    """Messages whose ``expires_after_turn`` the conversation has passed."""

    def __init__(self, index: SessionIndex, config: PruneConfig):
        self.index = index
        self._seen = 0
        self._heap: list[tuple[int, int]] = []
        self._expired: set[int] = set()

    def advance(self, start: int) -> set[int]:
        index, changed = self.index, set()
        expiring = index.expiring
        for i in expiring[self._seen:]:
            turn = index.messages[i].expires_after_turn
            if turn is not None:  # always: index.expiring lists the messages that have one
                heapq.heappush(self._heap, (turn, i))
        self._seen = len(expiring)
        last = index.last_turn
        while self._heap and self._heap[0][0] < last:
            _, i = heapq.heappop(self._heap)
            self._expired.add(i)
            changed.add(i)
        return changed

    def removal(self, i: int) -> Removal | None:
        if i in self._expired:
            return Removal(i, "ttl", None, (self.index.messages[i].expires_after_turn, self.index.last_turn))
        return None


@register_rule("ttl", stage="expired", short="ttl", tracker=TTLTracker,
               placeholder="[expired after turn {message.expires_after_turn}]",
               removes_again=_ttl_passed,
               description="a message whose expires_after_turn is below the session's last turn")
def expire_by_ttl(index: SessionIndex, alive: Alive, config: PruneConfig) -> list[Removal]:
    last = index.last_turn
    msgs = index.messages
    new = tuple.__new__  # see supersede_calls
    # index.expiring lists the messages that have an expires_after_turn (the None test only narrows it)
    return [new(Removal, (i, "ttl", None, (t, last)))
            for i in index.expiring if (t := msgs[i].expires_after_turn) is not None and t < last and alive[i]]


@explains("ttl")
def _explain_ttl(r: Removal, messages: Sequence[Message]) -> str:
    return f"expired after turn {r.detail[0]}; the session is at turn {r.detail[1]}"
