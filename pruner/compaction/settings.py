"""When to compact: the settings and the trigger.

Compaction fires when the context is within ``reserve_tokens`` of the model's
window. The context size is what the provider reported for the last assistant
message (``metadata["usage"]``: input + output + cache_read + cache_write) plus
an estimate of the messages after it, or an estimate of the whole context when
the session records no usage.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id="u1", role="user", content="hi"),
...     Message(id="a1", role="assistant", content="hello",
...             metadata={"usage": {"input": 150_000, "output": 40_000, "cache_read": 0, "cache_write": 0}})])
>>> decision = should_compact(s, CompactionSettings())
>>> decision.triggered, decision.context_tokens, decision.source
(True, 190000, 'usage')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import ConfigurationError
from ..model import Message, Session
from ..engine.prune import message_tokens
from ..setting_fields import setting
from ..tokens import DEFAULT_ENCODING, ENCODINGS, get_counter

USAGE_FIELDS: tuple[str, ...] = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class CompactionSettings:
    """Settings for ``compact`` (defaults follow the Pi coding agent).

    ``context_window`` is the model's window in tokens; compaction triggers once
    the context exceeds ``context_window - reserve_tokens``. ``keep_recent_tokens``
    is how much of the newest history is kept verbatim. ``encoding`` names the
    tiktoken encoding used for every estimate.
    """

    context_window: int = setting(200_000, label="Context window (tokens)", minimum=0,
                                  help="the model's context window in tokens")
    reserve_tokens: int = setting(16_384, label="Reserve tokens", minimum=0,
                                  help="compact when the context exceeds window minus this")
    keep_recent_tokens: int = setting(20_000, label="Keep-recent tokens", minimum=0,
                                      help="newest tokens kept verbatim")
    encoding: str = setting(DEFAULT_ENCODING, label="Token counter encoding", choices=ENCODINGS,
                            help="tiktoken encoding")

    def __post_init__(self) -> None:
        for name in ("context_window", "reserve_tokens", "keep_recent_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigurationError(f"compaction setting {name} must be a non-negative integer, got {value!r}",
                                         setting=name)
        if self.context_window <= 0:
            raise ConfigurationError("compaction setting context_window must be positive", setting="context_window")
        if self.reserve_tokens >= self.context_window:
            raise ConfigurationError(f"compaction setting reserve_tokens ({self.reserve_tokens}) must be smaller "
                              f"than context_window ({self.context_window})", setting="reserve_tokens")
        if self.encoding not in ENCODINGS:
            raise ConfigurationError(f"compaction setting encoding is {self.encoding!r}; choose one of "
                              f"{', '.join(ENCODINGS)}", setting="encoding")

    @property
    def threshold(self) -> int:
        """Context size above which compaction triggers."""
        return self.context_window - self.reserve_tokens


@dataclass(frozen=True)
class TriggerDecision:
    """Whether compaction fires, and the numbers behind the decision."""

    triggered: bool
    reason: str
    context_tokens: int
    source: str  # "usage" (provider-reported, plus an estimate of later messages) or "estimate"
    usage_message_id: str | None = None
    threshold: int = 0


def usage_total(message: Message) -> int | None:
    """input + output + cache_read + cache_write of a message's recorded usage, or None.

    A usage of zero (an aborted request) counts as no usage: it says nothing
    about the context size.
    """
    usage = message.metadata.get("usage") if isinstance(message.metadata, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    total = 0
    for name in USAGE_FIELDS:
        value = usage.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            return None
        total += int(value)
    return total or None


def estimate_context(messages: Sequence[Message], counter: Any, *, use_usage: bool = True,
                     usage_from: int = 0) -> tuple[int, str, str | None]:
    """``(tokens, source, usage message id)`` for a context made of ``messages``.

    With usage: the last assistant message's reported total plus the estimated
    tokens of the messages after it (the provider had not seen those yet).
    Only messages at ``usage_from`` or later may supply the usage: one recorded
    before an earlier compaction describes a prompt that no longer exists.
    """
    if use_usage:
        for i in range(len(messages) - 1, max(usage_from, 0) - 1, -1):
            m = messages[i]
            if m.role == "assistant":
                total = usage_total(m)
                if total is not None:
                    later = sum(message_tokens(x, counter) for x in messages[i + 1:])
                    return total + later, "usage", m.id
    return sum(message_tokens(m, counter) for m in messages), "estimate", None


def should_compact(session: Session, settings: CompactionSettings | None = None, *, force: bool = False,
                   use_usage: bool = True, context: Sequence[Message] | None = None,
                   usage_from: int = 0) -> TriggerDecision:
    """Decide whether ``session`` should be compacted now.

    ``context`` is the list of messages the model currently sees (default: all
    of the session's messages); ``compact`` passes the context that remains
    after an earlier compaction, and as ``usage_from`` the position in it of
    the first message newer than that compaction. ``force`` triggers by hand.
    """
    settings = settings or CompactionSettings()
    counter = get_counter(settings.encoding)
    messages = tuple(session.messages if context is None else context)
    tokens, source, usage_id = estimate_context(messages, counter, use_usage=use_usage, usage_from=usage_from)
    what = (f"provider-reported usage of message {usage_id!r} plus later messages" if source == "usage"
            else f"estimated with {counter.name}")
    limit = f"{settings.threshold:,} ({settings.context_window:,} window - {settings.reserve_tokens:,} reserve)"
    over = tokens > settings.threshold
    if force:
        reason = (f"triggered by hand; context is {tokens:,} tokens ({what}), "
                  f"{'above' if over else 'not above'} the threshold {limit}")
    elif over:
        reason = f"context is {tokens:,} tokens ({what}), above the threshold {limit}"
    else:
        reason = f"context is {tokens:,} tokens ({what}), not above the threshold {limit}"
    return TriggerDecision(triggered=force or over, reason=reason, context_tokens=tokens, source=source,
                           usage_message_id=usage_id, threshold=settings.threshold)
