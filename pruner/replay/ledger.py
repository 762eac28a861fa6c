"""The cache ledger: for every recorded request, whether the cache served it, and if not, why.

A request is a **hit** when it read at least what the previous request of its
chain left cached, **partial** when it read some but less, and a **miss** when
it read nothing (a request below the model's minimum cacheable length reads
nothing and is a miss whose cause is ``below_minimum``, re-billed $0: no hit
was possible). Each partial or miss gets the first cause of ``CAUSES`` (in that
order of precedence) that the transcript shows; ``no_visible_cause`` when none
does. Its ``rebilled_dollars`` is what it paid above the same request served as
a hit: the previous request's cached prefix billed at the cached price instead
of the write (or input) price it paid, at the request's own model's list price.
Everything comes from the recorded usage and what ``as_recorded`` sent; nothing
is modelled. The requests are the bill's (``pruner.replay.bill``: every chain,
each request id once, aborted ones left out), each with the bill's price row
and dollars. See ``docs/cache-ledger.md``.

>>> from pruner.model import Message, Session
>>> def a(i, read, write, t):
...     return Message(id=f"a{i}", role="assistant", content="ok", metadata={
...         "model": "claude-sonnet-4-5", "timestamp": t,
...         "usage": {"input": 3, "output": 10, "cache_read": read, "cache_write": write}})
>>> s = Session.of([Message(id="u0", role="user", content="go", metadata={"timestamp": 1000}), a(0, 0, 5000, 1001),
...                 Message(id="u1", role="user", content="more", metadata={"timestamp": 1400}), a(1, 0, 5100, 1401)])
>>> first, second = ledger(s)
>>> first.cause, second.status, second.cause, second.gap_seconds
('first_request', 'miss', 'ttl_expired', 400.0)
>>> round(second.rebilled_dollars, 6)    # 5,000 tokens written at $3.75/MTok instead of read at $0.30
0.01725
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence

from ..compaction.cut import context_window, is_summary_message
from ..model import MAIN_CHAIN, Message, Session
from .bill import BilledRequest, bill
from .cache import (ANTHROPIC_LOOKBACK_BLOCKS, ANTHROPIC_TTLS, OPENAI_INCREMENT, OPENAI_MIN_TOKENS, OPENAI_RETENTION_S,
                    AnthropicCache, CacheModel)
from .detect import detect
from .prices import PROVIDERS, ModelPrice, PriceTable, default_prices
from .recording import cache_models
from .requests import find_requests
from .settings import ReplaySettings
from .wire import lookback_start

if TYPE_CHECKING:  # pragma: no cover
    from .requests import Request


class ReplayedRequests(Protocol):
    """What ``ledger_of`` reads of a ``Replay``: named by shape, because ``pruner.replay.engine``
    imports this module for ``Replay.ledger``."""

    @property
    def session(self) -> Session: ...

    @property
    def settings(self) -> ReplaySettings: ...

    @property
    def price(self) -> ModelPrice: ...

    @property
    def prices_label(self) -> str: ...

    @property
    def requests(self) -> tuple[Request, ...]: ...


#: The causes, in order of precedence (the first that applies is the one reported), each with the
#: sentence the CLI and the dashboard show.
CAUSES: dict[str, str] = {
    "first_request": "the first request of the session: nothing was cached yet",
    "subagent_start": "the first request of a subagent: its system prompt, tools and task are a new prefix",
    "model_changed": "the model changed since the chain's previous request: a cache belongs to one model",
    "compaction": "a recorded compaction replaced the history right before this request",
    "ttl_expired": "the gap since the chain's previous request was longer than the cache's lifetime",
    "prefix_changed": "a message before the breakpoint differs from what the previous request sent",
    "lookback_exceeded": "the previous breakpoint lies beyond Anthropic's 20-block lookback",
    "below_minimum": "too short to cache: below the model's minimum cacheable length",
    "no_visible_cause": "no cause visible in the transcript: the system prompt, tools or the provider's "
                        "servers are outside it",
}
FIRST_REQUEST, SUBAGENT_START, MODEL_CHANGED, COMPACTION, TTL_EXPIRED, PREFIX_CHANGED, LOOKBACK_EXCEEDED, \
    BELOW_MINIMUM, NO_VISIBLE_CAUSE = CAUSES
STATUSES = ("hit", "partial", "miss")
#: Automatic caching (OpenAI): reads fall a few 128-token steps short of the previous prompt as a matter of course (the
#: last message's framing changes); a shortfall within this many tokens is a hit.
OPENAI_PARTIAL_TOLERANCE = OPENAI_MIN_TOKENS
_PER = 1_000_000


@dataclass(frozen=True, slots=True)  # slots: one per request, a 1 GB session holds ~90,000
class LedgerEntry:
    """One recorded request: hit / partial / miss, why, and what the miss cost above a hit."""

    request: int  # the request's number in the session (all chains, in time order)
    chain: str
    status: str  # "hit", "partial" or "miss"
    cause: str  # one of CAUSES; "" for a hit
    detail: str  # one sentence
    changed_position: int | None  # index in the chain's messages of the message that broke the prefix
    gap_seconds: float | None  # since the chain's previous request (None: unknown or out of order)
    rebilled_dollars: float  # paid above the same request served as a hit
    position: int = 0  # index in the chain's messages of the assistant message this request produced
    model: str | None = None  # the model it was priced at: its recorded one, else the session's default
    priced: bool = True  # False: the model has no price row, so its dollars are 0 and unknown
    dollars: float = 0.0  # what the request paid: the bill's list price of its recorded usage
    changed_message_id: str | None = None  # the id of the message at ``changed_position`` (to highlight it)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rebilled_dollars"] = round(self.rebilled_dollars, 8)
        d["dollars"] = round(self.dollars, 8)
        return d


@dataclass(frozen=True, slots=True)  # slots: one per request, a 1 GB session holds ~90,000
class _Usage:
    input: int
    output: int
    read: int
    write: int
    write_1h: int

    @property
    def context(self) -> int:
        return self.input + self.read + self.write


@dataclass(frozen=True, slots=True)  # slots: one per request, a 1 GB session holds ~90,000
class _Rec:
    """A recorded request, with what the ledger needs about it."""

    index: int
    chain: str
    chain_order: int
    position: int
    time: float | None
    usage: _Usage
    model: str | None  # the recorded model (None: not recorded)
    price: ModelPrice | None
    billed: BilledRequest
    sent: "_Sent"


@dataclass(frozen=True, slots=True)  # slots: one per request, a 1 GB session holds ~90,000
class _Sent:
    """What ``as_recorded`` sent at a recorded request, against the chain's previous recorded one."""

    length: int  # messages sent
    previous_length: int  # messages the previous recorded request sent
    kept: int  # how many of those are still the prefix here
    changed: int | None  # the first message that differs (index in the chain's messages); None: prefix kept
    reach: int  # the first context position Anthropic's lookback reaches from this request's breakpoint


