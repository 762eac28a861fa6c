"""Requests: the points where the model was called, with what the recording says about each.

A request is made before each assistant message of every chain (the main
conversation and each subagent's, ``Session.chains``): its context is everything
before that message in its chain. An assistant message no model produced
(``metadata["synthetic"]``) is not a request. Requests are numbered from 0
across the whole session in start-time order (chains interleaved; each chain
keeps its own order; ties go to chain order, then position); each keeps its
``chain``, its ``position`` in its chain's messages, and the recorded ``model``
and ``request_id`` when the importer found them. The turn (a user message
starts one) is kept beside the number, because an agent makes many requests
per turn. When the transcript records usage per assistant message
(``metadata["usage"]``: input / output / cache_read / cache_write, in the
provider's tokens, the three inputs disjoint), the request carries it; when it
records timestamps, the request carries its start time: the time of the message
that completed its context (the user's message or the tool's result), else the
assistant message's own time.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...                 Message(id="a", role="assistant", content="hello",
...                         metadata={"usage": {"input": 5, "output": 2, "cache_read": 0, "cache_write": 0}})])
>>> r = find_requests(s)[0]
>>> r.index, r.chain, r.position, r.turn, r.recorded.input, r.recorded.cold
(0, 'main', 1, 1, 5, True)
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..formats.common import token_count
from ..formats.pi import MAX_REQUEST_COST
from ..model import MAIN_CHAIN, Message, Session, calendar_seconds

if TYPE_CHECKING:  # pragma: no cover
    from .prices import ModelPrice
    from .scale import TokenScale


@dataclass(frozen=True)
class RecordedUsage:
    """What the provider reported for one request (provider tokens; inputs disjoint)."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    cache_write_1h: int = 0  # the part of cache_write written with the 1-hour TTL (the rest: 5 minutes)
    cost: float | None = None  # the provider's or agent's own recorded cost of this request, USD

    @property
    def context(self) -> int:
        """Everything the request sent: uncached + read + written."""
        return self.input + self.cache_read + self.cache_write

    @property
    def aborted(self) -> bool:
        """All zero: the request was aborted before the provider reported usage (nothing billed)."""
        return self.context == 0 and self.output == 0

    @property
    def cold(self) -> bool:
        """The request read nothing from the cache although it sent something."""
        return self.context > 0 and self.cache_read == 0


@dataclass(frozen=True)
class Request:
    """One model call. The last four fields are the replay's (``None`` until it prices the request):
    what it was priced at and how provider tokens are modelled there, all from the recording up to it."""

    index: int  # from 0, across every chain
    position: int  # index in its chain's messages of the assistant message this request produced
    turn: int
    time: float | None  # start, in seconds since the epoch (None: no timestamp recorded)
    recorded: RecordedUsage | None  # None: the transcript records no usage for it
    chain: str = MAIN_CHAIN
    model: str | None = None  # recorded model id (None: the file does not say)
    request_id: str | None = None
    price: "ModelPrice | None" = None  # the row it is billed at (an unpriced model: a zero-price row)
    priced: bool = True  # False: its model has no price; its dollars are 0 and its tokens counted as unpriced
    window: int | None = None  # its model's context window, provider tokens
    scale: "TokenScale | None" = None  # our tokens -> provider tokens at this request (pruner.replay.scale)
    inherit: bool = False  # a recorded miss nothing in the transcript explains: every strategy inherits it
    inherit_read: int = 0  # what the recording still read there (provider tokens; 0: cold)
    warm_read: int = 0  # the recording read this much where the cache model says the cache lapsed (inherited)


def price_of(request: Request) -> ModelPrice:
    """``request.price``, which the replay sets (``pruner.replay.recording.prepare``) before any strategy,
    cache model or bill reads it; a request read before that is a bug, said so."""
    if request.price is None:
        raise AssertionError(f"request {request.index} was read before the replay priced it")
    return request.price


def scale_of(request: Request) -> TokenScale:
    """``request.scale``, set with its price (see ``price_of``)."""
    if request.scale is None:
        raise AssertionError(f"request {request.index} was read before the replay scaled it")
    return request.scale


def window_of_request(request: Request) -> int:
    """``request.window``, set with its price (see ``price_of``)."""
    if request.window is None:
        raise AssertionError(f"request {request.index} was read before the replay gave it a window")
    return request.window


