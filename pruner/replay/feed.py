"""The incremental pruner the pruning strategies of one chain share.

Its verdicts depend on the messages only, never on the strategy, so one
``IncrementalPruner`` is fed request by request and every pruning strategy
(``prune_every_request``, ``cache_aware_prune``, ``prune_then_compact``) reads
its context from it. Strategies run in lock-step, so each request appends once;
``seconds`` is the time spent pruning (the replay reports it apart from each
strategy's own time).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from ..engine.context import Context, ContextChange
from ..engine.incremental import IncrementalPruner
from ..engine.prune import PruneConfig
from ..model import Message, Session

if TYPE_CHECKING:  # pragma: no cover
    from .requests import Request
    from .strategy import ReplayEnv
    from .wire import Wire

NO_CHANGE = ContextChange()


class PrunerFeed:
    def __init__(self, session: Session, config: PruneConfig, index_of: Mapping[str, int],
                 call_owner: Mapping[str, int]):
        self.pruner = IncrementalPruner(config, name=session.name, source_format=session.source_format)
        messages = session.messages
        self.index_of, self.call_owner = index_of, call_owner
        self.message_of: Callable[[str], Message] = lambda mid: messages[index_of[mid]]
        self.seconds = 0.0
        self._at: int | None = None
        self._last: tuple[Context, ContextChange] | None = None

    @classmethod
    def of(cls, env: ReplayEnv) -> "PrunerFeed":
        """The feed of ``env``'s chain (the replay makes it when a pruning strategy runs)."""
        if env.pruner_feed is None:
            raise RuntimeError("this replay environment has no pruner feed: the strategy must set uses_pruner")
        feed: PrunerFeed = env.pruner_feed
        return feed

    def advance(self, request: Request, new: Sequence[Message]) -> tuple[Context, ContextChange]:
        """The pruner's context at ``request`` (``new`` appended), and how it changed since the previous
        request (``ContextChange``)."""
        if self._at != request.index:
            started = time.perf_counter()
            change = self.pruner.append(new).change if new else NO_CHANGE
            self._last = (self.pruner.context(), change)
            self._at = request.index
            self.seconds += time.perf_counter() - started
        assert self._last is not None  # set above at the first request
        return self._last

    def send(self, wire: Wire, ctx: Context, change: ContextChange) -> None:
        """Make ``wire`` send the pruner's context, from how it changed."""
        wire.apply(ctx.messages, ctx.tokens, change, index_of=self.index_of, message_of=self.message_of,
                   call_owner=self.call_owner)