class _Context:
    """A context as a sequence of messages (what ``lookback_start`` walks back over) without copying."""

    def __init__(self, order: Sequence[int], msgs: Sequence[Message]):
        self.order, self.msgs = order, msgs

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i: int) -> Message:
        return self.msgs[self.order[i]]


def _chain_sent(sub: Session, positions: Iterable[int]) -> dict[int, _Sent]:
    """What ``as_recorded`` sends at each recorded request: everything before it, following the
    compactions (the summary, then the messages it kept), compared with the previous recorded request.
    Costs what changed: a context only changes before its end where a summary appears."""
    msgs, prev = sub.messages, 0
    out: dict[int, _Sent] = {}
    ctx: list[int] = []
    for pos in sorted(positions):
        before = len(ctx)
        kept, changed = before, None
        if any(is_summary_message(m) for m in msgs[prev:pos]):
            new = list(context_window(sub.with_messages(msgs[:pos])).context())
            kept = min(before, next((i for i, (x, y) in enumerate(zip(ctx, new)) if x != y), min(len(ctx), len(new))))
            if kept < before:
                changed = new[kept] if kept < len(new) else ctx[kept]
            ctx = new
        else:
            ctx.extend(range(prev, pos))
        prev = pos
        out[pos] = _Sent(len(ctx), before, kept, changed,
                         lookback_start(_Context(ctx, msgs), ANTHROPIC_LOOKBACK_BLOCKS))
    return out


def _kind(m: Message) -> Any:
    return m.metadata.get("kind") if isinstance(m.metadata, Mapping) else None


