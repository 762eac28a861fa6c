"""What every schedule of the prune family sends at each request at least: the floor under its input.

The lower bound of a beam search (``search``) charges every schedule it cut the dollars it had paid
and, for each later request, at least that request's floor. Every family pays each reply's output
(the replies are fixed as recorded). The prune family also always sends its *permanent* messages: a
message that, from the request it arrives at on, is in the pruner's context at every request of its
chain. Why every schedule of the family sends it at every request after its arrival:

* on arrival, ``none`` appends it, ``drop`` appends what the pruner keeps among the new messages (it is
  kept: it is in the pruner's context then), ``prune`` sends the pruner's context (it is in it);
* afterwards ``none`` and ``drop`` only append, and a ``prune`` at any later request sends the pruner's
  context then, which holds it.

So a request's input is at least its permanent messages' tokens (in provider tokens, through the
request's scale), and every input token is billed at the least of the input, cache-read and
cache-write prices at least. ``input_floors`` measures the permanent messages with two lanes of the
replay's own machinery: ``full`` (when each message arrives) and ``prune`` at every request (which
messages ever leave the pruner's context, or never enter it). The compaction and combined families
have no such floor (a compaction replaces what it summarises), so theirs is the output alone.
"""

from __future__ import annotations

from typing import Any

from ..requests import Request
from ..wire import Wire
from .schedule import build


def input_floors(session: Any, settings: Any, prices: Any, summarizer: Any, lenses: Any) -> list[float]:
    """Per request, the least dollars of input any schedule of the prune family pays there."""
    from .schedule import plan_lane

    _, reqs, runner = build(session, settings, prices, summarizer)
    arrived: list[list[tuple[str, int]]] = [[] for _ in reqs]  # per request: (id, tokens) that arrive
    bad: set[tuple[str, str]] = set()  # (chain, id): out of the pruner's context at some request after arrival
    sent: list[int] = [0] * len(reqs)  # the pruner's context, in our tokens (a guard: the floor is below it)
    position = {r.index: n for n, r in enumerate(reqs)}

    def on_full(req: Request, wire: Wire) -> None:
        arrived[position[req.index]] = [(m.id, wire.book.tokens(m)) for m in wire.entered]

    pruned: dict[int, tuple[set[str], list[str]]] = {}

    def on_prune(req: Request, wire: Wire) -> None:
        sent[position[req.index]] = wire.tokens
        pruned[req.index] = (set(wire.ids), [m.id for m in wire.left])

    full = plan_lane(runner, {}, lenses, observer=on_full)
    _, _, runner2 = build(session, settings, prices, summarizer)
    prune = plan_lane(runner2, {r.index: "prune" for r in reqs}, lenses, observer=on_prune)
    for req in reqs:
        full.request(req)
        prune.request(req)
        chain = req.chain or "main"
        ids, left = pruned.pop(req.index)
        bad.update((chain, i) for i in left)
        bad.update((chain, i) for i, _ in arrived[position[req.index]] if i not in ids)
    out: list[float] = []
    held: dict[str, int] = {}
    ttl = runner.settings.ttl
    for n, req in enumerate(reqs):
        chain = req.chain or "main"
        held[chain] = held.get(chain, 0) + sum(t for i, t in arrived[n] if (chain, i) not in bad)
        price, scale = req.price, req.scale
        if price is None or scale is None or (req.recorded is not None and req.recorded.aborted):
            out.append(0.0)
            continue
        tokens = scale.provider(min(held[chain], sent[n]))
        unit = min(price.input, price.cached_input, price.write_price(ttl))
        out.append(max(0.0, tokens * unit / 1_000_000))
    return out
