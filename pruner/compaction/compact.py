"""``compact``: where the cut falls, what is summarised, the summary, and what it saves and costs.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
...                         content=f"message number {i} " * 20) for i in range(8)])
>>> r = compact(s, CompactionSettings(keep_recent_tokens=100), force=True)
>>> r.cut_message_id, r.compacted.messages[0].metadata["kind"], r.tokens_after < r.tokens_before
('m6', 'compaction_summary', True)

The compacted session is the pinned leading system messages, then one user
message (``metadata["kind"] == "compaction_summary"``) that says the earlier
history was compacted into the summary it carries in ``<summary>`` tags, then
the kept messages unchanged (turns renumbered). It records itself in
``metadata["recorded_compactions"]`` so compacting it again merges into this
summary and starts the window at the first kept message.

Token counts are tiktoken estimates (``settings.encoding``) of what the model
sees: ``tokens_before`` is the current context (after any earlier compaction),
``tokens_after`` the compacted session. ``cache_invalidated_tokens`` counts the
tokens of the previous prompt that a prefix cache can no longer reuse: prompt
caches match the longest unchanged prefix, and the summary replaces the first
message after the pinned system messages, so every later token (the
summarised part *and* the kept messages behind it) must be processed again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import PrunerError, SummarizerError
from ..analysis.fileops import file_operations
from ..model import Message, Session, validate_session
from ..engine.prune import message_tokens
from ..tokens import get_counter
from .base import Summarizer, SummaryTask
from .cut import ContextWindow, CutPoint, context_window, find_cut_point
from .offline import OfflineSummarizer
from .prompts import COMPACTED_INTRO, SPLIT_TURN_JOIN, SummaryRequest, history_request, prefix_request
from .sections import format_file_lists, parse_file_lists, parse_sections, strip_file_lists
from .settings import CompactionSettings, TriggerDecision, should_compact

SUMMARY_KIND = "compaction_summary"
#: ``summarizer_name`` when no summariser ran (nothing was cut, or nothing new to summarise), so a
#: result never credits a summariser, an LLM say, with a summary it did not write.
NO_SUMMARIZER = "none"
ON_ERROR = ("raise", "fallback")


@dataclass(frozen=True)
class CompactionPlan:
    """Everything ``compact`` decides before any summariser runs."""

    session: Session
    settings: CompactionSettings
    trigger: TriggerDecision
    window: ContextWindow
    cut: CutPoint | None  # None when the trigger did not fire
    token_counts: tuple[int, ...]  # per message of session.messages
    to_summarize: tuple[int, ...] = ()
    turn_prefix: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()

    @property
    def compacts(self) -> bool:
        return self.cut is not None and self.cut.index is not None

    def messages(self, indices: Sequence[int]) -> tuple[Message, ...]:
        return tuple(self.session.messages[i] for i in indices)

    def tokens(self, indices: Sequence[int]) -> int:
        return sum(self.token_counts[i] for i in indices)


def plan_compaction(session: Session, settings: CompactionSettings | None = None, *, force: bool = False,
                    use_usage: bool = True, validate: bool = True) -> CompactionPlan:
    """The trigger decision and the cut, without summarising anything (cheap)."""
    settings = settings or CompactionSettings()
    if validate:
        validate_session(session)
    counter = get_counter(settings.encoding)
    counts = tuple(message_tokens(m, counter) for m in session.messages)
    window = context_window(session)
    order = window.context()
    context = [session.messages[i] for i in order]
    summary_at = window.previous.message_index if window.previous else None
    usage_from = 0 if summary_at is None else next(
        (k for k, i in enumerate(order) if i > summary_at), len(order))
    trigger = should_compact(session, settings, force=force, use_usage=use_usage, context=context,
                             usage_from=usage_from)
    if not trigger.triggered:
        return CompactionPlan(session, settings, trigger, window, None, counts)
    cut = find_cut_point(session, window, counts, keep_recent_tokens=settings.keep_recent_tokens)
    if cut.index is None:
        return CompactionPlan(session, settings, trigger, window, cut, counts)
    # a split turn has a turn start (CutPoint's docstring)
    boundary = cut.turn_start_index if cut.split_turn and cut.turn_start_index is not None else cut.index
    w = window.window
    return CompactionPlan(session, settings, trigger, window, cut, counts,
                          to_summarize=tuple(i for i in w if i < boundary),
                          turn_prefix=tuple(i for i in w if boundary <= i < cut.index),
                          kept=tuple(i for i in w if i >= cut.index))


@dataclass(frozen=True)
class CompactionResult:
    """What compaction would do to a session. The input session is never changed."""

    triggered: bool
    trigger_reason: str
    context_tokens: int
    cut_index: int | None
    cut_message_id: str | None
    split_turn: bool
    to_summarize: tuple[Message, ...]
    turn_prefix: tuple[Message, ...]
    kept: tuple[Message, ...]
    request: SummaryRequest | None  # the history request (None when no history call is needed)
    summary: str
    sections: Mapping[str, str]
    compacted: Session
    tokens_before: int
    tokens_after: int
    cache_invalidated_tokens: int
    read_files: tuple[str, ...]
    modified_files: tuple[str, ...]
    summarizer_name: str  # what wrote the summary; NO_SUMMARIZER when no summariser was called
    # Details beyond the shared contract:
    cut_reason: str = ""
    context_source: str = "estimate"  # "usage" or "estimate"
    threshold: int = 0
    turn_start_index: int | None = None
    prefix_request: SummaryRequest | None = None  # split turns: the request for the turn's start
    previous_summary: str | None = None  # the earlier summary merged into this one
    pinned: tuple[Message, ...] = ()  # leading system messages kept ahead of the summary
    already_compacted: int = 0  # messages an earlier compaction had already replaced
    summarized_tokens: int = 0  # to_summarize + turn_prefix
    kept_tokens: int = 0
    cache_rewrite_tokens: int = 0  # tokens of the new prompt after the unchanged prefix
    error: str | None = None  # the summariser's error when on_error="fallback" replaced it
    counter: str = ""
    session: Session | None = field(default=None, repr=False)

    @property
    def compacted_any(self) -> bool:
        return self.cut_index is not None

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_dict(self, *, include_request: bool = False) -> dict[str, Any]:
        """A JSON-ready report (message ids instead of messages)."""
        def ids(ms: Sequence[Message]) -> list[str]:
            return [m.id for m in ms]

        out: dict[str, Any] = {
            "session": self.session.name if self.session else "", "triggered": self.triggered,
            "trigger_reason": self.trigger_reason, "context_tokens": self.context_tokens,
            "context_source": self.context_source, "threshold": self.threshold,
            "cut_index": self.cut_index, "cut_message_id": self.cut_message_id, "cut_reason": self.cut_reason,
            "split_turn": self.split_turn, "turn_start_index": self.turn_start_index,
            "to_summarize": ids(self.to_summarize), "turn_prefix": ids(self.turn_prefix),
            "kept": ids(self.kept), "pinned": ids(self.pinned), "already_compacted": self.already_compacted,
            "summarizer": self.summarizer_name, "error": self.error, "summary": self.summary,
            "sections": dict(self.sections), "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after, "summarized_tokens": self.summarized_tokens,
            "kept_tokens": self.kept_tokens, "cache_invalidated_tokens": self.cache_invalidated_tokens,
            "cache_rewrite_tokens": self.cache_rewrite_tokens, "read_files": list(self.read_files),
            "modified_files": list(self.modified_files), "counter": self.counter,
            "previous_summary": self.previous_summary is not None,
        }
        if include_request:
            out["request"] = None if self.request is None else {
                "system_prompt": self.request.system_prompt, "user_message": self.request.user_message}
            out["prefix_request"] = None if self.prefix_request is None else {
                "system_prompt": self.prefix_request.system_prompt,
                "user_message": self.prefix_request.user_message}
        return out


def _file_lists(plan: CompactionPlan, previous: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    read, modified = parse_file_lists(previous or "")
    reads, mods = set(read), set(modified)
    for m in plan.messages(plan.to_summarize + plan.turn_prefix):
        for c in m.tool_calls:
            for op, path in file_operations(c):
                (reads if op == "read" else mods).add(path)
    # A file that was changed is listed once, as modified.
    return tuple(sorted(reads - mods)), tuple(sorted(mods))


def _unique_id(base: str, taken: set[str]) -> str:
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _same(a: Message, b: Message) -> bool:
    return (a.role, a.content, a.tool_calls, a.tool_call_id) == (b.role, b.content, b.tool_calls, b.tool_call_id)


def _summarise(plan: CompactionPlan, summarizer: Summarizer, previous: str | None,
               ) -> tuple[str | None, str | None, SummaryRequest | None, SummaryRequest | None]:
    """``(history text or None, prefix text or None, history request, prefix request)``."""
    history_msgs = plan.messages(plan.to_summarize)
    prefix_msgs = plan.messages(plan.turn_prefix)
    history_task = prefix_task = None
    if history_msgs:
        kind = "update" if previous else "history"
        history_task = SummaryTask(kind, history_msgs, history_request(history_msgs, previous), previous)
    if prefix_msgs:
        prefix_task = SummaryTask("turn_prefix", prefix_msgs, prefix_request(prefix_msgs))
    history = summarizer.summarize(history_task) if history_task else previous
    prefix = summarizer.summarize(prefix_task) if prefix_task else None
    return (history, prefix, history_task.request if history_task else None,
            prefix_task.request if prefix_task else None)


def compact(session: Session, settings: CompactionSettings | None = None, summarizer: Summarizer | None = None,
            *, force: bool = False, on_error: str = "raise", use_usage: bool = True,
            validate: bool = True) -> CompactionResult:
    """Preview compacting ``session``: trigger, cut, summary, compacted session, tokens and cache cost.

    ``summarizer`` defaults to ``OfflineSummarizer()``. ``force`` compacts even
    when the trigger does not fire. When the summariser raises
    ``SummarizerError``: ``on_error="raise"`` re-raises it; ``"fallback"``
    returns the offline summary instead, with the error in ``result.error``.
    ``use_usage=False`` ignores provider-reported usage (e.g. after pruning,
    when it describes a prompt that no longer exists).
    """
    if on_error not in ON_ERROR:
        raise PrunerError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    settings = settings or CompactionSettings()
    summarizer = summarizer or OfflineSummarizer()
    plan = plan_compaction(session, settings, force=force, use_usage=use_usage, validate=validate)
    msgs = session.messages
    context = plan.window.context()
    tokens_before = plan.tokens(context)
    previous = plan.window.previous.summary if plan.window.previous else None
    common: dict[str, Any] = dict(
        triggered=plan.trigger.triggered, trigger_reason=plan.trigger.reason,
        context_tokens=plan.trigger.context_tokens, context_source=plan.trigger.source,
        threshold=plan.trigger.threshold, pinned=plan.messages(plan.window.pinned),
        already_compacted=len(plan.window.already_compacted), tokens_before=tokens_before,
        counter=get_counter(settings.encoding).name, session=session)
    if not plan.compacts:
        reason = plan.cut.reason if plan.cut else "the trigger did not fire; nothing compacted"
        return CompactionResult(
            cut_index=None, cut_message_id=None, split_turn=False, to_summarize=(), turn_prefix=(),
            kept=plan.messages(plan.window.window), request=None, summary="", sections={}, compacted=session,
            tokens_after=tokens_before, cache_invalidated_tokens=0, read_files=(), modified_files=(),
            summarizer_name=NO_SUMMARIZER, cut_reason=reason, previous_summary=previous,
            kept_tokens=plan.tokens(plan.window.window), **common)

    cut = plan.cut
    assert cut is not None  # plan.compacts: a cut was found
    previous_body = strip_file_lists(previous) if previous else None
    name, error = summarizer.name, None
    try:
        history, prefix, request, prefix_req = _summarise(plan, summarizer, previous_body)
    except SummarizerError as exc:
        if on_error == "raise":
            raise
        error = str(exc)
        name = f"offline (fallback: {summarizer.name} failed)"
        history, prefix, request, prefix_req = _summarise(plan, OfflineSummarizer(), previous_body)

    if request is None and prefix_req is None:  # nothing new to summarise: the earlier summary stands
        name = NO_SUMMARIZER
    read_files, modified_files = _file_lists(plan, previous)
    parts = [history.strip()] if history else []
    if prefix:
        parts.append(f"{SPLIT_TURN_JOIN}\n\n{prefix.strip()}" if parts else prefix.strip())
    lists = format_file_lists(read_files, modified_files)
    if lists:
        parts.append(lists)
    # The summary sits inside <summary> tags; a closing tag inside it would end it early.
    summary = "\n\n".join(parts).replace("</summary>", "</ summary>") + "\n"

    kept = plan.messages(plan.kept)
    pinned = plan.messages(plan.window.pinned)
    summary_id = _unique_id("compaction-summary", {m.id for m in msgs})
    summary_message = Message(
        id=summary_id, role="user", content=f"{COMPACTED_INTRO}\n\n<summary>\n{summary}</summary>",
        metadata={"kind": SUMMARY_KIND, "summarizer": name, "first_kept_message_id": cut.message_id,
                  "tokens_before": tokens_before})
    record = {"entry_id": summary_id, "summary": summary, "first_kept_message_id": cut.message_id,
              "first_kept_index": len(pinned) + 1, "tokens_before": tokens_before,
              "position_index": len(pinned)}
    metadata = {k: v for k, v in session.metadata.items() if k != "recorded_compactions"}
    metadata["recorded_compactions"] = [record]
    compacted = Session.of(pinned + (summary_message,) + kept, name=session.name,
                           source_format=session.source_format, metadata=metadata)

    counter = get_counter(settings.encoding)
    new_counts = [message_tokens(m, counter) for m in compacted.messages]
    old_context = [msgs[i] for i in context]
    same = 0
    while same < min(len(old_context), len(compacted.messages)) and _same(old_context[same],
                                                                          compacted.messages[same]):
        same += 1
    unchanged_tokens = plan.tokens(context[:same])
    return CompactionResult(
        cut_index=cut.index, cut_message_id=cut.message_id, split_turn=cut.split_turn,
        to_summarize=plan.messages(plan.to_summarize), turn_prefix=plan.messages(plan.turn_prefix), kept=kept,
        request=request, summary=summary, sections=parse_sections(summary), compacted=compacted,
        tokens_after=sum(new_counts), cache_invalidated_tokens=tokens_before - unchanged_tokens,
        read_files=read_files, modified_files=modified_files, summarizer_name=name,
        cut_reason=cut.reason, turn_start_index=cut.turn_start_index, prefix_request=prefix_req,
        previous_summary=previous, summarized_tokens=plan.tokens(plan.to_summarize + plan.turn_prefix),
        kept_tokens=plan.tokens(plan.kept), cache_rewrite_tokens=sum(new_counts[same:]), error=error,
        **common)