def _recorded_compactions(sub: Session) -> list[Mapping[str, Any]]:
    """The agent's own compactions (``Session.metadata["recorded_compactions"]``) with a position."""
    entries = sub.metadata.get("recorded_compactions") if isinstance(sub.metadata, Mapping) else None
    return [e for e in entries if isinstance(e, Mapping) and isinstance(e.get("position_index"), int)
            and not isinstance(e.get("position_index"), bool)] if isinstance(entries, list) else []


def _price_row(r: BilledRequest, m: Message, prices: PriceTable) -> ModelPrice | None:
    """The row the bill priced ``r`` with (``PriceTable.find``: never another model's)."""
    provider = m.metadata.get("provider") if isinstance(m.metadata, Mapping) else None
    return prices.find(r.model, provider if provider in PROVIDERS else None) if r.model and r.priced else None


def _rebilled(price: ModelPrice | None, u: _Usage, shortfall: int) -> float:
    """What ``shortfall`` tokens, the part of the prompt right after what was read, cost above the
    cached price: they were written (1-hour writes first: Anthropic places 1-hour breakpoints before
    5-minute ones), and what the writes do not cover was plain input."""
    if price is None or shortfall <= 0:
        return 0.0
    from_1h = min(shortfall, u.write_1h)
    from_5m = min(shortfall - from_1h, u.write - u.write_1h)
    from_input = min(shortfall - from_1h - from_5m, u.input)
    cached = price.cached_input
    return (from_1h * (price.write_price("1h") - cached) + from_5m * (price.write_price("5m") - cached)
            + from_input * (price.input - cached)) / _PER


@dataclass(frozen=True)
class _Rules:
    """How a request's provider caches, read from the replay's own cache model for that provider."""

    provider: str
    breakpoints: bool  # Anthropic: explicit breakpoints, a lookback, a TTL per write; else automatic caching
    minimum: int  # provider tokens
    retention: float  # automatic caching: seconds a prefix stays
    increment: int  # automatic caching: the step reads come in


def _rules(price: ModelPrice | None, fallback_provider: str, models: Mapping[str, CacheModel]) -> _Rules:
    provider = price.provider if price is not None else fallback_provider
    row = price if price is not None else ModelPrice(provider=provider, model="", input=0, cached_input=0, output=0)
    model = models.get(provider)
    if model is None or isinstance(model, AnthropicCache):
        return _Rules(provider, True, AnthropicCache.minimum(row), ANTHROPIC_TTLS["5m"], 1)
    held = getattr(model, "retention", None)  # OpenAI's and Google's: how long a prefix is held, per model
    retention = held(row) if callable(held) else OPENAI_RETENTION_S
    return _Rules(provider, False, model.minimum(row), retention, getattr(model, "increment", OPENAI_INCREMENT))


def _cached_after(prev: _Rec, rules: _Rules) -> int:
    """What the previous request left in the cache for this one to read (provider tokens)."""
    if not rules.breakpoints:  # automatic: the previous prompt, in the provider's steps
        held = prev.usage.context // rules.increment * rules.increment
        return held if held >= rules.minimum else 0
    return prev.usage.read + prev.usage.write


def _ttl(chain_recs: Sequence[_Rec], rules: _Rules) -> tuple[float, str]:
    """The lifetime of the entry the chain's latest requests used: 1 h when its latest write was a
    1-hour write, else 5 minutes (Anthropic); the provider's retention for automatic caching."""
    if not rules.breakpoints:
        # "over the 5-minute retention (openai)": the sentence reads "over the <name>", so no possessive
        return rules.retention, f"{rules.retention / 60:g}-minute retention ({rules.provider})"
    for rec in reversed(chain_recs):
        if rec.usage.write:
            if rec.usage.write_1h:
                return ANTHROPIC_TTLS["1h"], "1-hour TTL (its writes were 1-hour writes)"
            break
    return ANTHROPIC_TTLS["5m"], "5-minute TTL"


def _duration(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h} h {m} min" if h else f"{m} min {s} s" if m else f"{s} s"


