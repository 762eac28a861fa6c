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
   * it is forced: the lazy context would exceed the window and the pruner's
     fits it with the reserve to spare (so one forced switch buys room for many
     requests, instead of one per request near the limit), or the pruner
     restored a message this context does not hold (a later message needs it).

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

from ...engine.index import markers
from ..strategy import Event, Step, Strategy, register_strategy
from ..wire import Wire, lookback_start, system_head
from .prune_every_request import PrunerFeed

#: A switch must pay back within this share of the requests made so far: a causal guess at how many
#: are left that does not count on the session lasting as long again.
HORIZON = 0.5


class _SwitchView:
    """The pruner's context as the cache model sees it, were this request to switch to it."""

    def __init__(self, messages, tokens: int, changed_at: int, wire: Wire):
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
    def __init__(self, env):
        super().__init__(env)
        self.feed = PrunerFeed.of(env)
        self.model = env.new_cache_model()
        self.state = self.model.new_state()
        self.shadow = Wire(env.book)  # what `full` sends, billed alongside to know the budget
        self.shadow_state = self.model.new_state()
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

    def _track_pruner(self, ctx, change, start: int) -> None:
        """Update pending / missing from how the pruner's context changed (its ``ContextChange``)."""
        index_of = self.env.index_of
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
            if i >= start:
                continue  # a new message: handled by the lazy append
            if i in self.pending_set:
                self.pending_set.discard(i)  # kept again: no longer a prune to make
            elif mid not in self.ids and mid not in self.left_out and not self._defined_here(
                    self.env.session.messages[i]):
                self.missing.add(i)  # restored by the pruner: a later message needs it
        if change.placeholders:
            self._track_placeholders(ctx.placeholders, change.placeholders)

    def _track_placeholders(self, placeholders, changed) -> None:
        """Calls whose placeholder in the pruner's context differs from the one we send (a changed text,
        or one we send that the pruner no longer does): a difference a switch would make."""
        ours, owner, result_of = self.wire.substitutes, self.env.call_owner, self.env.result_of_call.get
        for cid in changed:
            if cid not in ours and result_of(cid) in self.ids:
                continue  # we still send the result itself: already a pending prune
            if ours.get(cid) != placeholders.get(cid) and cid in owner:
                if self.placeholder_changes.get(cid) != owner[cid]:
                    self.placeholder_changes[cid] = owner[cid]
                    heapq.heappush(self.placeholder_heap, (owner[cid], cid))
            else:
                self.placeholder_changes.pop(cid, None)

    @staticmethod
    def _keys(m) -> tuple[str, ...]:
        return tuple(m.defines) + markers(m.content)[0]

    def _count_keys(self, messages, sign: int = 1) -> None:
        defined = self.defined
        for m in messages:
            for k in self._keys(m):
                n = defined.get(k, 0) + sign
                if n:
                    defined[k] = n
                else:
                    del defined[k]

    def _defined_here(self, m) -> bool:
        """A restored message whose every key some message we send defines too (the pruner restores the
        latest definer; an earlier one we still send holds the same): nothing is missing."""
        keys = self._keys(m)
        return bool(keys) and all(self.defined.get(k, 0) > 0 for k in keys)

    def _defer(self, i: int) -> None:
        if i not in self.pending_set:
            self.pending_set.add(i)
            heapq.heappush(self.pending, i)

    def _under_minimum(self, tokens: int) -> bool:
        """``tokens`` is under the provider's minimum cacheable length: pruning there could leave this
        context uncached at a request where ``full``'s has grown past the minimum and is read cheaply."""
        return self.env.provider(tokens) < getattr(self.model, "minimum", 0)

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

    def step(self, request, new):
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
        kept_new = ctx.messages[bisect_left(ctx.messages, start, key=lambda m: index_of[m.id]):]
        free = env.book.total(new) - env.book.total(kept_new)
        if free and self._under_minimum(wire.tokens + env.book.total(kept_new)):
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
        if first is None:
            return self._done(before, lazy_tokens, free)
        removable = lazy_tokens - ctx.tokens
        position = bisect_left(wire.messages, first, key=lambda m: index_of.get(m.id, -1))
        reason = self._should_switch(request, ctx, position, removable)
        if reason is None:
            return self._done(before, lazy_tokens, free)
        # 2. Switch: send the pruner's context from here on (one prefix change for all deferred prunes).
        # Its token total is the pruner's (placeholders included), so the context is not counted again.
        wire.switch(ctx.messages, ctx.placeholders, ctx.tokens)
        wire.changed_at = min(wire.changed_at, position)
        message_of = self.feed.message_of
        self._count_keys([message_of(mid) for mid in self.only_ours], -1)
        self._count_keys([message_of(mid) for mid in self.only_pruner])
        self.ids.difference_update(self.only_ours)
        self.ids.update(self.only_pruner)
        self.only_ours.clear()
        self.only_pruner.clear()
        self.left_out.clear()
        self.pending.clear()
        self.pending_set.clear()
        self.missing.clear()
        self.placeholder_changes.clear()
        self.placeholder_heap.clear()
        return Step(events=(Event("prune", before, wire.tokens, wire.changed_at, reason),))

    def _done(self, before: int, after: int, free: int) -> Step:
        if free > 0:
            return Step(events=(Event("prune", before, after, len(self.wire),
                                      "left out new messages the pruner drops (never sent: free)"),))
        return Step()

    def _should_switch(self, request, ctx, position: int, removable: int) -> str | None:
        env, model, price = self.env, self.model, self.model.price
        if self.missing:
            return "the pruner restored a message a later one needs, which this context no longer holds"
        if env.provider(self.wire.tokens) > env.window and \
                env.provider(ctx.tokens) <= env.window - env.settings.reserve_tokens:
            return "the context would exceed the window"
        if removable <= 0 or self._under_minimum(ctx.tokens):
            return None
        lazy = model.quote(self.state, self.wire, time=request.time)
        view = _SwitchView(ctx.messages, ctx.tokens, min(position, self.wire.changed_at), self.wire)
        switch = model.quote(self.state, view, time=request.time)
        extra = _dollars(price, switch) - _dollars(price, lazy)
        # A message removed now may be restored by the pruner later (a later message refers to it), which
        # re-writes the cache once more: the bank keeps that much in reserve for every switch.
        reserve = model.units(ctx.tokens) * (price.write_price(env.settings.ttl) - price.cached_input) / 1e6
        bank = (1 + self.budget) * self.full_cost - self.own_cost
        if extra + reserve > bank:
            return None
        if extra <= 0:
            if lazy.cached == 0:
                return "the cache is cold anyway: the switch costs nothing extra"
            return "the switch costs no more than sending the deferred messages again"
        saving = model.units(removable) * price.cached_input / 1e6  # per later request, if cached
        if saving * HORIZON * self.requests >= extra:
            return (f"pays back: ${extra:.4f} now, ${saving:.4f} saved per later request "
                    f"(repaid in {extra / saving:.0f} requests)")
        return None

    def billed(self, request, usage, dollars, *, cold):
        self.own_cost += dollars
        self.model.commit(self.state, self.wire, time=request.time, usage=usage)
        shadow_usage = self.model.quote(self.shadow_state, self.shadow, time=request.time, cold=cold)
        self.model.commit(self.shadow_state, self.shadow, time=request.time, usage=shadow_usage)
        self.full_cost += _dollars(self.model.price, shadow_usage) + dollars - _dollars(self.model.price, usage)
        self.shadow.mark()


def _dollars(price, usage) -> float:
    return price.dollars(input=usage.fresh, cached=usage.cached, written=usage.written, output=0)

