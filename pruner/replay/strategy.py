"""The strategy hook: one module per strategy in ``pruner/replay/strategies/``, registered by name.

A strategy decides what the model receives at each request. It is causal: at
request k it sees the messages up to that request (``step(request, new)`` gets
the messages added since its previous request) and what it was billed so far
(``billed``), never a later message. Each chain of a session (the main
conversation, each subagent's) has its own strategy instance. The request
carries what varies from one request to the next: its model's price row and
window (``request.price``, ``request.window``, provider tokens) and the token
scale there (``request.scale``: our tokens -> the provider's, fitted on the
recording up to that request). A counterfactual strategy sees the
conversation without the recording's own compaction summaries. It keeps its context in ``self.wire``
(``pruner.replay.wire.Wire``) and changes it in place, so the replay reads the
longest common prefix with the previous request from the wire instead of
recomputing it. ``step`` returns the events it caused (a prune, a compaction, a
truncation, a clearing: tokens before -> after) and any extra model call it made
(a compaction's summarisation request, billed like any other request).

Register a strategy with ``@register_strategy(name, summary=...)``; every module
of ``pruner.replay.strategies`` is imported when the package loads, so a new
strategy is one new module (CONTRIBUTING.md, "Add a replay strategy").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from ..errors import ConfigurationError
from ..model import MAIN_CHAIN, Message, Session
from ..registry import Registry, origin_of
from .requests import Request, price_of
from .wire import TokenBook, Wire

if TYPE_CHECKING:  # pragma: no cover
    from .cache import CacheModel, CacheUsage
    from .settings import ReplaySettings


@dataclass(frozen=True)
class Event:
    """Something a strategy did to the context at one request."""

    kind: str  # "prune", "compact", "truncate", "clear"
    tokens_before: int  # what the context would have held had the strategy not acted (our tokens)
    tokens_after: int
    position: int  # first message position it changed
    detail: str = ""  # one sentence: why, or what it removed

    @property
    def removed(self) -> int:
        return self.tokens_before - self.tokens_after


@dataclass(frozen=True)
class ExtraCall:
    """A model call a strategy made besides the request itself (e.g. a summarisation)."""

    what: str
    input_tokens: int  # our tokens; billed as uncached input
    output_tokens: int


@dataclass(frozen=True)
class Step:
    events: tuple[Event, ...] = ()
    extra_calls: tuple[ExtraCall, ...] = ()


@dataclass(frozen=True, eq=False)
class ReplayEnv:
    """What every strategy of one chain may read, fixed once built: the chain's conversation (only up
    to the current request, by contract), settings, token counts, the cache rules per provider, and
    the incremental pruner the pruning strategies share. What changes from request to request (the
    model's price and window, the token scale) comes with the ``Request``."""

    session: Session  # this chain's conversation (counterfactuals: without the recorded summaries)
    settings: "ReplaySettings"
    book: TokenBook
    chain: str = MAIN_CHAIN
    track_ids: bool = False  # set by the replay when it checks facts (generated workloads)
    summarizer: Any = None  # for compaction; None: the offline summariser
    cache_models: Mapping[str, "CacheModel"] = field(default_factory=dict)  # provider -> its cache rules
    pruner_feed: Any = None  # pruner.replay.feed.PrunerFeed, shared by the pruning strategies (or None)
    index_of: Mapping[str, int] = field(init=False, repr=False)
    call_owner: Mapping[str, int] = field(init=False, repr=False)
    result_of_call: Mapping[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        messages = self.session.messages
        object.__setattr__(self, "index_of", {m.id: i for i, m in enumerate(messages)})
        object.__setattr__(self, "call_owner", {c.id: i for i, m in enumerate(messages) for c in m.tool_calls})
        object.__setattr__(self, "result_of_call", {m.tool_call_id: m.id for m in messages
                                                    if m.tool_call_id is not None})

    def cache_model(self, request: Request) -> "CacheModel":
        """The cache rules that bill ``request`` (its model's provider)."""
        return self.cache_models[price_of(request).provider]

    def position_after_call(self, messages: Sequence[Message], call_id: str) -> int:
        """Where ``call_id``'s result goes in ``messages`` (session messages in session order):
        right after the assistant message that made the call."""
        owner = self.call_owner.get(call_id)
        if owner is None:
            return len(messages)
        index_of = self.index_of
        return bisect_right(messages, owner, key=lambda m: index_of.get(m.id, -1))


class Strategy(ABC):
    """The strategy contract: subclasses implement ``step`` (abstract: a subclass without it cannot be
    made); ``name`` and ``summary`` come from ``register_strategy``."""

    name = ""
    summary = ""
    uses_pruner = False  # True: it reads the shared incremental pruner (the replay makes one per chain)
    providers: tuple[str, ...] | None = None  # the providers it exists for (None: every provider)

    def __init__(self, env: ReplayEnv):
        self.env = env
        self.wire = Wire(env.book, track_ids=env.track_ids)

    @abstractmethod
    def step(self, request: Request, new: Sequence[Message]) -> Step:
        """What the model receives at ``request``: change ``self.wire``; ``new``: the messages added
        since the previous request. Returns the events it caused and any extra model call."""

    # An optional hook, not abstract: a strategy that learns nothing from its bills leaves it as it is.
    def billed(self, request: Request, usage: "CacheUsage", dollars: float, *, cold: bool) -> None:  # noqa: B027
        """Called after each request with what it was billed (a strategy may learn from it)."""


@dataclass(frozen=True)
class StrategySpec:
    name: str
    summary: str  # one sentence: what the model receives under it
    factory: type[Strategy]
    order: int  # where listings put it
    counterfactual: bool  # False for as_recorded (what really happened)


#: Every registered strategy by name; a second strategy under a taken name is refused, naming both.
STRATEGIES: Registry[StrategySpec] = Registry("strategy", origin=lambda spec: origin_of(spec.factory))
S = TypeVar("S", bound=type[Strategy])


def register_strategy(name: str, *, summary: str, order: int = 100,
                      counterfactual: bool = True) -> Callable[[S], S]:
    """Class decorator: register a ``Strategy`` subclass under ``name``."""
    if not name or not name.replace("_", "").isalnum():
        raise ConfigurationError(f"strategy name {name!r} must be letters, digits and underscores")

    def decorate(cls: S) -> S:
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise ConfigurationError(f"strategy {name!r} must be a subclass of pruner.replay.Strategy")
        STRATEGIES.add(name, StrategySpec(name=name, summary=summary, factory=cls, order=order,
                                          counterfactual=counterfactual))
        cls.name, cls.summary = name, summary
        return cls
    return decorate


def strategy_names() -> list[str]:
    """Registered strategies in listing order."""
    return [s.name for s in sorted(STRATEGIES.values(), key=lambda s: (s.order, s.name))]


def _load_builtin_strategies() -> None:
    import importlib
    import pkgutil

    from . import strategies

    for info in sorted(pkgutil.iter_modules(strategies.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{strategies.__name__}.{info.name}")