def _number(value: Any) -> int | None:
    # The importers' own bound (a whole number of tokens up to 10**12): a session built by hand or a
    # native file's metadata is not checked at import, and 1e308 tokens made the dollars infinite.
    return token_count(value)


def recorded_usage(m: Message) -> RecordedUsage | None:
    """The message's recorded usage, or None when it has none (or a malformed one)."""
    usage = m.metadata.get("usage") if isinstance(m.metadata, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    numbers = [_number(usage.get(k, 0)) for k in ("input", "output", "cache_read", "cache_write")]
    values = [v for v in numbers if v is not None]
    if len(values) < len(numbers):
        return None
    input_, output, cache_read, cache_write = values
    one_hour = _number(usage.get("cache_write_1h", 0)) or 0
    recorded_cost = usage.get("cost")
    # The range before float(): a 400-digit integer cannot become a float (the importers' bound, USD).
    cost = float(recorded_cost) if isinstance(recorded_cost, (int, float)) and not isinstance(recorded_cost, bool) \
        and 0 <= recorded_cost <= MAX_REQUEST_COST and math.isfinite(recorded_cost) else None
    return RecordedUsage(input_, output, cache_read, cache_write, cache_write_1h=min(one_hour, cache_write),
                         cost=cost)


def timestamp(m: Message) -> float | None:
    """Seconds since the epoch from ``metadata["timestamp"]`` (ISO 8601, or epoch seconds or
    milliseconds), or None."""
    value = m.metadata.get("timestamp") if isinstance(m.metadata, Mapping) else None
    return calendar_seconds(value)



def _text(m: Message, key: str) -> str | None:
    value = m.metadata.get(key) if isinstance(m.metadata, Mapping) else None
    return value if isinstance(value, str) and value else None


def recorded_model(m: Message) -> str | None:
    """The model id the file records for this response: ``metadata["model"]`` (contract A), else the
    importer's ``metadata["source"]["model"]`` (Pi)."""
    model = _text(m, "model")
    if model is None and isinstance(m.metadata, Mapping) and isinstance(m.metadata.get("source"), Mapping):
        value = m.metadata["source"].get("model")
        model = value if isinstance(value, str) and value else None
    return model


def is_request(m: Message) -> bool:
    """An assistant message a model produced (synthetic ones, written by the agent, are not requests)."""
    return m.role == "assistant" and not (isinstance(m.metadata, Mapping) and m.metadata.get("synthetic") is True)


def chain_requests(chain: str, session: Session) -> list[Request]:
    """The requests of one conversation, in its own order (``index`` numbers them within the chain)."""
    out: list[Request] = []
    msgs = session.messages
    for i, m in enumerate(msgs):
        if not is_request(m):
            continue
        start = timestamp(msgs[i - 1]) if i > 0 else None
        if start is None:
            start = timestamp(m)
        out.append(Request(index=len(out), position=i, turn=m.turn, time=start, recorded=recorded_usage(m),
                           chain=chain, model=recorded_model(m), request_id=_text(m, "request_id")))
    return out


def find_requests(session: Session) -> tuple[Request, ...]:
    """Every chain's requests, numbered across the session in start-time order.

    Each chain keeps its own order (a merge, never a sort: timestamps out of order inside a chain do
    not reorder it); a request without a time takes its chain's previous time (or comes first)."""
    streams = []
    for order, (chain, conversation) in enumerate(session.chains):
        stream, last = [], float("-inf")
        for req in chain_requests(chain, conversation):
            last = req.time if req.time is not None else last
            stream.append(((last, order, req.position), req))
        streams.append(stream)
    merged = heapq.merge(*streams, key=lambda pair: pair[0]) if len(streams) > 1 else streams[0]
    return tuple(_renumbered(req, k) for k, (_, req) in enumerate(merged))


def _renumbered(req: Request, index: int) -> Request:
    if req.index == index:
        return req
    from dataclasses import replace
    return replace(req, index=index)


def has_recorded_usage(requests: tuple[Request, ...]) -> bool:
    """True when some request records a non-zero usage (so the bill can be reproduced)."""
    return any(r.recorded is not None and not r.recorded.aborted for r in requests)
