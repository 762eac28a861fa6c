"""Provider prompt-cache models: what part of a request is read from the cache, written, or fresh.

Each model is a small object whose numbers come from the provider's own
documentation, cited next to them (retrieved 2026-11-30, stored copies; see
the README's "Replay and cost" section). Both work on what a strategy sends
(``pruner.replay.wire.Wire``): its token count, and the first position that
changed since the strategy's previous request (the longest common prefix is
maintained by the wire, never recomputed here).

**Anthropic** (https://platform.claude.com/docs/en/build-with-claude/prompt-caching):

* Breakpoints as coding agents place them: on the last message, and after the
  leading system messages when there are any. "Cache writes happen only at your
  breakpoint": each request writes one entry for its whole prefix.
* A read is the longest earlier entry that is still a prefix of this request,
  found "walking backward one block at a time": "The lookback window is 20
  blocks. The system checks at most 20 positions per breakpoint, counting the
  breakpoint itself as the first." A change further back than that from the
  end leaves only the system entry.
* "Shorter prompts cannot be cached": below the model's minimum cacheable
  length (``min_cacheable_tokens`` in the price table) nothing is read or
  written, everything is plain input.
* "By default, the cache has a 5-minute lifetime. The cache is refreshed for no
  additional cost each time the cached content is used"; "The lifetime is
  measured from the start of the request that writes or reads the cache
  entry". A 1-hour TTL is optional (``ttl="1h"``), written at 2x input.
* Billing: read at the cache-read price (0.1x input), written at the write
  price (1.25x input for 5 minutes), the tokens after the last breakpoint at the
  input price (none here: the breakpoint is on the last message).

**OpenAI** (https://developers.openai.com/api/docs/guides/prompt-caching):

* Automatic: "Caching is enabled automatically for prompts that are 1024
  tokens or longer"; the cached part is the common prefix with the previous
  request, in "increments of 128 tokens" (rounded down).
* "When using the in-memory policy, cached prefixes generally remain active for
  5 to 10 minutes of inactivity, up to a maximum of one hour": the model uses
  5 minutes, refreshed on each hit (the one-hour cap is not modelled).
* No write premium ("Will I be expected to pay extra for writing to Prompt
  Caching? No."): a miss bills at the input price. Cached input is billed at
  the model's cached-input price, a discount that depends on the model family.

**Google** (https://ai.google.dev/gemini-api/docs/caching, retrieved 2026-12-01):

* Implicit caching, "enabled by default for all Gemini 2.5 and newer models": a
  request sharing a prefix with a recent one reads it, from the model's
  "minimum input token count" (``GOOGLE_MIN_TOKENS``); no rounding step is
  documented. No write fee; no documented lifetime (5 minutes assumed).

Where a session carries timestamps, a gap longer than the TTL is a miss. When a
recorded request read nothing from the cache (``cold``), every strategy's
request is cold there too: the replay inherits the recorded cold events.

>>> from pruner.replay.prices import default_prices
>>> m = AnthropicCache(default_prices().get("claude-sonnet-4-5"))
>>> class View:
...     tokens, changed_at, length, head, head_tokens = 5000, 0, 3, 0, 0
...     def lookback_start(self, n): return 0
...     def tokens_before(self, p): return 0
>>> state = m.new_state()
>>> first = m.quote(state, View(), time=None); m.commit(state, View(), time=None, usage=first)
>>> first.written, first.cached, first.miss
(5000, 0, 'first')
>>> View.tokens, View.changed_at, View.length = 6000, 3, 4
>>> second = m.quote(state, View(), time=None)
>>> second.cached, second.written, second.miss
(5000, 1000, '')
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Protocol

from .prices import ModelPrice

#: How many block positions Anthropic checks back from a breakpoint (prompt-caching page).
ANTHROPIC_LOOKBACK_BLOCKS = 20
#: TTLs in seconds: Anthropic "5-minute lifetime" by default, "1h" optional.
ANTHROPIC_TTLS = {"5m": 300.0, "1h": 3600.0}
#: OpenAI: "1024 tokens or longer", "increments of 128 tokens", in-memory retention "5 to 10 minutes".
OPENAI_MIN_TOKENS = 1024
OPENAI_INCREMENT = 128
OPENAI_RETENTION_S = 300.0
#: Google, Gemini API implicit caching (https://ai.google.dev/gemini-api/docs/caching, retrieved 2026-12-01,
#: stored copies): "Implicit caching is enabled by default for all Gemini 2.5 and newer models"; "The
#: minimum input token count for context caching" per model. The page's version last updated 2026-07-07
#: lists Gemini 3.5 Flash 4096, Gemini 3.1 Pro Preview 4096, Gemini 2.5 Flash 2048, Gemini 2.5 Pro 2048;
#: its version last updated 2026-05-07 lists Gemini 3 Flash Preview 1024 and Gemini 3 Pro Preview 4096
#: (the Gemini 3 rows, absent from the later version). Longest matching prefix wins.
GOOGLE_MIN_TOKENS = (("gemini-3.5-flash", 4096), ("gemini-3.1-pro", 4096), ("gemini-3-flash", 1024),
                     ("gemini-3-pro", 4096), ("gemini-2.5-flash", 2048), ("gemini-2.5-pro", 2048))
#: A Gemini model the table does not name: the largest listed minimum (never a cache hit that the
#: documented minimums would not allow).
GOOGLE_DEFAULT_MIN_TOKENS = 4096
#: "Try to send requests with similar prefix in a short amount of time": Google documents no lifetime
#: for implicit caches (Vertex AI: "prefixes are evicted as capacity is reclaimed"). Assumed: 5 minutes,
#: as OpenAI's in-memory retention; a longer gap is a miss.
GOOGLE_RETENTION_S = 300.0
#: No write fee: "there is no additional charge to write to cache other than the standard input token
#: costs" (https://cloud.google.com/vertex-ai/generative-ai/docs/context-cache/context-cache-overview,
#: retrieved 2026-12-01); a hit bills at the price row's cached-input price.


class ContextView(Protocol):
    """What a cache model reads from a strategy's context (tokens in the pruner's units)."""

    tokens: int
    changed_at: int  # first position changed since the previous request
    length: int  # messages
    head: int  # leading system messages (a breakpoint follows them)
    head_tokens: int

    def lookback_start(self, positions: int) -> int: ...

    def tokens_before(self, position: int) -> int: ...


@dataclass(frozen=True)
class CacheUsage:
    """One request's input split the way the provider bills it (provider tokens)."""

    cached: int  # read from the cache
    written: int  # written to the cache
    fresh: int  # neither: billed at the input price
    miss: str = ""  # why the cache was not (fully) used: "", first, prefix, ttl, lookback, recorded, below_minimum
    hit_position: int = 0  # messages covered by the read

    @property
    def input(self) -> int:
        return self.cached + self.written + self.fresh


