"""What the recording says at each request, before any strategy runs: price, window, scale, inherited misses.

For every request of every chain, in order, using nothing after it:

* **price**: the request's recorded model's row (``PriceTable.find``); a request
  that records no model takes the settings' model; a recorded model the table
  does not hold is *unpriced* (a zero-price row: its tokens are counted, its
  dollars are 0, it never takes another model's prices);
* **window**: ``--context-window`` when given (the user's "what if the window
  were N": kept as given, so ``full`` over it is infeasible even where the
  recording went further); else that model's context window, or the largest
  context the recording shows that model accepted so far when that is larger
  (a 1M-token beta window, a table that is out of date). What really happened
  is never infeasible: ``as_recorded``'s recorded requests are never rejected;
* **scale**: our tokens -> the provider's at that request, fitted on the
  chain's recording up to it (``pruner.replay.scale``);
* **inherit**: whether a recorded miss is one that every strategy inherits:
  only when the recording read less than the cache model, billing what was
  really sent, would have read there (nothing: a cold request; some: a partial
  miss, ``inherit_read`` tokens still read), and the recording did not
  cause the miss itself (a recorded compaction at that request, a change of
  model, a gap past the TTL are causes a strategy's own history shows, or that
  a strategy which did not compact does not share).

* **warm**: the reverse, a recorded read the cache model says could not be
  (its entry lapsed past the modelled TTL, or the chain's first request read a
  prefix an earlier session cached): every strategy finds that much warm there
  (``warm_read``) where its own cache model reports the same kind of miss.

Each chain also gets its two views: the recording (what ``as_recorded``
follows, recorded compaction summaries included) and the conversation (what
every other strategy replays: the same messages without the recorded summary
messages, so no counterfactual ever sends the recording's summaries or cut).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from ..compaction.cut import is_summary_message
from ..errors import ConfigurationError
from ..model import Message, Session
from .cache import CACHE_MODELS, CacheModel, CacheState
from .prices import ModelPrice, PriceTable
from .requests import Request, find_requests
from .scale import ChainFit, TokenScale
from .settings import ReplaySettings
from .strategy import ReplayEnv
from .wire import TokenBook

_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")

#: A recorded read this many provider tokens short of the cache model's is a recorded (partial) miss;
#: closer, it is the two counts' rounding (Anthropic caches in blocks; our scale is a model).
PARTIAL_MISS_TOKENS = 1_024

#: Misses the cache model sees in what was really sent: a strategy's own history shows them too.
SEEN_BY_THE_MODEL = ("first", "ttl", "prefix", "lookback", "below_minimum", "model")


@dataclass(frozen=True)
class ChainView:
    """One chain's two views of its messages (see the module docstring)."""

    chain: str
    recording: Session
    conversation: Session  # without the recorded compaction summaries
    to_conversation: tuple[int, ...]  # recording position -> conversation position (-1: a recorded summary)

    @classmethod
    def of(cls, chain: str, session: Session) -> "ChainView":
        kept: list[Message] = []
        mapping: list[int] = []
        for m in session.messages:
            if m.role == "summary" and is_summary_message(m):
                mapping.append(-1)
            else:
                mapping.append(len(kept))
                kept.append(m)
        conversation = session if len(kept) == len(session.messages) else session.with_messages(kept)
        return cls(chain, session, conversation, tuple(mapping))


def find_price(prices: PriceTable, model: str) -> ModelPrice | None:
    """The row for a recorded model id, or None (never another model's row)."""
    finder = getattr(prices, "find", None)
    if finder is not None:
        found: ModelPrice | None = finder(model)
        return found
    # Until PriceTable.find lands (branch money-import): the row whose id or alias is the name, or the
    # name with a release date after it (gpt-4o-2024-08-06); never a longer prefix match, which would
    # price gpt-5.1-codex as gpt-5.1.
    bare = _DATED.sub("", model)
    for name in (model, bare):
        row = next((m for m in prices.models if name == m.model or name in m.aliases), None)
        if row is not None:
            return row
    return None


def unpriced_row(model: str, like: ModelPrice, window: int) -> ModelPrice:
    """A zero-price row for a model the table does not hold: the cache rules of ``like``'s provider,
    dollars 0."""
    return ModelPrice(provider=like.provider, model=model, input=0.0, cached_input=0.0, output=0.0,
                      cache_write_5m=None, cache_write_1h=None, context_window=window,
                      min_cacheable_tokens=like.min_cacheable_tokens, source="unpriced: not in the price table")


def default_price(settings: ReplaySettings, prices: PriceTable) -> ModelPrice:
    """The row for requests that record no model (``ConfigurationError`` for an unknown one)."""
    return prices.get(settings.model_name, settings.provider)


