"""Prune a growing conversation turn by turn, the way an agent loop runs it.

An agent re-prunes after every turn. Pruning the whole history each time costs
time proportional to its length, every turn. ``IncrementalPruner`` carries the
passes' state from turn to turn, so an append costs about what the new messages
and the decisions they change cost. After every append, ``result()`` equals
``prune()`` of everything appended so far (the tests check this on generated
sessions, decision by decision).

>>> from pruner import Message
>>> p = IncrementalPruner()
>>> p.append([Message(id="u1", role="user", content="hello")]).messages
1
>>> p.result().stats.messages_after
1

When an earlier original expires, the copies that pointed at it (and whatever
they in turn change) are judged again in position order. When restorations
would make a second round of the passes change something, it prunes everything
again, so the result is always exact; ``full_recomputes`` counts how often.
"""

from __future__ import annotations

import heapq
import time
from collections import ChainMap
from bisect import bisect_left, insort
from dataclasses import dataclass, field
from typing import Iterable

from .index import SessionIndex
from .fileops import READ
from ..model import Message, Session, validate_messages
from .context import Context, ContextChange, ContextTracker, change_between
from .prune import PruneConfig, PruneResult, _finish, collector_paused, message_tokens, prune
from ..tokens import get_counter
from .rounds import settled
from ..rules import RULES, Removal
from ..rules.duplicates import _LOOKUPS, DuplicateWalk, is_candidate
from ..rules.dependencies import needs_of

_BUILTIN_RULES = frozenset({"superseded_call", "file_state", "ttl", "duplicate_context"})


@dataclass(frozen=True)
class TurnUpdate:
    """What one ``append`` did (cheap to build, unlike a full ``PruneResult``)."""

    messages: int  # messages in the conversation now
    recomputed: bool  # True when the append fell back to pruning everything again
    change: ContextChange = field(default_factory=ContextChange)  # how the context changed


class _Alive12:
    """``view[i]``: is message ``i`` kept by passes 1 and 2 (what ``needs_of`` reads)."""

    __slots__ = ("_gone1", "_dup")

    def __init__(self, pruner: "IncrementalPruner"):
        self._gone1, self._dup = pruner._gone1, pruner._dup

    def __getitem__(self, i: int) -> bool:
        return not self._gone1[i] and i not in self._dup


class _SetOverlay:
    """A set seen through: reads the base, writes to ``added``."""

    def __init__(self, base: set):
        self.base, self.added = base, set()

    def __contains__(self, item) -> bool:
        return item in self.added or item in self.base

    def add(self, item) -> None:
        self.added.add(item)