def _cause(rec: _Rec, prev: _Rec | None, chain_recs: Sequence[_Rec], sub: Session, rules: _Rules,
           gap: float | None) -> tuple[str, str, int | None]:
    """The first cause (in ``CAUSES`` order) the transcript shows: ``(cause, detail, changed position)``."""
    msgs = sub.messages
    if prev is None:
        meta = sub.metadata if isinstance(sub.metadata, Mapping) else {}
        own_file = meta.get("subagent_file")  # Claude Code: a subagent's own file is its main chain
        own = meta.get("chain") if meta.get("chain") not in (None, "", MAIN_CHAIN) else \
            (own_file.get("agent_id") or "of this file") if isinstance(own_file, Mapping) else None
        if rec.chain == MAIN_CHAIN and own is None:
            return FIRST_REQUEST, f"first request of the session: nothing was cached yet " \
                                  f"(wrote {rec.usage.write:,} tokens)", None
        call = meta.get("parent_call")
        started = f" started by tool call {call}" if isinstance(call, str) and call else ""
        return SUBAGENT_START, f"first request of subagent {own if rec.chain == MAIN_CHAIN else rec.chain}" \
                               f"{started}: a new prefix", None
    if rec.model and prev.model and rec.model != prev.model:
        return MODEL_CHANGED, f"model changed from {prev.model} (request {prev.index}) to {rec.model}", None
    compactions = [i for i in range(prev.position + 1, rec.position) if _kind(msgs[i]) == "compaction"]
    compactions += [e["position_index"] for e in _recorded_compactions(sub)
                    if prev.position < e["position_index"] < rec.position]
    if compactions:
        at = max(compactions)
        return COMPACTION, f"the compaction recorded at message {at} replaced the history request " \
                           f"{prev.index} had sent", at
    ttl, ttl_name = _ttl(chain_recs, rules)
    if gap is not None and gap > ttl:
        return TTL_EXPIRED, f"{gap:,.0f} s ({_duration(gap)}) since request {prev.index} of this chain, " \
                            f"over the {ttl_name}", None
    sent = rec.sent
    if sent.changed is not None:
        summary = " (a summary there replaced the history)" if is_summary_message(msgs[sent.changed]) else ""
        return PREFIX_CHANGED, f"message {sent.changed}{summary} differs from what request {prev.index} sent, " \
                               f"{sent.length - sent.kept} messages back from the end", sent.changed
    if rules.breakpoints and 0 < sent.previous_length < sent.reach:
        return LOOKBACK_EXCEEDED, f"request {prev.index}'s breakpoint is {sent.length - sent.previous_length} " \
                                  f"messages back; the {ANTHROPIC_LOOKBACK_BLOCKS}-block lookback reaches " \
                                  f"{sent.length - sent.reach}", None
    minimum = rules.minimum
    if rec.usage.context < minimum:
        return BELOW_MINIMUM, f"sent {rec.usage.context:,} tokens, below the minimum cacheable {minimum:,}", None
    if prev.usage.context < minimum:
        return BELOW_MINIMUM, f"request {prev.index} sent {prev.usage.context:,} tokens, below the minimum " \
                              f"cacheable {minimum:,}: it cached nothing", None
    unknown = "; timestamps out of order, the gap is unknown" if gap is None and rec.time is not None \
        and prev.time is not None else ""
    # A fact, not a cause: Claude Code users report the cache re-created after parallel tool calls.
    calls = max((len(m.tool_calls) for m in msgs[prev.position:rec.position] if m.role == "assistant"), default=0)
    parallel = f"; it follows a response with {calls} parallel tool calls" if calls > 1 else ""
    turn = "; it follows a new user message" if any(m.role == "user" for m in msgs[prev.position:rec.position]) \
        else ""
    return NO_VISIBLE_CAUSE, "nothing in the transcript explains it (system prompt, tools or the " \
                             f"provider's servers){unknown}{parallel}{turn}", None


def ledger(session: Session, prices: PriceTable | None = None, *, default: ModelPrice | None = None,
           numbering: Mapping[tuple[str, int], int] | None = None,
           settings: ReplaySettings | None = None) -> tuple[LedgerEntry, ...]:
    """The ledger of ``session``: one entry per request of its bill (``pruner.replay.bill``: every
    chain, each request id once, each at its own recorded model) that was not aborted, in request
    order. A request without a recorded model is priced at ``default`` (else the session's detected
    model). ``numbering`` maps ``(chain, position)`` to a request number (a replay's, used when it
    covers every request); by default requests are numbered as ``find_requests`` numbers them.
    ``settings`` give the cache models' options (OpenAI's retention policy)."""
    prices = prices or default_prices()
    models = cache_models(settings or ReplaySettings())
    if default is None:
        default = prices.get(detect(session, prices)[1])
    chains = dict(session.chains)
    billed = [r for r in bill(session, prices, model=default.model).requests if not r.aborted]
    numbers = {(r.chain, r.position): r.index for r in find_requests(session)}
    if numbering is not None and all((r.chain, r.position) in numbering for r in billed):
        numbers = dict(numbering)
    return entries_of(billed, chains, numbers, prices, default, models)