@dataclass
class _Entry:
    position: int  # prefix length in messages
    tokens: int  # provider tokens of that prefix
    expires: float | None


@dataclass
class CacheState:
    """One strategy's cache: entries along its current prefix, in position order."""

    entries: list[_Entry] = field(default_factory=list)
    system: _Entry | None = None
    requests: int = 0


class CacheModel:
    """Base: ``quote`` prices a request without changing anything; ``commit`` records it."""

    provider = ""
    scale = 1.0  # provider tokens per token of ours (see pruner.replay.calibration)

    def __init__(self, price: ModelPrice, *, scale: float = 1.0, ttl: str = "5m"):
        self.price = price
        self.scale = scale
        self.ttl_name = ttl

    def units(self, tokens: int) -> int:
        """Our token count in the provider's units (rounded)."""
        return tokens if self.scale == 1.0 else int(round(tokens * self.scale))

    def new_state(self) -> CacheState:
        return CacheState()

    def quote(self, state: CacheState, view: ContextView, *, time: float | None, cold: bool = False) -> CacheUsage:
        raise NotImplementedError

    def commit(self, state: CacheState, view: ContextView, *, time: float | None, usage: CacheUsage) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _position(e: _Entry) -> int:
    return e.position


def _alive(e: _Entry, time: float | None) -> bool:
    return e.expires is None or time is None or time < e.expires


