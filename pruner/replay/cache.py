"""Provider prompt-cache models: what part of a request is read from the cache, written, or fresh.

Each model is a small object whose numbers come from the provider's own
documentation, cited next to them (retrieved 2026-11-30, stored copies; see
docs/reference/prices.md). Both work on what a strategy sends
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
  end leaves only the system entry. Positions are counted as the page defines
  blocks for the lookback: a message's text is one, a run of consecutive
  tool_use blocks is one, and a run of consecutive tool_result blocks is one
  (``pruner.replay.wire.lookback_start``; issue 19's reading of the page,
  https://platform.claude.com/docs/en/build-with-claude/prompt-caching,
  retrieved 2026-12-01).
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
  tokens or longer"; "Cache hits are only possible for exact prefix matches":
  the cached part is the longest earlier prefix still held (every request's
  prefix is held until it lapses, not only the previous request's), in
  "increments of 128 tokens" (rounded down).
* "When using the in-memory policy, cached prefixes generally remain active for
  5 to 10 minutes of inactivity, up to a maximum of one hour": the model uses
  5 minutes, refreshed on each hit (the one-hour cap is not modelled). Extended
  retention (``prompt_cache_retention: "24h"``, "up to a maximum of 24 hours")
  for the models the page lists (``OPENAI_EXTENDED_RETENTION_MODELS``), when the
  replay is asked for it (``ReplaySettings.openai_retention``); retrieved
  2026-12-01.
* No write premium ("Will I be expected to pay extra for writing to Prompt
  Caching? No."): a miss bills at the input price. Cached input is billed at
  the model's cached-input price, a discount that depends on the model family.

**Google** (https://ai.google.dev/gemini-api/docs/caching, retrieved 2026-12-01):

* Implicit caching, "enabled by default for all Gemini 2.5 and newer models": a
  request sharing a prefix with a recent one reads it, from the model's
  "minimum input token count" (``GOOGLE_MIN_TOKENS``); no rounding step is
  documented. No write fee; no documented lifetime (5 minutes assumed).

Where a session carries timestamps, a gap longer than the TTL is a miss. When a
recorded request read less from the cache than the cache model says it would,
and nothing in the transcript explains it (``pruner.replay.recording``), every
strategy inherits that miss: ``cold=True`` with ``cold_read`` the tokens the
recording still read (0: nothing, a cold request; more: a partial miss, e.g. only
the system prompt and tools stayed cached).

>>> from pruner.replay.prices import default_prices
>>> m, price = AnthropicCache(), default_prices().get("claude-sonnet-4-5")
>>> class View:
...     tokens, changed_at, length, head, head_tokens = 5000, 0, 3, 0, 0
...     def lookback_start(self, n): return 0
...     def tokens_before(self, p): return 0
>>> state = m.new_state()
>>> first = m.quote(state, View(), price=price, time=None)
>>> m.commit(state, View(), price=price, time=None, usage=first)
>>> first.written, first.cached, first.miss
(5000, 0, 'first')
>>> View.tokens, View.changed_at, View.length = 6000, 3, 4
>>> second = m.quote(state, View(), price=price, time=None)
>>> second.cached, second.written, second.miss
(5000, 1000, '')
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..errors import ConfigurationError
from ..registry import Registry, origin_of
from .prices import ModelPrice
from .scale import UNSCALED, TokenScale


class CacheSettings(Protocol):
    """What a cache model reads of the replay's settings (``ReplaySettings``, which imports this
    module for the TTL and retention names it checks, so it is named here by shape)."""

    @property
    def ttl(self) -> str: ...

    @property
    def openai_retention(self) -> str: ...


#: How many block positions Anthropic checks back from a breakpoint (prompt-caching page).
ANTHROPIC_LOOKBACK_BLOCKS = 20
#: TTLs in seconds: Anthropic "5-minute lifetime" by default, "1h" optional.
ANTHROPIC_TTLS = {"5m": 300.0, "1h": 3600.0}
#: OpenAI: "1024 tokens or longer", "increments of 128 tokens", in-memory retention "5 to 10 minutes".
OPENAI_MIN_TOKENS = 1024
OPENAI_INCREMENT = 128
#: "in_memory": "5 to 10 minutes of inactivity, up to a maximum of one hour" (5 minutes modelled);
#: "24h": extended retention, "up to a maximum of 24 hours" (``prompt_cache_retention="24h"``).
OPENAI_RETENTIONS = {"in_memory": 300.0, "24h": 86_400.0}
OPENAI_RETENTION_S = OPENAI_RETENTIONS["in_memory"]
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
#: The models the prompt-caching page lists for extended retention (retrieved 2026-12-01).
OPENAI_EXTENDED_RETENTION_MODELS = ("gpt-5.2", "gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini",
                                    "gpt-5.1-chat-latest", "gpt-5", "gpt-5-codex", "gpt-4.1")


class ContextView(Protocol):
    """What a cache model reads from a strategy's context (tokens in the pruner's units).

    Read-only: a model only reads the context (``pruner.replay.wire.Wire`` computes these
    as properties), so any object with these attributes, settable or not, is a view."""

    @property
    def tokens(self) -> int: ...

    @property
    def changed_at(self) -> int:
        """The first position changed since the previous request."""
        ...

    @property
    def length(self) -> int:
        """Messages."""
        ...

    @property
    def head(self) -> int:
        """Leading system messages (a breakpoint follows them)."""
        ...

    @property
    def head_tokens(self) -> int: ...

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


class CacheModel(ABC):
    """The cache model contract: ``quote`` prices a request without changing anything; ``commit`` records it.

    A model holds the provider's rules only: the request's price row (its minimum cacheable
    length, whether writes cost extra) and the token scale at that request (our tokens ->
    the provider's, ``pruner.replay.scale``) come with every call, because each request is
    priced at its own recorded model and scaled from the recording up to it."""

    provider = ""

    def __init__(self, *, ttl: str = "5m"):
        self.ttl_name = ttl

    @classmethod
    def from_settings(cls, settings: CacheSettings) -> CacheModel:
        """The model as the replay's settings configure it (default: their cache TTL)."""
        return cls(ttl=settings.ttl)

    def new_state(self) -> CacheState:
        return CacheState()

    @abstractmethod
    def quote(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
              time: float | None, cold: bool = False, cold_read: int = 0) -> CacheUsage:
        """The request's input split as the provider bills it; ``state`` is left unchanged."""

    @abstractmethod
    def commit(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
               time: float | None, usage: CacheUsage) -> None:
        """Record the request (billed as ``usage``) in ``state``."""

    @abstractmethod
    def describe(self, price: ModelPrice) -> str:
        """One sentence: the rules this model applies at ``price``'s model."""

    @abstractmethod
    def minimum(self, price: ModelPrice) -> int:
        """The shortest request (provider tokens) that can be cached at ``price``'s model."""


def _position(e: _Entry) -> int:
    return e.position


def _alive(e: _Entry, time: float | None) -> bool:
    return e.expires is None or time is None or time < e.expires


class AnthropicCache(CacheModel):
    provider = "anthropic"

    def __init__(self, *, ttl: str = "5m"):
        if ttl not in ANTHROPIC_TTLS:
            raise ConfigurationError(f"ttl is {ttl!r}; expected one of {', '.join(ANTHROPIC_TTLS)}", setting="ttl")
        super().__init__(ttl=ttl)
        self.ttl = ANTHROPIC_TTLS[ttl]

    @staticmethod
    def minimum(price: ModelPrice) -> int:
        return price.min_cacheable_tokens

    def describe(self, price: ModelPrice) -> str:
        return (f"Anthropic prompt caching: breakpoint on the last message (and after leading system messages), "
                f"{ANTHROPIC_LOOKBACK_BLOCKS}-block lookback, {self.ttl_name} TTL refreshed on each hit, "
                f"minimum {price.min_cacheable_tokens:,} tokens, write {price.write_price(self.ttl_name)}/read "
                f"{price.cached_input} USD per MTok")

    def _expires(self, time: float | None) -> float | None:
        return None if time is None else time + self.ttl

    def quote(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
              time: float | None, cold: bool = False, cold_read: int = 0) -> CacheUsage:
        total = scale.provider(view.tokens)
        if total < price.min_cacheable_tokens:
            return CacheUsage(0, 0, total, "below_minimum" if state.requests else "first")
        usage = self._quote(state, view, total, time)
        if cold:  # an inherited recorded miss: at most what the recording read
            cached = min(usage.cached, cold_read)
            return CacheUsage(cached, total - cached, 0, "recorded", usage.hit_position if cached else 0)
        return usage

    def _quote(self, state: CacheState, view: ContextView, total: int, time: float | None) -> CacheUsage:
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
        cached = min(hit.tokens, total) if hit is not None else 0  # the scale moves between requests
        miss = ""
        if hit is None or hit is sysentry or invalidated:
            miss = ("ttl" if expired else "prefix" if invalidated else "lookback" if out_of_reach
                    else "first" if hit is None or hit is sysentry else "")
        return CacheUsage(cached, total - cached, 0, miss, hit.position if hit is not None else 0)

    def commit(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
               time: float | None, usage: CacheUsage) -> None:
        state.requests += 1
        entries = state.entries
        minimum = price.min_cacheable_tokens
        if usage.miss == "recorded":  # only what the recording still read survives
            entries[:] = [e for e in entries if e.tokens <= usage.cached]
            if state.system is not None and state.system.tokens > usage.cached:
                state.system = None
        p = view.changed_at
        while entries and entries[-1].position > p:
            entries.pop()
        expires = self._expires(time)
        total = scale.provider(view.tokens)
        if usage.cached:
            for i in range(len(entries) - 1, -1, -1):  # the entry read is refreshed
                e = entries[i]
                if e.position == usage.hit_position:
                    entries[i] = _Entry(e.position, e.tokens, expires)  # replaced, never changed: states share entries
                    break
        if total >= minimum:
            if entries and entries[-1].position == view.length:
                entries[-1] = _Entry(view.length, total, expires)
            else:
                entries.append(_Entry(view.length, total, expires))
        head_tokens = scale.provider(view.head_tokens)
        if view.head and head_tokens >= minimum:
            state.system = _Entry(view.head, head_tokens, expires)
        else:
            state.system = None


class OpenAICache(CacheModel):
    provider = "openai"
    increment = OPENAI_INCREMENT  # the cached prefix is counted in steps of this many tokens

    def __init__(self, *, ttl: str = "5m", retention: str = "in_memory"):
        if retention not in OPENAI_RETENTIONS:
            raise ConfigurationError(f"openai_retention is {retention!r}; expected one of "
                                     f"{', '.join(OPENAI_RETENTIONS)}", setting="openai_retention")
        super().__init__(ttl=ttl)
        self.retention_name = retention

    @classmethod
    def from_settings(cls, settings: CacheSettings) -> CacheModel:
        return cls(ttl=settings.ttl, retention=settings.openai_retention)

    def minimum(self, price: ModelPrice) -> int:
        return max(OPENAI_MIN_TOKENS, price.min_cacheable_tokens)

    def retention(self, price: ModelPrice) -> float:
        """Seconds a prefix stays held: 24 hours for the models that offer extended retention when it
        was asked for, else the in-memory policy's 5 minutes."""
        if self.retention_name == "24h" and extended_retention(price.model):
            return OPENAI_RETENTIONS["24h"]
        return OPENAI_RETENTIONS["in_memory"]

    def describe(self, price: ModelPrice) -> str:
        fee = "no write fee" if price.cache_write_5m is None else f"write {price.cache_write_5m}"
        held = self.retention(price)
        return (f"OpenAI automatic prompt caching: the longest cached prefix still held, from "
                f"{self.minimum(price):,} tokens in {OPENAI_INCREMENT}-token steps, "
                f"{'24-hour' if held > 3600 else f'{int(held // 60)}-minute'} retention refreshed on each hit, "
                f"cached input {price.cached_input} USD per MTok, {fee}")

    def quote(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
              time: float | None, cold: bool = False, cold_read: int = 0) -> CacheUsage:
        total = scale.provider(view.tokens)
        if total < self.minimum(price):
            return CacheUsage(0, 0, total, "below_minimum" if state.requests else "first")
        usage = self._quote(state, view, price, scale, total, time)
        if cold:  # an inherited recorded miss: at most what the recording read
            cached = (min(usage.cached, cold_read) // self.increment) * self.increment
            rest = total - cached
            position = usage.hit_position if cached else 0
            return CacheUsage(cached, rest, 0, "recorded", position) if price.cache_write_5m is not None else \
                CacheUsage(cached, 0, rest, "recorded", position)
        return usage

    def _quote(self, state: CacheState, view: ContextView, price: ModelPrice, scale: TokenScale, total: int,
               time: float | None) -> CacheUsage:
        has_write_fee = price.cache_write_5m is not None
        minimum = self.minimum(price)

        def uncached(miss: str) -> CacheUsage:
            return CacheUsage(0, total, 0, miss) if has_write_fee else CacheUsage(0, 0, total, miss)

        if not state.entries:
            return uncached("first")
        p = view.changed_at
        entries = state.entries
        j = bisect_right(entries, p, key=_position)  # entries[:j] are still prefixes of this request
        invalidated = j < len(entries)
        hit, expired = None, False
        while j > 0:  # the longest prefix still held
            j -= 1
            if _alive(entries[j], time):
                hit = entries[j]
                break
            expired = True
        # The previous request's prefix, cut where this one changed: cached up to there if it is held.
        prev = entries[-1]
        common = 0
        if invalidated and _alive(prev, time) and p > 0:
            common = scale.provider(view.tokens_before(p))
        held = max(hit.tokens if hit is not None else 0, common)
        cached = (min(held, total) // self.increment) * self.increment
        if cached < minimum:
            return uncached("ttl" if expired and not invalidated else "prefix" if invalidated else "ttl")
        rest = total - cached
        miss = "prefix" if invalidated else ""
        position = hit.position if hit is not None and common < hit.tokens else p
        return CacheUsage(cached, rest, 0, miss, position) if has_write_fee else \
            CacheUsage(cached, 0, rest, miss, position)

    def commit(self, state: CacheState, view: ContextView, *, price: ModelPrice, scale: TokenScale = UNSCALED,
               time: float | None, usage: CacheUsage) -> None:
        state.requests += 1
        entries = state.entries
        if usage.miss == "recorded":  # only what the recording still read survives
            entries[:] = [e for e in entries if e.tokens <= usage.cached]
        expires = None if time is None else time + self.retention(price)
        p = view.changed_at
        while entries and entries[-1].position > p:
            entries.pop()
        if usage.cached:
            for i in range(len(entries) - 1, -1, -1):  # the prefix read is refreshed
                e = entries[i]
                if e.position <= usage.hit_position:
                    entries[i] = _Entry(e.position, e.tokens, expires)  # replaced, never changed: states share entries
                    break
        total = scale.provider(view.tokens)
        if total >= self.minimum(price):
            if entries and entries[-1].position == view.length:
                entries[-1] = _Entry(view.length, total, expires)
            else:
                entries.append(_Entry(view.length, total, expires))


def extended_retention(model: str) -> bool:
    """Whether OpenAI offers the 24-hour extended retention for ``model`` (prompt-caching page)."""
    return any(model == m or model.startswith(m + "-") for m in OPENAI_EXTENDED_RETENTION_MODELS)


def google_minimum(model: str) -> int:
    """Gemini's minimum input for implicit caching, by model family (``GOOGLE_MIN_TOKENS``)."""
    name = model.lower()
    found = [(len(prefix), tokens) for prefix, tokens in GOOGLE_MIN_TOKENS if name.startswith(prefix)]
    return max(found)[1] if found else GOOGLE_DEFAULT_MIN_TOKENS


class GoogleCache(OpenAICache):
    """Gemini implicit caching: the longest cached prefix still held, no write fee.

    The same shape as OpenAI's automatic caching (a prefix of a recent request is
    read, nothing is written at a premium), with Gemini's own minimum per model
    and no rounding step (Google documents none). The price row's
    ``min_cacheable_tokens`` wins when it names one.
    """

    provider = "google"
    increment = 1

    def __init__(self, *, ttl: str = "5m", retention: str = "in_memory"):
        super().__init__(ttl=ttl, retention="in_memory")

    def minimum(self, price: ModelPrice) -> int:
        return price.min_cacheable_tokens or google_minimum(price.model)

    def retention(self, price: ModelPrice) -> float:
        return GOOGLE_RETENTION_S

    def describe(self, price: ModelPrice) -> str:
        return (f"Gemini implicit caching: the longest cached prefix still held, from {self.minimum(price):,} "
                f"tokens, {int(GOOGLE_RETENTION_S // 60)}-minute retention assumed (Google documents none), cached "
                f"input {price.cached_input} USD per MTok, no write fee")


#: The cache model of each provider; a second model for a provider that has one is refused, naming both.
CACHE_MODELS: Registry[type[CacheModel]] = Registry("cache model", origin=origin_of)
M = TypeVar("M", bound=type[CacheModel])


def register_cache_model(cls: M) -> M:
    """Class decorator: register a ``CacheModel`` subclass as the model of its ``provider``."""
    CACHE_MODELS.add(cls.provider, cls)
    return cls


for _model in (AnthropicCache, OpenAICache, GoogleCache):
    register_cache_model(_model)