def window_of(settings: ReplaySettings, price: ModelPrice, fallback: ModelPrice) -> int:
    window = settings.context_window or price.context_window or fallback.context_window
    if window is None:
        raise ConfigurationError(f"the price table gives no context window for {price.model}; set "
                                 "context_window", setting="context_window")
    return window


def cache_models(settings: ReplaySettings) -> dict[str, CacheModel]:
    out: dict[str, CacheModel] = {}
    for provider, cls in CACHE_MODELS.items():
        out[provider] = cls.from_settings(settings)
    return out


def prepare(session: Session, settings: ReplaySettings, prices: PriceTable,
            book: TokenBook) -> tuple[tuple[Request, ...], dict[str, ChainView]]:
    """Every request priced, windowed, scaled and marked for inheritance (see the module docstring)."""
    from .strategies.as_recorded import AsRecorded

    fallback = default_price(settings, prices)
    fallback_window = window_of(settings, fallback, fallback)
    views = {chain: ChainView.of(chain, s) for chain, s in session.chains}
    models = cache_models(settings)
    found: dict[str, ModelPrice | None] = {}
    recorders: dict[str, AsRecorded] = {}
    fits: dict[str, ChainFit] = {}
    states: dict[str, CacheState] = {}
    last_model: dict[str, str] = {}
    previous: dict[str, int] = {}
    accepted: dict[str, int] = {}  # model -> the largest context the recording shows it accepted so far
    out = []
    for req in find_requests(session):
        view = views[req.chain]
        if req.chain not in recorders:
            env = ReplayEnv(view.recording, settings, book, chain=req.chain, cache_models=models)
            recorders[req.chain], fits[req.chain], previous[req.chain] = AsRecorded(env), ChainFit(), 0
        recorder = recorders[req.chain]
        # The price: the recorded model's row, else the settings' model; never another model's row.
        priced = True
        if req.model is None:
            price = fallback
        else:
            if req.model not in found:
                found[req.model] = find_price(prices, req.model)
            row = found[req.model]
            if row is None:
                priced, price = False, unpriced_row(req.model, fallback, settings.context_window or fallback_window)
            else:
                price = row
        window = window_of(settings, price, fallback)
        rec = req.recorded
        if rec is not None and not rec.aborted and rec.context > accepted.get(price.model, 0):
            accepted[price.model] = rec.context  # the provider accepted this much: its window is at least that
        if settings.context_window is None:  # a window the user gives is their question: kept as given
            window = max(window, accepted.get(price.model, 0))
        # What was really sent here, in our tokens, and the scale fitted on the recording up to here.
        msgs = view.recording.messages
        step = recorder.step(req, msgs[previous[req.chain]:req.position])
        previous[req.chain] = req.position
        if settings.scale is not None:
            scale = TokenScale(slope=float(settings.scale), source="given")
        elif rec is not None and not rec.aborted:
            scale = fits[req.chain].add(recorded=rec.context, ours=recorder.wire.tokens)
        else:
            scale = fits[req.chain].current or TokenScale()
        # Would the cache model, billing what was really sent, have read something here?
        model = models[price.provider]
        inherit = warm = False
        if rec is not None and not rec.aborted:  # an aborted request never reached a cache
            state = states.get(req.chain)
            changed_model = last_model.get(req.chain) not in (None, price.model)
            if state is None or changed_model:
                state = states[req.chain] = model.new_state()
            last_model[req.chain] = price.model
            usage = model.quote(state, recorder.wire, price=price, scale=scale, time=req.time)
            model.commit(state, recorder.wire, price=price, scale=scale, time=req.time, usage=usage)
            compacted = any(e.kind == "compact" for e in step.events)
            # The recording read less than the cache model would have (nothing: cold; some: a partial miss,
            # e.g. only the system prompt and tools), and neither a recorded compaction nor a change of
            # model explains it.
            short = usage.cached - rec.cache_read
            inherit = short > PARTIAL_MISS_TOKENS and not compacted and not changed_model
            # The reverse: the recording read where the cache model says the entry lapsed or never was (a
            # longer TTL than modelled, a prefix cached by an earlier session): every strategy finds it warm.
            warm = -short > PARTIAL_MISS_TOKENS and usage.miss in ("ttl", "first")
        recorder.wire.mark()
        out.append(replace(req, price=price, priced=priced, window=window, scale=scale, inherit=inherit,
                           inherit_read=rec.cache_read if inherit and rec is not None else 0,
                           warm_read=rec.cache_read if warm and rec is not None else 0))
    return tuple(out), views


def conversation_request(req: Request, view: ChainView) -> Request:
    """``req`` as a counterfactual strategy sees it: its position in the conversation view."""
    position = view.to_conversation[req.position] if view.to_conversation else req.position
    return req if position == req.position else replace(req, position=position)


def chain_requests(requests: Sequence[Request], chain: str) -> list[Request]:
    return [r for r in requests if r.chain == chain]