class AnthropicCache(CacheModel):
    provider = "anthropic"

    def __init__(self, price: ModelPrice, *, scale: float = 1.0, ttl: str = "5m"):
        if ttl not in ANTHROPIC_TTLS:
            raise ValueError(f"ttl must be one of {', '.join(ANTHROPIC_TTLS)}")
        super().__init__(price, scale=scale, ttl=ttl)
        self.ttl = ANTHROPIC_TTLS[ttl]
        self.minimum = price.min_cacheable_tokens

    def describe(self) -> str:
        return (f"Anthropic prompt caching: breakpoint on the last message (and after leading system messages), "
                f"{ANTHROPIC_LOOKBACK_BLOCKS}-block lookback, {self.ttl_name} TTL refreshed on each hit, "
                f"minimum {self.minimum:,} tokens, write {self.price.write_price(self.ttl_name)}/read "
                f"{self.price.cached_input} USD per MTok")

    def _expires(self, time: float | None) -> float | None:
        return None if time is None else time + self.ttl

    def quote(self, state: CacheState, view: ContextView, *, time: float | None, cold: bool = False) -> CacheUsage:
        total = self.units(view.tokens)
        if total < self.minimum:
            return CacheUsage(0, 0, total, "below_minimum" if state.requests else "first")
        if cold:
            return CacheUsage(0, total, 0, "recorded")
        if not state.requests:
            return CacheUsage(0, total, 0, "first")
        p = view.changed_at
        start = view.lookback_start(ANTHROPIC_LOOKBACK_BLOCKS)
        hit: _Entry | None = None
        expired = out_of_reach = False
        entries = state.entries
        j = bisect_right(entries, p, key=_position)  # entries[j:] are no longer prefixes of this request
        invalidated = j < len(entries)
        expired = j > 0 and not _alive(entries[j - 1], time)  # the newest entry still a prefix has lapsed
        while j > 0:
            j -= 1
            e = entries[j]
            if e.position < start:
                out_of_reach = True
                break
            if _alive(e, time):
                hit = e
                break
            expired = True
        sysentry = state.system
        if hit is None and sysentry is not None and sysentry.position <= p:
            if _alive(sysentry, time):
                hit = sysentry
            else:
                expired = True
        cached = hit.tokens if hit is not None else 0
        miss = ""
        if hit is None or hit is sysentry or invalidated:
            miss = ("ttl" if expired else "prefix" if invalidated else "lookback" if out_of_reach
                    else "first" if hit is None or hit is sysentry else "")
        return CacheUsage(cached, total - cached, 0, miss, hit.position if hit is not None else 0)

    def commit(self, state: CacheState, view: ContextView, *, time: float | None, usage: CacheUsage) -> None:
        state.requests += 1
        entries = state.entries
        if usage.miss == "recorded":
            entries.clear()
            state.system = None
        p = view.changed_at
        while entries and entries[-1].position > p:
            entries.pop()
        expires = self._expires(time)
        total = self.units(view.tokens)
        if usage.cached:
            for e in reversed(entries):  # the entry read is refreshed
                if e.position == usage.hit_position:
                    e.expires = expires
                    break
        if total >= self.minimum:
            if entries and entries[-1].position == view.length:
                entries[-1] = _Entry(view.length, total, expires)
            else:
                entries.append(_Entry(view.length, total, expires))
        head_tokens = self.units(view.head_tokens)
        if view.head and head_tokens >= self.minimum:
            state.system = _Entry(view.head, head_tokens, expires)
        else:
            state.system = None