def entries_of(billed: Iterable[BilledRequest], chains: Mapping[str, Session],
               numbers: Mapping[tuple[str, int], int], prices: PriceTable, default: ModelPrice,
               models: Mapping[str, CacheModel]) -> tuple[LedgerEntry, ...]:
    """The ledger's entries for the billed requests ``billed`` (none aborted) of ``chains``, numbered by
    ``numbers``: each chain's requests in order, each entry its cause (``ledger`` and
    ``pruner.replay.fast_bill`` both build the ledger here)."""
    order = {chain: k for k, chain in enumerate(chains)}
    per_chain: dict[str, list[BilledRequest]] = {}
    for r in billed:
        per_chain.setdefault(r.chain, []).append(r)
    entries = []
    for chain, rows in per_chain.items():
        sub = chains[chain]
        sent = _chain_sent(sub, [r.position for r in rows])
        done: list[_Rec] = []
        for r in sorted(rows, key=lambda row: row.position):
            m = sub.messages[r.position]
            rec = _Rec(numbers[(chain, r.position)], chain, order[chain], r.position, r.time,
                       _Usage(r.input, r.output, r.cache_read, r.cache_write, r.cache_write_1h),
                       r.model if r.model_recorded else None, _price_row(r, m, prices), r, sent[r.position])
            entries.append(_entry(rec, done[-1] if done else None, done, sub, default, models))
            done.append(rec)
    return tuple(sorted(entries, key=lambda e: e.request))


def _entry(rec: _Rec, prev: _Rec | None, done: Sequence[_Rec], sub: Session, default: ModelPrice,
           models: Mapping[str, CacheModel]) -> LedgerEntry:
    price, u = rec.price, rec.usage
    rules = _rules(price, default.provider, models)
    minimum = rules.minimum
    gap = None
    if prev is not None and rec.time is not None and prev.time is not None and rec.time >= prev.time:
        gap = rec.time - prev.time
    cacheable = u.context >= minimum or u.read or u.write
    held = _cached_after(prev, rules) if prev is not None and cacheable else 0
    tolerance = 0 if rules.breakpoints else OPENAI_PARTIAL_TOLERANCE
    if u.read == 0:
        status, shortfall = "miss", held
    elif u.read + tolerance < held:
        status, shortfall = "partial", held - u.read
    else:
        status, shortfall = "hit", 0
    cause, detail, changed = "", f"read {u.read:,} tokens from the cache", None
    if status != "hit":
        cause, detail, changed = _cause(rec, prev, done, sub, rules, gap)
        if status == "partial" and prev is not None:  # held > 0: there is a previous request
            detail += f"; read {u.read:,} of the {held:,} tokens request {prev.index} left cached"
    if price is None:
        detail += f"; model {rec.billed.model} has no price: its dollars are unknown"
    return LedgerEntry(request=rec.index, chain=rec.chain, status=status, cause=cause, detail=detail,
                       changed_position=changed, gap_seconds=gap, rebilled_dollars=_rebilled(price, u, shortfall),
                       position=rec.position, model=rec.billed.model, priced=price is not None,
                       dollars=rec.billed.dollars,
                       changed_message_id=sub.messages[changed].id if changed is not None else None)


def ledger_of(replay: ReplayedRequests, prices: PriceTable | None = None) -> tuple[LedgerEntry, ...]:
    """The ledger of a ``Replay``'s session, numbered as the replay numbers its requests, priced with
    ``prices``, else with the rows the replay priced its requests at (so a user's prices file carries
    over), its settings' model for requests that record none."""
    if prices is None:
        rows = {r.price.model: r.price for r in replay.requests if r.price is not None and r.priced}
        rows.setdefault(replay.price.model, replay.price)
        prices = PriceTable(models=tuple(rows.values()), retrieved=replay.price.retrieved or "unknown",
                            origin=replay.prices_label)
    numbering = {(r.chain, r.position): r.index for r in replay.requests}
    return ledger(replay.session, prices, default=replay.price, numbering=numbering, settings=replay.settings)
