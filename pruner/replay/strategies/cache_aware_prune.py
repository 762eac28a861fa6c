"""``cache_aware_prune``: prune only when it pays for the cache it breaks.

The economics (Anthropic's list prices: cache read 0.1x input, write 1.25x).
Removing R tokens that are already cached saves R x read price on every later
request; changing the prefix at position p re-bills everything after p at the
write price once (with Anthropic's 20-block lookback, a change further back
than the last few messages leaves only the system prompt cached). Pruning every
request pays that re-write again and again; never pruning reads the dead
tokens forever. The policy, deciding from the past only:

1. **Never send what the pruner already removes.** A new message the pruner
   drops when it arrives (a duplicate, a stale result) was never sent, so
   leaving it out breaks nothing: it is free. (Except below the provider's
   minimum cacheable length: there nothing is pruned, so this context is never
   left uncached when ``full``'s has grown past the minimum.)
2. **Defer every other prune** and keep sending the cached prefix unchanged,
   new messages appended. The pruner keeps running on the whole conversation,
   so what a switch would remove (R) and where it would first change the prefix
   are known at every request.
3. **Switch to the pruner's context** (apply every deferred prune at once) when
   * it is free: the cache is cold anyway (a gap longer than the TTL), so the
     switch costs nothing extra; or
   * it pays back: the extra cost of this request (quoted by the provider's
     cache model against sending the lazy context) is recovered by R x read
     price per later request within half as many requests again as the
     session has made so far;

   and in both cases the extra cost, plus a reserve for re-writing the whole
   context once more (should the pruner later restore something removed now),
   fits the bank: 0.5 % of what ``full`` (no management, tracked alongside)
   has cost so far plus everything this strategy has saved against it. So it
   never spends more than it has saved plus half a percent; or
   * it is forced: the lazy context would exceed window minus reserve (where an
     agent compacts: it acts before the API would refuse the request) and the
     pruner's is smaller, or the pruner restored a message this context does not
     hold (a later message needs it).
4. **Make room when pruning cannot.** Should the context still exceed window
   minus reserve after the switch, the oldest messages after the system ones
   are dropped (a call with its results) until it fits twice the reserve under
   the window, so one cut buys room for many requests; nothing before the cut is
   sent again. So the strategy never sends a request over its model's window
   while a message can be dropped.

Linear in the session: the state is carried from request to request, never rebuilt
from the whole context. What this context sends and the pruner's context differ by
two sets kept up to date from the pruner's own changes (``ContextChange``): the
messages only we send and the messages only the pruner's context holds. A switch
applies those two (the keys the sent messages define are counted for them alone),
and takes the pruner's token total instead of counting the context again; the
earliest deferred prune and placeholder change are heaps.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from typing import Iterable, Mapping, Sequence

from ...engine.context import Context, ContextChange
from ...analysis.index import markers
from ...model import Message
from ..cache import CacheState, CacheUsage
from ..prices import ModelPrice
from ..requests import Request, price_of, scale_of, window_of_request
from ..feed import PrunerFeed
from ..strategy import Event, ReplayEnv, Step, Strategy, register_strategy
from ..wire import Wire, lookback_start, system_head

#: A switch must pay back within this share of the requests made so far: a causal guess at how many
#: are left that does not count on the session lasting as long again.
HORIZON = 0.5
#: The detail of the event that says new messages were left out on arrival (rule 1), not a switch: the hindsight
#: bound reads a policy's decisions from its events (``pruner.replay.limit.family.online_schedules``).
FREE_DROP = "left out new messages the pruner drops (never sent: free)"


class _SwitchView:
    """The pruner's context as the cache model sees it, were this request to switch to it."""

    def __init__(self, messages: Sequence[Message], tokens: int, changed_at: int, wire: Wire):
        self.messages, self.tokens, self.changed_at, self._wire = messages, tokens, changed_at, wire
        self.length = len(messages)

    @property
    def head(self) -> int:
        return system_head(self.messages)

    @property
    def head_tokens(self) -> int:
        return self._wire.book.total(self.messages[:self.head])

    def lookback_start(self, positions: int) -> int:
        return lookback_start(self.messages, positions)

    def tokens_before(self, position: int) -> int:
        return self._wire.tokens_before(position)  # the same prefix as what was sent


@register_strategy("cache_aware_prune", order=40,
                   summary="never sends what the pruner drops on arrival; applies the other prunes in one batch "
                   "only when the cache is cold anyway, when the saving repays the cache re-write within the "
                   "session's horizon and fits what it has saved, or when the window forces it")