class OpenAICache(CacheModel):
    provider = "openai"
    increment = OPENAI_INCREMENT  # the cached prefix is counted in steps of this many tokens

    def __init__(self, price: ModelPrice, *, scale: float = 1.0, ttl: str = "5m"):
        super().__init__(price, scale=scale, ttl=ttl)
        self.retention = OPENAI_RETENTION_S
        self.minimum = max(OPENAI_MIN_TOKENS, price.min_cacheable_tokens)

    def describe(self) -> str:
        fee = "no write fee" if self.price.cache_write_5m is None else f"write {self.price.cache_write_5m}"
        return (f"OpenAI automatic prompt caching: common prefix with the previous request, from "
                f"{self.minimum:,} tokens in {OPENAI_INCREMENT}-token steps, {int(self.retention // 60)}-minute "
                f"retention refreshed on each hit, cached input {self.price.cached_input} USD per MTok, {fee}")

    def quote(self, state: CacheState, view: ContextView, *, time: float | None, cold: bool = False) -> CacheUsage:
        total = self.units(view.tokens)
        has_write_fee = self.price.cache_write_5m is not None

        def uncached(miss: str) -> CacheUsage:
            return CacheUsage(0, total, 0, miss) if has_write_fee else CacheUsage(0, 0, total, miss)

        if total < self.minimum:
            return CacheUsage(0, 0, total, "below_minimum" if state.requests else "first")
        if cold:
            return uncached("recorded")
        prev = state.entries[-1] if state.entries else None
        if prev is None:
            return uncached("first")
        if not _alive(prev, time):
            return uncached("ttl")
        p = min(view.changed_at, prev.position)
        common = prev.tokens if p == prev.position and view.changed_at >= prev.position \
            else self.units(view.tokens_before(p))
        cached = (min(common, total) // self.increment) * self.increment
        if cached < self.minimum:
            return uncached("prefix")
        rest = total - cached
        miss = "prefix" if p < prev.position else ""
        return CacheUsage(cached, rest, 0, miss, p) if has_write_fee else CacheUsage(cached, 0, rest, miss, p)

    def commit(self, state: CacheState, view: ContextView, *, time: float | None, usage: CacheUsage) -> None:
        state.requests += 1
        state.entries[:] = [_Entry(view.length, self.units(view.tokens),
                                   None if time is None else time + self.retention)]


def google_minimum(model: str) -> int:
    """Gemini's minimum input for implicit caching, by model family (``GOOGLE_MIN_TOKENS``)."""
    name = model.lower()
    found = [(len(prefix), tokens) for prefix, tokens in GOOGLE_MIN_TOKENS if name.startswith(prefix)]
    return max(found)[1] if found else GOOGLE_DEFAULT_MIN_TOKENS


class GoogleCache(OpenAICache):
    """Gemini implicit caching: the common prefix with the previous request, no write fee.

    The same shape as OpenAI's automatic caching (a prefix of a recent request is
    read, nothing is written at a premium), with Gemini's own minimum per model
    and no rounding step (Google documents none). The price row's
    ``min_cacheable_tokens`` wins when it names one.
    """

    provider = "google"
    increment = 1

    def __init__(self, price: ModelPrice, *, scale: float = 1.0, ttl: str = "5m"):
        CacheModel.__init__(self, price, scale=scale, ttl=ttl)
        self.retention = GOOGLE_RETENTION_S
        self.minimum = price.min_cacheable_tokens or google_minimum(price.model)

    def describe(self) -> str:
        return (f"Gemini implicit caching: common prefix with the previous request, from {self.minimum:,} "
                f"tokens, {int(self.retention // 60)}-minute retention assumed (Google documents none), cached "
                f"input {self.price.cached_input} USD per MTok, no write fee")


CACHE_MODELS: dict[str, type[CacheModel]] = {"anthropic": AnthropicCache, "openai": OpenAICache,
                                             "google": GoogleCache}