class IncrementalPruner:
    """Keeps the pruning of a growing conversation up to date, one append at a time."""

    def __init__(self, config: PruneConfig | None = None, *, name: str = "", source_format: str = "native",
                 metadata: dict | None = None):
        self.config = config or PruneConfig()
        self._session_fields = dict(name=name, source_format=source_format, metadata=dict(metadata or {}))
        self._messages: list[Message] = []
        self._seen: dict[str, int] = {}
        self._call_ids: set[str] = set()
        self.full_recomputes = 0
        self.appends = 0
        self._multi_round: PruneResult | None = None  # set when the carried round does not settle it
        # Custom rules or switched-off passes: no carried state, always prune in full.
        self._carry = (set(RULES) == _BUILTIN_RULES and self.config.expire and self.config.deduplicate
                       and self.config.restore and not self.config.disabled_rules)
        self._reset()

    # -- public -----------------------------------------------------------------------------

    def append(self, messages: Iterable[Message]) -> TurnUpdate:
        """Add messages (in order) and bring the pruning up to date."""
        new = list(messages)
        start = len(self._messages)
        # Validated into overlays on the known ids, so a refused batch changes nothing
        # and an accepted one costs only its own size.
        seen = ChainMap({}, self._seen)
        calls = _SetOverlay(self._call_ids)
        validate_messages(new, seen=seen, call_ids=calls, start=start)
        self._seen.update(seen.maps[0])
        self._call_ids |= calls.added
        # No collector pause here (unlike prune()): an append allocates little, and
        # re-enabling the collector after every turn would set off a collection each time.
        return self._append(new, start)

    def _append(self, new: list[Message], start: int) -> TurnUpdate:
        self._messages.extend(new)
        self.appends += 1
        recomputed = False
        before = self._multi_round
        if not self._carry:
            self._multi_round = prune(self._session(), self.config, validate=False)
            recomputed = True
        else:
            self._changed = set(range(start, len(self._messages)))
            self._advance(start)
            self._tracker.grow()
            change = self._tracker.refresh(self._changed, self._kept_by_passes, self._removal_of)
            if self._settled_now():
                self._multi_round = None
            else:
                self._multi_round = prune(self._session(), self.config, validate=False)
                recomputed = True
        if recomputed or before is not None:
            # The context comes from (or returns from) a full prune: compare the two whole.
            previous = (_result_context(before) if before is not None
                        else self._tracker.previous_context() if self._carry else None)
            change = change_between(previous, self.context())
        self.full_recomputes += recomputed
        return TurnUpdate(messages=len(self._messages), recomputed=recomputed, change=change)

    def context(self) -> Context:
        """What the model receives now (kept messages and placeholders): what an agent
        loop sends after each turn. It costs a copy of the kept list, not a rebuild of
        the decisions; ``result()`` gives the full explanation."""
        if self._multi_round is not None:
            return _result_context(self._multi_round)
        return self._tracker.context()

    def _kept_by_passes(self, i: int) -> bool:
        return self._alive12(i) or i in self._restored

    def _removal_of(self, i: int) -> tuple[str, str, int | None]:
        r = self._pass1_removal(i)
        if r is not None:
            return "expired", r.rule, r.related
        r = self._dup[i]
        return "duplicate", r.rule, r.related

    def result(self) -> PruneResult:
        """The full result for everything appended so far; equals ``prune()`` of it."""
        if self._multi_round is not None:
            return self._multi_round
        with collector_paused():
            return self._result()

    def _result(self) -> PruneResult:
        started = time.perf_counter()
        n = len(self._messages)
        final: dict[int, tuple[str, Removal]] = {}
        first_removal: dict[int, str] = {}
        for i in range(n):
            r = self._pass1_removal(i)
            status = "expired"
            if r is None and i in self._dup:
                r, status = self._dup[i], "duplicate"
            if r is not None:
                first_removal[i] = r.rule
                if i not in self._restored:
                    final[i] = (status, r)
        restored = {j: Removal(j, rule, needer, (detail,)) for j, (needer, _, rule, detail) in
                    ((j, min(needers)) for j, needers in self._restored.items())}
        alive = [self._alive12(i) or i in self._restored for i in range(n)]
        rounds = 1  # settled: a second round would change nothing, so prune() skips it too
        return _finish(self._session(), self._messages, alive, final, restored, first_removal, self.config,
                       rounds, started)

    # -- state --------------------------------------------------------------------------------

    def _session(self) -> Session:
        return Session(messages=tuple(self._messages), **self._session_fields)

    def _reset(self) -> None:
        self._index = SessionIndex(self.config.file_tools)
        counter = get_counter(self.config.encoding)
        call_site = self._index.call_site
        self._tracker = ContextTracker(
            self._messages, call_owner=lambda cid: (call_site.get(cid) or (None,))[0],
            tokens_of=lambda m: message_tokens(m, counter), count_text=counter.count,
            policy=self.config.orphan_policy)
        self._changed: set[int] = set()
        self._last_of_key: dict[str, int] = {}
        self._superseded: dict[int, int] = {}  # result -> next newer result of the same call
        self._previous: dict[int, int] = {}  # result -> the result of the same call before it
        self._pending_reads: dict[str, list[int]] = {}  # path -> reads not yet stale
        self._invalidators: dict[str, list[int]] = {}  # path -> messages that make reads stale
        self._stale: dict[int, dict[str, tuple[int, str]]] = {}  # read -> path -> (invalidator, op)
        self._ttl_heap: list[tuple[int, int]] = []
        self._ttl: set[int] = set()
        self._gone1 = bytearray()  # 1 where pass 1 removes the message
        self._walk = DuplicateWalk(self._index, self.config)
        self._members_by_text: dict[str, list[int]] = {}  # walk members by normalised text
        self._lookup_users: dict[int, list[int]] = {}  # anchor -> walk members that look it up
        self._dup: dict[int, Removal] = {}
        self._dependents: dict[int, set[int]] = {}  # original -> copies pointing at it
        self._originals: set[int] = set()
        self._definers: dict[str, list[int]] = {}
        self._kept_definers: dict[str, list[int]] = {}
        self._referrers: dict[str, list[int]] = {}  # key -> messages that refer to it
        self._results_of: dict[int, list[int]] = {}  # assistant index -> its results
        self._needs: dict[int, list] = {}  # active needer -> [(target, (needer, order, rule, detail))]
        self._restored: dict[int, set[tuple[int, int, str, str]]] = {}  # target -> needers' entries
        self._witness: dict[int, int] = {}  # restored -> a kept message showing why pass 1 removed it
        self._was_settled = False
        self._kept_changed = True

    def _pass1_removal(self, i: int) -> Removal | None:
        """The pass-1 removal of ``i`` with rule precedence: superseded, stale, ttl."""
        j = self._superseded.get(i)
        if j is not None:
            return Removal(i, "superseded_call", j, (self._index.result_key[i],))
        stale = self._stale.get(i)
        if stale:
            for a in self._index.file_access[i]:
                if a.op == READ and a.path in stale:
                    v, op = stale[a.path]
                    return Removal(i, "file_state", v, (a.path, op))
        if i in self._ttl:
            return Removal(i, "ttl", None, (self._messages[i].expires_after_turn, self._index.last_turn))
        return None

    def _removed1(self, i: int) -> bool:
        return self._gone1[i] == 1

    def _alive12(self, i: int) -> bool:
        return not self._removed1(i) and i not in self._dup

    # -- the passes, carried forward ----------------------------------------------------------

    def _advance(self, start: int) -> None:
        index = self._index
        index.extend(self._messages[start:])
        n = len(self._messages)
        newly_removed = self._expire(start, n)
        old_left = sorted(j for j in newly_removed if j < start)
        died = [j for j in old_left if j not in self._dup]  # kept by passes 1-2 until now
        revived: list[int] = []
        seeds: set[int] = set()
        for j in old_left:  # pass 2 no longer sees j
            seeds |= self._leave_walk(j)
        if seeds:
            self._rejudge(seeds, died, revived)
        for i in range(start, n):  # pass 2 for the new messages, in order
            if not self._removed1(i) and is_candidate(index, i):
                self._join_walk(i)
                r = self._walk.step(i)
                if r is None:
                    self._originals.add(i)
                else:
                    self._dup[i] = r
                    self._dependents.setdefault(r.related, set()).add(i)
        self._update_needs(start, n, died, revived)
        # What the settled check read can only change when an earlier message's status did.
        self._kept_changed = bool(old_left or died or revived or self._restored_changed)

    # -- pass 2: the walk, and judging again what an original's departure changes ----------------

    def _join_walk(self, i: int) -> None:
        f = self._index.features[i]
        self._members_by_text.setdefault(f.normalised, []).append(i)
        for h in f.anchors[:_LOOKUPS]:
            self._lookup_users.setdefault(h, []).append(i)

    def _leave_walk(self, j: int) -> set[int]:
        """Take ``j`` out of pass 2; returns the later messages whose verdict may change."""
        if not is_candidate(self._index, j):
            return set()
        f = self._index.features[j]
        self._members_by_text[f.normalised].remove(j)
        for h in f.anchors[:_LOOKUPS]:
            self._lookup_users[h].remove(j)
        if j in self._dup:
            r = self._dup.pop(j)
            self._dependents[r.related].discard(j)
            return set()
        if j not in self._originals:
            return set()
        self._originals.discard(j)
        return self._unregister(j)

    def _affected(self, j: int, *, leaving: bool) -> set[int]:
        """Later walk members whose verdict may change when original ``j`` comes or goes."""
        f = self._index.features[j]
        out = set(self._dependents.get(j, ()))
        same = self._members_by_text.get(f.normalised, [])
        out.update(same[bisect_left(same, j + 1):])
        for h in f.anchors:
            users = self._lookup_users.get(h)
            if users:
                last = self._walk.affected_by(j, h, leaving=leaving)
                hi = len(users) if last is None else bisect_left(users, last + 1)
                out.update(users[bisect_left(users, j + 1):hi])
        return out

    def _unregister(self, j: int) -> set[int]:
        affected = self._affected(j, leaving=True)
        self._walk.unregister(j)
        return affected

    def _rejudge(self, seeds: set[int], died: list[int], revived: list[int]) -> None:
        """Judge again, in position order, every message an original's change may reach."""
        heap = sorted(seeds)
        done: set[int] = set()
        while heap:
            p = heapq.heappop(heap)
            if p in done:
                continue
            done.add(p)
            was_original = p in self._originals
            old = self._dup.get(p)
            if not was_original and old is None:
                continue  # left the walk in this same append
            verdict = self._walk.judge(p)
            self._changed.add(p)
            if verdict is None:
                if was_original:
                    continue
                self._dependents[old.related].discard(p)
                del self._dup[p]
                affected = self._affected(p, leaving=False)
                self._walk.register(p)
                self._originals.add(p)
                revived.append(p)
            else:
                if old is not None:
                    if old != verdict:
                        self._dependents[old.related].discard(p)
                        self._dup[p] = verdict
                        self._dependents.setdefault(verdict.related, set()).add(p)
                    continue
                affected = self._unregister(p)
                self._originals.discard(p)
                self._dup[p] = verdict
                self._dependents.setdefault(verdict.related, set()).add(p)
                died.append(p)
            for q in affected:
                if q > p and q not in done:
                    heapq.heappush(heap, q)

    def _expire(self, start: int, n: int) -> set[int]:
        """Pass 1 for messages ``start..n-1``; returns the messages it newly removes."""
        index = self._index
        removed: set[int] = set()
        self._gone1.extend(bytes(n - start))
        for i in range(start, n):
            key = index.result_key[i]
            if key is not None:
                prev = self._last_of_key.get(key)
                if prev is not None:
                    if not self._gone1[prev]:
                        removed.add(prev)
                        self._gone1[prev] = 1
                    self._superseded[prev] = i
                    self._changed.add(prev)
                    self._previous[i] = prev
                self._last_of_key[key] = i
            accesses = index.file_access[i]
            for a in accesses:
                if a.op != READ or not a.partial:
                    pending = self._pending_reads.pop(a.path, None)
                    for r in pending or ():
                        if r != i:
                            if not self._gone1[r]:
                                removed.add(r)
                                self._gone1[r] = 1
                            self._stale.setdefault(r, {})[a.path] = (i, a.op)
                            self._changed.add(r)
                    self._invalidators.setdefault(a.path, []).append(i)
            for a in accesses:
                if a.op == READ:
                    self._pending_reads.setdefault(a.path, []).append(i)
            m = self._messages[i]
            if m.expires_after_turn is not None:
                heapq.heappush(self._ttl_heap, (m.expires_after_turn, i))
        last = index.last_turn
        while self._ttl_heap and self._ttl_heap[0][0] < last:
            _, i = heapq.heappop(self._ttl_heap)
            if not self._gone1[i]:
                removed.add(i)
                self._gone1[i] = 1
            self._ttl.add(i)
            self._changed.add(i)
        return removed

    # -- pass 3: needs, kept up to date --------------------------------------------------------

    def _update_needs(self, start: int, n: int, died: list[int], revived: list[int]) -> None:
        index = self._index
        self._restored_changed = False
        recheck: set[int] = set()  # needers whose needs may have changed
        for j in revived:  # j is kept by passes 1-2 again (pass 2 judged it an original)
            for k in index.defines[j]:
                kept = self._kept_definers[k]
                hi = kept[0] if kept else n
                insort(kept, j)
                if j < hi:  # needers after j up to the old first kept definer now have one
                    refs = self._referrers.get(k, [])
                    recheck.update(refs[bisect_left(refs, j + 1): bisect_left(refs, hi + 1)])
            recheck.add(j)
            recheck.update(self._results_of.get(j, ()))
        for j in died:  # j was kept by passes 1-2 and no longer is
            for k in index.defines[j]:
                kept = self._kept_definers[k]
                was_first = kept[0] == j
                kept.remove(j)
                if was_first:  # needers after j up to the next kept definer lose it
                    hi = kept[0] if kept else n
                    refs = self._referrers.get(k, [])
                    recheck.update(refs[bisect_left(refs, j + 1): bisect_left(refs, hi + 1)])
            recheck.add(j)
            for r in self._results_of.get(j, ()):
                recheck.add(r)
        for i in range(start, n):
            m = self._messages[i]
            for k in index.defines[i]:
                self._definers.setdefault(k, []).append(i)
                kept = self._kept_definers.setdefault(k, [])
                if self._alive12(i):
                    insort(kept, i)
            for k in index.refs[i]:
                self._referrers.setdefault(k, []).append(i)
            if m.tool_call_id is not None:
                site = index.call_site.get(m.tool_call_id)
                if site is not None:
                    self._results_of.setdefault(site[0], []).append(i)
            recheck.add(i)
        heap = sorted(recheck)
        while heap:
            i = heapq.heappop(heap)
            active = self._alive12(i) or i in self._restored
            old = self._needs.pop(i, [])
            new = [(t, (i, order, rule, detail)) for order, (t, rule, detail) in enumerate(
                needs_of(index, i, self._alive12_view, self._definers, self._kept_definers))] \
                if active and (index.refs[i] or self._messages[i].tool_call_id) else []
            if new:
                self._needs[i] = new
            for need in old:
                if need not in new:
                    target, entry = need
                    needers = self._restored[target]
                    needers.discard(entry)
                    if not needers:
                        del self._restored[target]
                        self._changed.add(target)
                        self._restored_changed = True
                        heapq.heappush(heap, target)  # its own needs go too
            for need in new:
                if need not in old:
                    target, entry = need
                    fresh = target not in self._restored
                    self._restored.setdefault(target, set()).add(entry)
                    if fresh:
                        self._changed.add(target)
                    self._restored_changed = self._restored_changed or fresh
                    if fresh:
                        heapq.heappush(heap, target)

    @property
    def _alive12_view(self) -> "_Alive12":
        view = self.__dict__.get("_view")
        if view is None or view._dup is not self._dup or view._gone1 is not self._gone1:
            view = self._view = _Alive12(self)  # made again only after a reset
        return view

    # -- is the first round the whole story? -----------------------------------------------------

    def _settled_now(self) -> bool:
        """``_settled()``, skipped when nothing it reads changed since it last said yes.

        Its verdict can only turn from yes to no when an earlier message's status
        or the restored set changes; new messages at the end (checked by the
        last-kept-turn test) and a later last turn (TTLs only expire more) cannot.
        """
        if self._was_settled and not self._kept_changed and self._last_kept_turn_matches():
            return True
        self._was_settled = self._settled()
        return self._was_settled

    def _last_kept_turn_matches(self) -> bool:
        gone1, dup, restored, msgs = self._gone1, self._dup, self._restored, self._messages
        last = len(msgs) - 1
        while last >= 0 and not ((not gone1[last] and last not in dup) or last in restored):
            last -= 1
        return (msgs[last].turn if last >= 0 else 0) == self._index.last_turn

    def _settled(self) -> bool:
        """True when a second round of the passes over the kept messages changes nothing."""
        if not self._restored:
            return True
        gone1, dup, restored = self._gone1, self._dup, self._restored

        def kept(i: int) -> bool:
            return (not gone1[i] and i not in dup) or i in restored

        def later_results(r: int):
            j = self._last_of_key.get(self._index.result_key[r])
            while j is not None and j > r:  # newest first: usually the first one is kept
                yield j
                j = self._previous.get(j)

        def later_invalidators(r: int, path: str):
            stale = self._stale.get(r)
            if stale and path in stale:
                return [v for v in self._invalidators[path] if v > r]
            return ()

        return settled(self._index, restored, kept=kept, removed_by_pass1=lambda i: gone1[i] == 1,
                       later_results=later_results, later_invalidators=later_invalidators,
                       witness=self._witness)


def _result_context(r: PruneResult) -> Context:
    return Context(messages=r.kept.messages, placeholders=dict(r.placeholders), tokens=r.stats.tokens_after)