class CacheAwarePrune(Strategy):
    uses_pruner = True

    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        self.feed = PrunerFeed.of(env)
        self.state = CacheState()
        self.shadow = Wire(env.book)  # what `full` sends, billed alongside to know the budget
        self.shadow_state = CacheState()
        self.floor = 0  # session position of the first message after the system head still sent (the cuts)
        self.head = system_head(env.session.messages)
        self.full_cost = 0.0
        self.own_cost = 0.0
        self.budget = env.settings.cache_aware_budget
        self.pending: list[int] = []  # heap of session positions we send that the pruner drops
        self.pending_set: set[int] = set()
        self.missing: set[int] = set()  # positions the pruner keeps (restored) that we do not send
        self.placeholder_changes: dict[str, int] = {}  # call id -> its owner's position: placeholder differs
        self.placeholder_heap: list[tuple[int, str]] = []  # (owner, call id), stale entries skipped lazily
        self.ids: set[str] = set()  # ids we send
        # The two sides of the difference between what we send and the pruner's context, kept from its
        # changes so a switch costs what differs, not the context: ids only we send, ids only it holds.
        self.only_ours: set[str] = set()
        self.only_pruner: set[str] = set()
        self.defined: dict[str, int] = {}  # key -> how many messages we send define it
        # Left out on arrival since the last switch: what the pruner kept instead is still sent.
        self.left_out: set[str] = set()
        self.requests = 0

    # -- the pruner's changes ----------------------------------------------------------------

    def _track_pruner(self, ctx: Context, change: ContextChange, start: int) -> None:
        """Update pending / missing from how the pruner's context changed (its ``ContextChange``)."""
        index_of, floor, head = self.env.index_of, self.floor, self.head
        for mid in change.left:
            if mid in self.ids:
                self.only_ours.add(mid)
                self._defer(index_of[mid])  # we send it; the pruner now drops it
            else:
                self.only_pruner.discard(mid)
        for mid in change.entered:
            if mid in self.ids:
                self.only_ours.discard(mid)
            else:
                self.only_pruner.add(mid)  # a new message leaves this set when the lazy append sends it
            i = index_of[mid]
            if i >= start or head <= i < floor:
                continue  # a new message (handled by the lazy append), or one the cuts dropped for good
            if i in self.pending_set:
                self.pending_set.discard(i)  # kept again: no longer a prune to make
            elif mid not in self.ids and mid not in self.left_out and not self._defined_here(
                    self.env.session.messages[i]):
                self.missing.add(i)  # restored by the pruner: a later message needs it
        if change.placeholders:
            self._track_placeholders(ctx.placeholders, change.placeholders)

    def _track_placeholders(self, placeholders: Mapping[str, str], changed: Mapping[str, str | None]) -> None:
        """Calls whose placeholder in the pruner's context differs from the one we send (a changed text,
        or one we send that the pruner no longer does): a difference a switch would make."""
        ours, owner, result_of = self.wire.substitutes, self.env.call_owner, self.env.result_of_call.get
        for cid in changed:
            if owner.get(cid, self.floor) < self.floor:
                continue  # a call the cuts dropped
            if cid not in ours and result_of(cid) in self.ids:
                continue  # we still send the result itself: already a pending prune
            if ours.get(cid) != placeholders.get(cid) and cid in owner:
                if self.placeholder_changes.get(cid) != owner[cid]:
                    self.placeholder_changes[cid] = owner[cid]
                    heapq.heappush(self.placeholder_heap, (owner[cid], cid))
            else:
                self.placeholder_changes.pop(cid, None)

    @staticmethod
    def _keys(m: Message) -> tuple[str, ...]:
        return tuple(m.defines) + markers(m.content)[0]

    def _count_keys(self, messages: Iterable[Message], sign: int = 1) -> None:
        defined = self.defined
        for m in messages:
            for k in self._keys(m):
                n = defined.get(k, 0) + sign
                if n:
                    defined[k] = n
                else:
                    del defined[k]

    def _defined_here(self, m: Message) -> bool:
        """A restored message whose every key some message we send defines too (the pruner restores the
        latest definer; an earlier one we still send holds the same): nothing is missing."""
        keys = self._keys(m)
        return bool(keys) and all(self.defined.get(k, 0) > 0 for k in keys)

    def _defer(self, i: int) -> None:
        if i not in self.pending_set:
            self.pending_set.add(i)
            heapq.heappush(self.pending, i)

    def _under_minimum(self, tokens: int, request: Request) -> bool:
        """``tokens`` is under the provider's minimum cacheable length: pruning there could leave this
        context uncached at a request where ``full``'s has grown past the minimum and is read cheaply."""
        return scale_of(request).provider(tokens) < self.env.cache_model(request).minimum(price_of(request))

    def _sent(self, messages: Sequence[Message]) -> Sequence[Message]:
        """The pruner's messages this strategy may send: the system head and what follows the cut.
        They are in session order, so the cut is one slice found by two binary searches (a filter
        over the whole context cost the session's length at every request after a cut)."""
        if not self.floor:
            return messages
        index_of = self.env.index_of

        def key(m: Message) -> int:
            return index_of[m.id]

        lo = bisect_left(messages, self.head, key=key)
        hi = bisect_left(messages, self.floor, lo=lo, key=key)
        return [*messages[:lo], *messages[hi:]]

    def _first_difference(self) -> int | None:
        while self.pending and self.pending[0] not in self.pending_set:
            heapq.heappop(self.pending)
        heap, changes = self.placeholder_heap, self.placeholder_changes
        while heap and changes.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)  # no longer a difference, or recorded again at another owner
        # ``missing`` is filled and emptied within one request (a message missing forces the switch).
        firsts = [x for x in (self.pending[0] if self.pending else None,
                              min(self.missing) if self.missing else None,
                              heap[0][0] + 1 if heap else None)
                  if x is not None]
        return min(firsts) if firsts else None

    # -- the request ---------------------------------------------------------------------------

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        env, wire = self.env, self.wire
        self.requests += 1
        start = request.position - len(new)
        self.shadow.extend(new)
        before = wire.tokens + env.book.total(new)
        ctx, change = self.feed.advance(request, new)
        self._track_pruner(ctx, change, start)
        index_of = env.index_of
        # 1. New messages: only what the pruner keeps, with its placeholders for their calls, unless that
        # would leave the context under the provider's minimum cacheable length (it could then still be
        # uncached, billed at the input price, when `full`'s has passed the minimum and is read cheaply).
        kept_new: Sequence[Message] = ctx.messages[bisect_left(ctx.messages, start, key=lambda m: index_of[m.id]):]
        free = env.book.total(new) - env.book.total(kept_new)
        if free and self._under_minimum(wire.tokens + env.book.total(kept_new), request):
            kept_ids = {m.id for m in kept_new}
            kept_new, free = list(new), 0
            for m in new:
                if m.id not in kept_ids:  # sent although the pruner drops it: a prune to make later
                    self._defer(index_of[m.id])
                    self.only_ours.add(m.id)
        if free:
            kept_ids = {m.id for m in kept_new}
            self.left_out.update(m.id for m in new if m.id not in kept_ids)
        wire.extend(kept_new)
        sent_ids = [m.id for m in kept_new]
        self.ids.update(sent_ids)
        self.only_pruner.difference_update(sent_ids)
        self._count_keys(kept_new)
        for m in kept_new:
            for c in m.tool_calls:
                text = ctx.placeholders.get(c.id)
                if text is not None and not any(r.tool_call_id == c.id for r in kept_new):
                    wire.set_substitute(c.id, text, len(wire))
        lazy_tokens = wire.tokens
        first = self._first_difference()
        reason = None
        if first is not None:
            removable = lazy_tokens - ctx.tokens
            position = bisect_left(wire.messages, first, key=lambda m: index_of.get(m.id, -1))
            reason = self._should_switch(request, ctx, position, removable)
        events: list[Event] = []
        if reason is not None:
            # 2. Switch: send the pruner's context from here on (one prefix change for all deferred prunes).
            self._switch(ctx, position)
            events.append(Event("prune", before, wire.tokens, wire.changed_at, reason))
        if scale_of(request).provider(wire.tokens) > self._limit(request):
            events.append(self._cut(request, ctx))  # 4. pruning cannot make room: drop the oldest
        if not events:
            return self._done(before, lazy_tokens, free)
        return Step(events=tuple(events))

    def _limit(self, request: Request) -> int:
        """Where the agent acts: window minus reserve (provider tokens), as compaction triggers."""
        return window_of_request(request) - self.env.settings.reserve_tokens

    def _switch(self, ctx: Context, position: int) -> None:
        wire, floor, owner = self.wire, self.floor, self.env.call_owner
        if not floor:
            # Its token total is the pruner's (placeholders included), so the context is not counted again.
            wire.switch(ctx.messages, ctx.placeholders, ctx.tokens)
            wire.changed_at = min(wire.changed_at, position)
            message_of = self.feed.message_of
            self._count_keys([message_of(mid) for mid in self.only_ours], -1)
            self._count_keys([message_of(mid) for mid in self.only_pruner])
            self.ids.difference_update(self.only_ours)
            self.ids.update(self.only_pruner)
        else:  # after a cut: the pruner's context less what the cuts dropped (rebuilt: cuts are rare)
            sent = self._sent(ctx.messages)
            wire.replace(sent)
            wire.resync_substitutes(ctx.placeholders,
                                    relevant=lambda cid: not self.head <= owner.get(cid, floor) < floor)
            wire.changed_at = min(wire.changed_at, position)
            self.ids = {m.id for m in sent}
            self.defined = {}
            self._count_keys(sent)
        self.only_ours.clear()
        self.only_pruner.clear()
        self.left_out.clear()
        self.pending.clear()
        self.pending_set.clear()
        self.missing.clear()
        self.placeholder_changes.clear()
        self.placeholder_heap.clear()

    def _cut(self, request: Request, ctx: Context) -> Event:
        """Drop the oldest messages after the system head (a call with its results) until the context
        fits twice the reserve under the window; the cut is for good."""
        wire, book, index_of = self.wire, self.env.book, self.env.index_of
        before = wire.tokens
        target = scale_of(request).ours(max(1, self._limit(request) - self.env.settings.reserve_tokens))
        msgs = wire.messages
        head = wire.head
        last = len(msgs) - 1  # the newest unit is always kept
        while last > head and msgs[last].tool_call_id is not None:
            last -= 1
        stop, removed = head, 0
        while stop < last and before - removed > target:
            unit = stop + 1
            while unit < last and msgs[unit].tool_call_id is not None:
                unit += 1
            removed += book.total(msgs[stop:unit])
            removed += sum(book.text(wire.substitutes[c.id]) for m in msgs[stop:unit] for c in m.tool_calls
                           if c.id in wire.substitutes)
            stop = unit
        if stop == head:
            return Event("truncate", before, before, head, "nothing left to drop")
        self.floor = index_of[msgs[stop].id]
        gone = wire.delete(head, stop)
        for m in gone:
            self.ids.discard(m.id)
        self._count_keys(gone, -1)
        self.pending_set = {i for i in self.pending_set if i >= self.floor}
        self.pending = sorted(self.pending_set)
        self.missing = {i for i in self.missing if i >= self.floor}
        self.placeholder_changes = {c: o for c, o in self.placeholder_changes.items() if o >= self.floor}
        self.placeholder_heap = [(o, c) for c, o in self.placeholder_changes.items()]
        heapq.heapify(self.placeholder_heap)
        self.only_ours.clear()  # the fast switch is not used after a cut (see _switch)
        self.only_pruner.clear()
        return Event("truncate", before, wire.tokens, head,
                     f"dropped the {len(gone)} oldest messages: pruning alone could not keep the context under "
                     "window minus reserve")

    def _done(self, before: int, after: int, free: int) -> Step:
        if free > 0:
            return Step(events=(Event("prune", before, after, len(self.wire), FREE_DROP),))
        return Step()

    def _should_switch(self, request: Request, ctx: Context, position: int, removable: int) -> str | None:
        env, model, price, scale = self.env, self.env.cache_model(request), price_of(request), scale_of(request)
        if self.missing:
            return "the pruner restored a message a later one needs, which this context no longer holds"
        if scale.provider(self.wire.tokens) > self._limit(request) and removable > 0:
            return "the context would exceed the window (less the reserve)"
        if removable <= 0 or self._under_minimum(ctx.tokens, request):
            return None
        lazy = model.quote(self.state, self.wire, price=price, scale=scale, time=request.time)
        view = _SwitchView(self._sent(ctx.messages), ctx.tokens, min(position, self.wire.changed_at), self.wire)
        switch = model.quote(self.state, view, price=price, scale=scale, time=request.time)
        extra = _dollars(price, switch) - _dollars(price, lazy)
        # A message removed now may be restored by the pruner later (a later message refers to it), which
        # re-writes the cache once more: the bank keeps that much in reserve for every switch.
        reserve = scale.provider(ctx.tokens) * (price.write_price(env.settings.ttl) - price.cached_input) / 1e6
        bank = (1 + self.budget) * self.full_cost - self.own_cost
        if extra + reserve > bank:
            return None
        if extra <= 0:
            if lazy.cached == 0:
                return "the cache is cold anyway: the switch costs nothing extra"
            return "the switch costs no more than sending the deferred messages again"
        saving = scale.part(removable) * price.cached_input / 1e6  # per later request, if cached
        if saving * HORIZON * self.requests >= extra:
            return (f"pays back: ${extra:.4f} now, ${saving:.4f} saved per later request "
                    f"(repaid in {extra / saving:.0f} requests)")
        return None

    def billed(self, request: Request, usage: CacheUsage, dollars: float, *, cold: bool) -> None:
        model, price, scale = self.env.cache_model(request), price_of(request), scale_of(request)
        self.own_cost += dollars
        model.commit(self.state, self.wire, price=price, scale=scale, time=request.time, usage=usage)
        shadow_usage = model.quote(self.shadow_state, self.shadow, price=price, scale=scale, time=request.time,
                                   cold=cold, cold_read=request.inherit_read)
        model.commit(self.shadow_state, self.shadow, price=price, scale=scale, time=request.time, usage=shadow_usage)
        self.full_cost += _dollars(price, shadow_usage) + dollars - _dollars(price, usage)
        self.shadow.mark()


def _dollars(price: ModelPrice, usage: CacheUsage) -> float:
    return price.dollars(input=usage.fresh, cached=usage.cached, written=usage.written, output=0)

