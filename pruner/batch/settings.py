"""What a batch is run with: loading options and the pruning configuration.

A batch folder holds results made with one set of settings; ``fingerprint``
is what the manifest records and what a rerun compares.

>>> BatchSettings().fingerprint()["config"]["near_duplicate_threshold"]
0.8
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..engine.prune import PruneConfig
from ..errors import ConfigurationError
from ..formats import DEFAULT_MAX_BYTES, format_name
from ..replay import ReplaySettings, default_prices, strategy_names


@dataclass(frozen=True, kw_only=True)
class BatchSettings:
    config: PruneConfig = field(default_factory=PruneConfig)
    format: str | None = None  # None: detect each file's format from its content
    skip_bad_lines: bool = False
    retrieval_tools: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    replay: tuple[str, ...] = ()  # replay strategies (pruner.replay); empty: no replay
    replay_settings: ReplaySettings | None = None  # None: ReplaySettings()

    def __post_init__(self) -> None:
        if self.format is not None:
            object.__setattr__(self, "format", format_name(self.format, file="format"))
        object.__setattr__(self, "retrieval_tools", tuple(sorted(set(self.retrieval_tools))))
        object.__setattr__(self, "replay", tuple(dict.fromkeys(self.replay)))
        unknown = [name for name in self.replay if name not in strategy_names()]
        if unknown:
            raise ConfigurationError(f"unknown replay strategy {', '.join(unknown)}; choose from "
                                     f"{', '.join(strategy_names())}")
        replay_settings = self.replay_settings or ReplaySettings()
        if self.replay and (replay_settings.model or replay_settings.provider):
            # a named model without prices is refused before any work, as pruner replay does (one left
            # unnamed is each session's own: the replay detects it)
            default_prices().get(replay_settings.model_name, replay_settings.provider)
        if self.max_bytes <= 0:
            raise ConfigurationError(f"max_bytes is {self.max_bytes!r}; it must be positive")

    def fingerprint(self) -> dict[str, Any]:
        """A JSON-ready description of everything that changes the results."""
        return {"config": _plain(self.config), "format": self.format, "skip_bad_lines": self.skip_bad_lines,
                "retrieval_tools": list(self.retrieval_tools), "max_bytes": self.max_bytes,
                "replay": list(self.replay),
                "replay_settings": _plain(self.replay_settings) if self.replay else None}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (frozenset, set)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    return value
