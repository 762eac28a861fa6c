"""``cache_aware``: prune when the saving still to come pays for the broken prefix; compact at the window.

An online policy for issue 30 (``cache_aware_prune`` stays as it was, for comparison). It
sends what ``cache_aware_prune`` sends between decisions: never what the pruner drops on
arrival (free), every other prune deferred while the cached prefix is sent unchanged (the
bookkeeping is ``cache_aware_prune``'s, inherited). What differs is when it acts, and what it
does when the window forces it.

**When to apply the deferred prunes: ski rental.** Applying them removes R tokens from
every later request and breaks the cached prefix at the first removed message. Breaking
costs ``extra`` once: this request's bill under the provider's own cache model
(``CacheModel.quote``) when it sends the pruner's context, less its bill when it sends the
lazy context (everything after the break re-written at the write price instead of read).
Not breaking costs rent: R x the cache-read price at every request that carries them. The
policy rents until the rent it has already paid since its last break reaches ``extra``,
then breaks (the break-even rule of ski rental: whatever the session's length, it pays at
most about twice the better of breaking at once and never breaking). The rent already
paid is its estimate, from the past only, of the rent still to come: tokens dead for n
requests are expected to stay dead, and the session to go on, for about as many more.

Three more past figures count:

* the time since the chain's previous request, through the quote: past the TTL the cache
  is cold, ``extra`` is zero or less, and the prunes are applied at once, free of the
  prefix penalty;
* what it has saved against ``full`` so far (``full`` is billed alongside, as
  ``cache_aware_prune`` does): a break that costs more waits. Ski rental bounds the loss
  of one wrong break by its price; this bounds the sum of them by the savings that paid
  for them, so apart from the breaks the window or a restored message forces, it costs
  no more than ``full`` over any prefix of the session (on plain_chat at 2,000 turns a
  break at request 2,041 of 2,167 cost $0.46 after $0.46 of rent, and the session ended
  126 requests later: +0.2 % over ``full`` without this rule);
* how often the cache went cold so far (a gap past the TTL, or a recorded miss every
  strategy inherits): c cold requests in k predict the next within about k / c requests,
  where the break will be free; a break whose rent over those k / c requests is less than
  ``extra`` waits for it.

**The window.** When the context (after every prune the pruner makes) would still exceed
window minus reserve, where an agent compacts, the policy compacts with the project's
compactor (``compactor.Compactor``; its summarisation call is billed) and sends the system
messages, the summary and the pruner's context from the first kept message on. A
compaction re-writes the prefix after the system messages once, like a cut of the oldest
messages would, but leaves ``keep_recent_tokens`` and the summary instead of a context just
under the trigger, so one compaction buys room for many requests (a cut near the window
pays the near-whole re-write again a few requests later). The deferred prunes are applied
first (the prefix breaks anyway), so less is summarised. When pruning alone would bring the
context under the trigger by less than one request's growth (the average so far), it
compacts at once instead of paying for a break that buys one request (on codemie-624a4a58
that break re-wrote 183k tokens, $0.71, one request before the compaction). Should the
compactor find no cut, the oldest messages are dropped as ``cache_aware_prune`` does.

**What the compaction keeps.** What it summarises is what the later replies lose (the summary
holds few of its terms: on tool_agent at 1,000 turns, one compaction keeping ``keep_recent_tokens``
left 97.4 % recall, where ``cache_aware_prune``'s cut keeps 99.7 %). So it keeps more of the
newest context verbatim, up to ``KEEP_SHARE`` of window minus reserve, as far as the savings
against ``full`` so far pay for the extra tokens' write and their read until the next compaction
(``_keep``): the bank rule again. Where the policy saved nothing it keeps what ``compact`` keeps.

**Causal.** Every figure a decision reads exists at request k: R and the pruner's context
(the incremental pruner fed the messages up to k), the quote (the cache state after k-1 and
request k's own time, price, window and token scale, all fitted on the recording up to k),
the requests made so far and the cold requests among them (billed before k), the savings and
the average growth per request behind the compaction's kept tail. Nothing reads
a later message, a later time or the session's length.

**What it never pays.** At a request where it does not act, it sends its previous context
with the new messages the pruner keeps appended, a new message left out only when the
placeholder sent for it is shorter (else it is sent, and its prune deferred); that is never
dearer than ``full``'s request (``full`` appends every new message to a context at least as
long, cached the same way), but for OpenAI's 128-token step of the cached prefix, which can
cost up to 127 tokens at the uncached price. So over any prefix of the session it costs at
most ``full`` plus what it paid at the requests where it acted (the breaks, the compactions
and their summarisation calls) plus that rounding; ``tests/unit/replay/test_replay_cache_aware_policy.py``
checks this row by row.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from typing import Sequence

from ...compaction import CompactionSettings
from ...engine.context import Context
from ...model import Message
from ..cache import CacheUsage
from ..requests import Request, price_of, scale_of
from ..strategy import Event, ExtraCall, ReplayEnv, Step, register_strategy
from .cache_aware_prune import CacheAwarePrune, _dollars, _SwitchView
from .compactor import Compactor

#: The most a compaction keeps verbatim: this share of window minus reserve (provider tokens). Above the
#: project's ``keep_recent_tokens`` it keeps only what its savings against ``full`` pay for (``_keep``).
KEEP_SHARE = 0.5


class _KeepingCompactor(Compactor):
    """The project's compactor, keeping ``keep`` provider tokens verbatim (set before each run) instead of
    the settings' ``keep_recent_tokens``; everything else (the cut rules, the summary) is the compactor's."""

    keep: int | None = None

    def settings(self, request: Request) -> CompactionSettings:
        s = super().settings(request)
        if self.keep is None:
            return s
        return replace(s, keep_recent_tokens=max(s.keep_recent_tokens, int(self.keep / scale_of(request).slope)))

#: The bill's miss reasons that mean the cache went cold for a reason no strategy controls.
COLD_MISSES = ("ttl", "recorded")


@register_strategy("cache_aware", order=45,
                   summary="prunes when the rent it has paid for carrying what the pruner removes reaches the "
                   "cost of re-writing the broken prefix (ski rental) and its savings against full cover it, at "
                   "once when the cache is cold anyway; "
                   "compacts when the pruned context would exceed window minus reserve")
class CacheAware(CacheAwarePrune):
    uses_pruner = True

    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        self.compactor = _KeepingCompactor(env)
        self.summary_message: Message | None = None  # the current compaction's summary, sent after the system head
        self.cold = 0  # requests of this chain billed cold for a reason no strategy controls
        self._calls: tuple[ExtraCall, ...] = ()
        self.rent_paid = 0.0  # dollars paid since the last break for carrying what the pruner removes
        self.rent_due = 0.0  # this request's share of it, known once it is billed
        self.added = 0  # tokens (ours) the chain's new messages brought so far

    # -- the decisions ----------------------------------------------------------------------------

    def _should_switch(self, request: Request, ctx: Context, position: int, removable: int) -> str | None:
        model, price, scale = self.env.cache_model(request), price_of(request), scale_of(request)
        if self.missing:
            return "the pruner restored a message a later one needs, which this context no longer holds"
        if scale.provider(self.wire.tokens) > self._limit(request) and removable > 0:
            if scale.provider(ctx.tokens + round(self.growth())) > self._limit(request):
                return None  # the break would buy less than one request: compact instead (``_cut``)
            return "the context would exceed the window (less the reserve)"
        if removable <= 0 or self._under_minimum(ctx.tokens, request):
            return None
        lazy = model.quote(self.state, self.wire, price=price, scale=scale, time=request.time)
        view = _SwitchView(self._sent(ctx.messages), ctx.tokens, min(position, self.wire.changed_at), self.wire)
        switch = model.quote(self.state, view, price=price, scale=scale, time=request.time)
        extra = _dollars(price, switch) - _dollars(price, lazy)
        if extra <= 0:
            if lazy.cached == 0:
                return "the cache is cold anyway: pruning costs nothing extra"
            return "pruning costs no more than sending the deferred messages again"
        rent = scale.part(removable) * price.cached_input / 1e6  # what carrying them costs per cached request
        self.rent_due = rent  # added to the rent paid once this request is billed without the break
        if self.rent_paid < extra:
            return None
        if extra > self.full_cost - self.own_cost:
            return None  # it spends only what it has saved against full so far
        if self.cold and rent * self.requests / self.cold < extra:
            return None  # the cache is expected to go cold (a free break) before the break would pay
        return (f"pays back: ${extra:.4f} now, ${self.rent_paid:.4f} paid so far to carry the {removable:,} "
                "removable tokens")

    def growth(self) -> float:
        """Tokens (ours) a request has added on average so far: the room one more request needs."""
        return self.added / self.requests if self.requests else 0.0

    def _switch(self, ctx: Context, position: int) -> None:
        super()._switch(ctx, position)
        self.rent_paid = self.rent_due = 0.0  # what was carried is gone

    def _sent(self, messages: Sequence[Message]) -> Sequence[Message]:
        sent = super()._sent(messages)
        if self.summary_message is None:
            return sent
        head = self.head
        return [*sent[:head], self.summary_message, *sent[head:]]

    def _cut(self, request: Request, ctx: Context) -> Event:
        """The window forces it: compact (the pruner's context from the first kept message on, behind the
        summary); drop the oldest messages only when the compactor finds no cut."""
        wire = self.wire
        before = wire.tokens
        self._resend(ctx)  # the prefix breaks anyway: every deferred prune first, so less is summarised
        self.compactor.keep = self._keep(request)
        done = self.compactor.run(wire.materialize(), request)
        if done is None or done.first_kept < self.floor:
            event = super()._cut(request, ctx)
            if self.summary_message is not None and all(m is not self.summary_message for m in wire.messages):
                self.summary_message = None  # the cut dropped it with the oldest messages
            return event
        self.summary_message = done.summary
        self.floor = done.first_kept
        self._resend(ctx)
        self._calls = done.calls
        self.rent_paid = self.rent_due = 0.0
        return done.event(before, wire.tokens)

    def _keep(self, request: Request) -> int:
        """Provider tokens the compaction keeps verbatim: ``keep_recent_tokens``, and above it as much of
        ``KEEP_SHARE`` of the room under the trigger as the savings against ``full`` so far pay for.

        What a compaction summarises is what the replies lose (the summary holds a few of its terms), so a
        longer verbatim tail keeps more of what the next requests use. It costs its write now and its
        cached read at every request until the next compaction, about (room left) / (growth per request)
        of them, fewer if the session has not lasted that long: the rent of ski rental again, paid from
        what the policy has saved, so on a session where it saved nothing it compacts as ``compact``."""
        price, scale = price_of(request), scale_of(request)
        default = self.env.settings.keep_recent_tokens
        most = int(KEEP_SHARE * self._limit(request))
        if most <= default:
            return default
        growth = scale.part(round(self.growth()))
        carried = self.requests if growth <= 0 else min(self.requests, (self._limit(request) - most) / growth)
        per_token = (price.write_price(self.env.settings.ttl) + price.cached_input * max(1.0, carried)) / 1e6
        if per_token <= 0:
            return most  # an unpriced model: keeping costs nothing
        bank = self.full_cost - self.own_cost
        return default + int(min(most - default, max(0.0, bank) / per_token))

    def _resend(self, ctx: Context) -> None:
        """Send the pruner's context behind the cut (and the summary), every deferred prune applied."""
        wire, floor, owner, head = self.wire, self.floor, self.env.call_owner, self.head
        sent = self._sent(ctx.messages)
        wire.replace(sent)
        wire.resync_substitutes(ctx.placeholders, relevant=lambda cid: not head <= owner.get(cid, floor) < floor)
        wire.changed_at = min(wire.changed_at, head)
        self.ids = {m.id for m in sent}
        self.defined = {}
        self._count_keys(sent)
        for pending in (self.only_ours, self.only_pruner, self.left_out, self.pending_set, self.missing,
                        self.placeholder_changes):
            pending.clear()
        self.pending.clear()
        self.placeholder_heap.clear()

    # -- the request -----------------------------------------------------------------------------

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        """``cache_aware_prune``'s request, but a new message is left out only when what is sent instead
        (the placeholder of its call) is shorter: a placeholder longer than the result it stands for made
        the leave-out dearer than sending the message (on task-patterns-998db3cd, 8 tokens more at request
        4, each written at 12.5 times the read price)."""
        self._calls = ()
        self.rent_due = 0.0
        self.added += self.env.book.total(new)
        env, wire = self.env, self.wire
        self.requests += 1
        start = request.position - len(new)
        self.shadow.extend(new)
        before = wire.tokens + env.book.total(new)
        ctx, change = self.feed.advance(request, new)
        self._track_pruner(ctx, change, start)
        index_of = env.index_of
        kept_new: Sequence[Message] = ctx.messages[bisect_left(ctx.messages, start, key=lambda m: index_of[m.id]):]
        kept_ids = {m.id for m in kept_new}
        results = {m.tool_call_id for m in kept_new if m.tool_call_id is not None}
        substitutes = [ctx.placeholders[c.id] for m in kept_new for c in m.tool_calls
                       if c.id in ctx.placeholders and c.id not in results]
        free = env.book.total(new) - env.book.total(kept_new) - sum(env.book.text(t) for t in substitutes)
        if len(kept_new) < len(new) and (free <= 0 or self._under_minimum(before - free, request)):
            kept_new, free = list(new), 0  # sent as it is: what the pruner drops is a prune to make later
            for m in new:
                if m.id not in kept_ids:
                    self._defer(index_of[m.id])
                    self.only_ours.add(m.id)
        if free:
            self.left_out.update(m.id for m in new if m.id not in kept_ids)
        wire.extend(kept_new)
        sent_ids = [m.id for m in kept_new]
        self.ids.update(sent_ids)
        self.only_pruner.difference_update(sent_ids)
        self._count_keys(kept_new)
        if free:
            for m in kept_new:
                for c in m.tool_calls:
                    text = ctx.placeholders.get(c.id)
                    if text is not None and c.id not in results:
                        wire.set_substitute(c.id, text, len(wire))
        lazy_tokens = wire.tokens
        first = self._first_difference()
        reason = None
        position = 0
        if first is not None:
            position = bisect_left(wire.messages, first, key=lambda m: index_of.get(m.id, -1))
            reason = self._should_switch(request, ctx, position, lazy_tokens - ctx.tokens)
        events = []
        if reason is not None:
            self._switch(ctx, position)
            events.append(Event("prune", before, wire.tokens, wire.changed_at, reason))
        if scale_of(request).provider(wire.tokens) > self._limit(request):
            events.append(self._cut(request, ctx))
        if not events:
            return self._done(before, lazy_tokens, free)
        return Step(events=tuple(events), extra_calls=self._calls)

    def billed(self, request: Request, usage: CacheUsage, dollars: float, *, cold: bool) -> None:
        super().billed(request, usage, dollars, cold=cold)  # its cache state, and full's bill beside it (the bank)
        if self.requests > 1 and usage.miss in COLD_MISSES:
            self.cold += 1
        elif usage.cached:
            self.rent_paid += self.rent_due

