"""Replay settings: provider, model, window, and each strategy's knobs (all with defaults).

Token settings are in the provider's tokens (what its window and trigger count),
as a user reads them in the provider's documentation; the replay converts them
to the pruner's own counts with the measured ratio (``pruner.replay.calibration``).

>>> s = ReplaySettings(provider="anthropic")
>>> s.provider, s.model_name, s.clear_trigger, s.clear_keep
('anthropic', 'claude-sonnet-4-5-20250929', 100000, 3)
>>> ReplaySettings().provider is None  # the session's: the replay detects it (pruner.replay.detect)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compaction.settings import CompactionSettings
from ..engine.prune import PruneConfig
from ..errors import ConfigurationError
from ..setting_fields import default_of, setting
from .cache import ANTHROPIC_TTLS, CACHE_MODELS, OPENAI_RETENTIONS

#: The provider of a session that records none and whose format names none (``pruner.replay.detect``).
DEFAULT_PROVIDER = "anthropic"
#: The model each provider's dollars use unless ``--model`` says otherwise.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5-20250929", "openai": "gpt-5.1", "google": "gemini-3-pro-preview"}

#: The placeholder our ``clear_tool_uses`` replay sends for a cleared result. Anthropic's
#: documentation only says "placeholder text" and gives none, so this text is our choice.
CLEAR_PLACEHOLDER = "[tool result cleared by context editing]"

#: ``clear_tool_uses_20250919`` defaults (https://platform.claude.com/docs/en/build-with-claude/context-editing,
#: "Configuration options for tool result clearing"): trigger "100,000 input tokens", keep
#: "3 tool uses", clear_at_least "None", exclude_tools "None".
CLEAR_TRIGGER = 100_000
CLEAR_KEEP = 3
#: The trigger's documented types: ``{"type": "input_tokens", "value": N}`` (the default) or
#: ``{"type": "tool_uses", "value": N}``.
CLEAR_TRIGGER_TYPES = ("input_tokens", "tool_uses")



@dataclass(frozen=True)
class ReplaySettings:
    """What to replay with. ``context_window`` defaults to the model's (price table).

    ``scale``: provider tokens per token of ours; ``None`` measures it from the
    session's recorded usage (1.0 when it records none). ``inherit_cold``: a
    request the recording shows cold (no cache read) is cold for every strategy.
    ``provider`` and ``model`` left None are the session's (``pruner.replay.detect.resolve_settings``:
    the replay detects them as the CLI does); a named one wins.
    ``model``: the model whose prices apply to requests that record none (a request that records
    its model is priced at that model, or reported unpriced). ``cache_aware_budget``: the share of
    ``full``'s cost so far that ``cache_aware_prune`` may spend ahead of its savings (it never spends more).
    """

    provider: str | None = None  # None: the session's, else anthropic
    model: str | None = None  # None: the session's, else the provider's default
    context_window: int | None = setting(None, label="Context window (0: the model's)", minimum=1,
                                         help="the model's window in provider tokens (default: the price table's)")
    ttl: str = setting("5m", label="Cache TTL (Anthropic)", choices=tuple(ANTHROPIC_TTLS),
                       help="Anthropic cache lifetime")
    openai_retention: str = "in_memory"  # or "24h": OpenAI's extended retention, for the models that have it
    # Pi's compaction defaults, as the compaction's own settings have them
    reserve_tokens: int = setting(default_of(CompactionSettings, "reserve_tokens"), label="Reserve tokens", minimum=0,
                                  help="compact (and truncate) when the context exceeds window minus this")
    keep_recent_tokens: int = setting(default_of(CompactionSettings, "keep_recent_tokens"), minimum=0,
                                      label="Keep-recent tokens", help="newest tokens a compaction keeps verbatim")
    truncate_budget: int | None = None  # default: window - reserve, like the compaction trigger
    clear_trigger: int = setting(CLEAR_TRIGGER, label="clear_tool_uses trigger", minimum=0,
                                 help="clear_tool_uses: input tokens that trigger clearing")
    # or "tool_uses": the trigger counts tool uses in the context
    clear_trigger_type: str = setting(CLEAR_TRIGGER_TYPES[0], label="clear_tool_uses trigger type",
                                      choices=CLEAR_TRIGGER_TYPES, help="clear_tool_uses: what the trigger counts")
    # also clear the cleared calls' inputs (all, or these tools')
    clear_tool_inputs: bool | tuple[str, ...] = setting(
        False, label="clear_tool_uses: also clear the inputs",
        help="clear_tool_uses: also clear the inputs of the calls whose results are cleared")
    clear_keep: int = setting(CLEAR_KEEP, label="clear_tool_uses keep", minimum=0,
                              help="clear_tool_uses: newest tool uses kept")
    clear_at_least: int = setting(0, label="clear_tool_uses clear at least", minimum=0,
                                  help="clear_tool_uses: clear only if at least this many tokens go")
    clear_exclude_tools: tuple[str, ...] = setting((), label="clear_tool_uses: never clear",
                                                   flag="--clear-exclude-tool",
                                                   metavar="NAME",
                                                   help="clear_tool_uses: never clear this tool's results (repeatable)")
    clear_placeholder: str = CLEAR_PLACEHOLDER
    inherit_cold: bool = setting(True, label="A request the recording shows cold is cold for every strategy",
                                 help="a request the recording shows cold is cold for every strategy",
                                 flag_help="do not make the requests the recording shows cold cold for every strategy")
    scale: float | None = None
    cache_aware_budget: float = 0.005
    prune: PruneConfig = field(default_factory=PruneConfig)

    def __post_init__(self) -> None:
        if self.provider is not None and self.provider not in CACHE_MODELS:
            raise ConfigurationError(f"provider is {self.provider!r}; expected one of {', '.join(CACHE_MODELS)}",
                                     setting="provider")
        if self.ttl not in ANTHROPIC_TTLS:
            raise ConfigurationError(f"ttl is {self.ttl!r}; expected one of {', '.join(ANTHROPIC_TTLS)}", setting="ttl")
        if self.openai_retention not in OPENAI_RETENTIONS:
            raise ConfigurationError(f"openai_retention is {self.openai_retention!r}; expected one of "
                                     f"{', '.join(OPENAI_RETENTIONS)}", setting="openai_retention")
        for name in ("reserve_tokens", "keep_recent_tokens", "clear_trigger", "clear_keep", "clear_at_least"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigurationError(f"replay setting {name} must be a whole number >= 0, got {value!r}",
                                         setting=name)
        for name in ("context_window", "truncate_budget"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ConfigurationError(f"replay setting {name} must be a positive whole number, got {value!r}",
                                         setting=name)
        if self.scale is not None and not (isinstance(self.scale, (int, float)) and self.scale > 0):
            raise ConfigurationError(f"replay setting scale must be a positive number, got {self.scale!r}",
                                     setting="scale")
        if not 0 <= self.cache_aware_budget < 1:
            raise ConfigurationError("replay setting cache_aware_budget must be in [0, 1)",
                                     setting="cache_aware_budget")
        object.__setattr__(self, "clear_exclude_tools", tuple(self.clear_exclude_tools))
        if self.clear_trigger_type not in CLEAR_TRIGGER_TYPES:
            raise ConfigurationError(f"clear_trigger_type is {self.clear_trigger_type!r}; expected one of "
                                     f"{', '.join(CLEAR_TRIGGER_TYPES)}", setting="clear_trigger_type")
        if not isinstance(self.clear_tool_inputs, bool):
            object.__setattr__(self, "clear_tool_inputs", tuple(self.clear_tool_inputs))

    @property
    def model_name(self) -> str:
        """The model for requests that record none: the named one, else the provider's default."""
        if self.model:
            return self.model
        if self.provider is None:  # a session decides it: the replay resolves the settings first
            raise ConfigurationError("the replay settings name no provider or model; resolve them for a "
                                     "session (pruner.replay.detect.resolve_settings)", setting="provider")
        return DEFAULT_MODELS[self.provider]
