"""The incremental trackers' contracts: what ``IncrementalPruner`` asks of a rule's tracker.

A rule family declares its tracker where it registers (``@register_rule(..., tracker=cls)``,
``pruner.rules``); the tracker carries the rule's state from append to append, and its
shape depends on the rule's stage:

* ``expired`` (pass 1): ``cls(index, config)``, an ``ExpiryTracker``;
* ``duplicate`` (pass 2): ``cls(index, config, gone)`` (``gone[i]``: pass 1 removes
  message ``i``), a ``DuplicateStageTracker``;
* ``restored`` (pass 3): ``cls(index, config, kept12)`` (``kept12(i)``: passes 1-2 keep
  message ``i``), a ``RestorationTracker``.

``IncrementalPruner`` checks what it builds against these protocols, so a tracker that
lacks a method is refused with the rule's name rather than failing halfway through an append.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Protocol, runtime_checkable

from ..errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from ..rules import Removal, Rule
    from ..analysis.index import SessionIndex
    from ..analysis.config import PruneConfig


@runtime_checkable
class ExpiryTracker(Protocol):
    """Pass 1: which messages the rule removes, kept up to date as messages arrive."""

    def advance(self, start: int) -> Collection[int]:
        """Take in the messages from ``start`` on; returns the messages whose removal changed."""
        ...

    def removal(self, i: int) -> Removal | None: ...


@runtime_checkable
class DuplicateStageTracker(Protocol):
    """Pass 2: which messages (among those pass 1 keeps) are copies, and of what."""

    def is_copy(self, i: int) -> bool: ...

    def removal(self, i: int) -> Removal | None: ...

    def advance(self, start: int, left: list[int], changed: set[int]) -> tuple[list[int], list[int]]:
        """``left``: earlier messages pass 1 removed in this append; returns (died, revived)."""
        ...


@runtime_checkable
class RestorationTracker(Protocol):
    """Pass 3: what kept messages need brought back (``restored``: the positions restored)."""

    @property
    def restored(self) -> Collection[int]: ...

    def restoration(self, j: int) -> Removal | None: ...

    def advance(self, start: int, died: list[int], revived: list[int], changed: set[int]) -> bool:
        """Bring the needs up to date; returns whether the restored set changed."""
        ...


def _refused(family: Rule, tracker: object, contract: type) -> ConfigurationError:
    return ConfigurationError(f"rule {family.name!r}: its tracker {type(tracker).__qualname__} is not an "
                              f"{contract.__name__} (pruner.engine.trackers)")


def _factory(family: Rule) -> Callable[..., object]:
    if family.tracker is None:
        raise ConfigurationError(f"rule {family.name!r} has no tracker")
    return family.tracker


def expiry_tracker(family: Rule, index: SessionIndex, config: PruneConfig) -> ExpiryTracker:
    tracker = _factory(family)(index, config)
    if not isinstance(tracker, ExpiryTracker):
        raise _refused(family, tracker, ExpiryTracker)
    return tracker


def duplicate_tracker(family: Rule, index: SessionIndex, config: PruneConfig,
                      gone: bytearray) -> DuplicateStageTracker:
    tracker = _factory(family)(index, config, gone)
    if not isinstance(tracker, DuplicateStageTracker):
        raise _refused(family, tracker, DuplicateStageTracker)
    return tracker


def restoration_tracker(family: Rule, index: SessionIndex, config: PruneConfig,
                        kept12: Callable[[int], bool]) -> RestorationTracker:
    tracker = _factory(family)(index, config, kept12)
    if not isinstance(tracker, RestorationTracker):
        raise _refused(family, tracker, RestorationTracker)
    return tracker
