"""The guide's logic: the session it steps through (or a window of its turns), the steps, and what
each step's numbers mean next to the previous one's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pruner import PruneConfig, message_tokens
from pruner.compaction import CompactionSettings, compact, plan_compaction

from .. import analysis, cache
from ..loading import LoadedSession
from . import compaction as compaction_logic
from . import guide_demo

#: Sessions longer than this many turns are guided through a window of at most this many (few enough
#: that the timeline shows one mark per message).
MAX_TURNS = 15
#: The guide's own URL parameters: the step (1-based), the window (``first-last``) and presenter mode (``1``).
PAGE_KEYS = ("step", "window", "present")


def presenting(link: dict[str, str] | None, current: bool) -> bool:
    """Presenter mode: as a link or a reload says (``present=1``), else as the page last had it.

    >>> presenting({"present": "1"}, False), presenting({"step": "2"}, True), presenting(None, True)
    (True, False, True)
    """
    return current if link is None else link.get("present") == "1"

#: (title, config for that step or None for compaction, what the step does and why)
STEPS = (
    ("1. As it arrives", PruneConfig(expire=False, deduplicate=False, restore=False),
     "The conversation as the agent recorded it: every message is sent to the model at every turn. "
     "The marks show each message at its turn, in its role's lane. Nothing is removed yet."),
    ("2. Pass 1: expire", PruneConfig(expire=True, deduplicate=False, restore=False),
     "Pass 1 removes what newer messages have made stale: a tool result superseded by a newer call with "
     "the same arguments, a file read made stale by a later write to that file, and a message whose "
     "time-to-live (expires_after_turn) has run out. Each removal points at what replaced it."),
    ("3. Pass 2: deduplicate", PruneConfig(expire=True, deduplicate=True, restore=False),
     "Pass 2 removes text the model has already seen: exact repeats, and near-duplicates whose word "
     "3-grams mostly appear in one kept message. Each removal points at the kept original."),
    ("4. Pass 3: restore", PruneConfig(expire=True, deduplicate=True, restore=True),
     "Pass 3 checks that nothing kept now refers to something removed. A kept message that refers to a "
     "key (REF:key) needs the message that defines it (DEFINE:key); a kept tool result needs the call "
     "that asked for it. Such messages are brought back, marked restored, pointing at who needed them."),
    ("5. Compaction", None,
     "When the pruned conversation still outgrows the context window, compaction replaces the oldest "
     "turns with a structured summary and keeps the newest ones verbatim. Here it is forced on the "
     "pruned session, keeping about its newest third; the square marks are the messages it summarises."),
)
TITLES = [s[0] for s in STEPS]


def moved(title: str | None, delta: int) -> str:
    """The step ``delta`` steps from ``title`` (clamped to the first and last)."""
    index = TITLES.index(title) if title in TITLES else 0
    return TITLES[min(max(index + delta, 0), len(TITLES) - 1)]


def needs_window(loaded: LoadedSession) -> bool:
    session = loaded.session
    return bool(session.messages) and session.last_turn - session.messages[0].turn + 1 > MAX_TURNS


def clamp_window(loaded: LoadedSession, first: int, last: int) -> tuple[int, int]:
    """A window of whole turns inside the session, at most ``MAX_TURNS`` long (the end moves to fit)."""
    lo, hi = loaded.session.messages[0].turn, loaded.session.last_turn
    first = min(max(int(first), lo), hi)
    last = min(max(int(last), first), hi, first + MAX_TURNS - 1)
    return first, last


def default_window(loaded: LoadedSession) -> tuple[int, int]:
    first = loaded.session.messages[0].turn
    return clamp_window(loaded, first, first + MAX_TURNS - 1)


def windowed(loaded: LoadedSession, window: tuple[int, int] | None) -> LoadedSession:
    """``loaded``, or only its turns in ``window`` as a session of its own (the passes see only those)."""
    if window is None:
        return loaded
    first, last = window
    messages = [m for m in loaded.session.messages if first <= m.turn <= last]
    # a result whose call fell before the window has nothing to answer in it: leave it out too
    calls = {c.id for m in messages for c in m.tool_calls}
    messages = [m for m in messages if not (m.tool_call_id and m.role == "tool" and m.tool_call_id not in calls)]
    return replace(loaded, key=f"{loaded.key}:turns{first}-{last}", label=f"{loaded.label}, turns {first}–{last}",
                   session=loaded.session.with_messages(messages))


def parse_window(text: str | None) -> tuple[int, int] | None:
    """``"12-41"`` -> (12, 41); anything else -> None."""
    try:
        first, last = (int(p) for p in (text or "").split("-"))
    except ValueError:
        return None
    return (first, last) if 0 <= first <= last else None


@dataclass(frozen=True)
class CompactionStep:
    """What the Guide's compaction step compacts, and what it finds, in the session's own figures."""

    source: LoadedSession  # the session compacted: the one open, or the demo continued
    pruned: Any  # pruner's PruneResult of ``source`` with step 4's settings (what compaction starts from)
    step4_tokens: int  # tokens sent after pass 3 (kept messages plus placeholders)
    placeholder_tokens: int  # of those, the placeholders for pruned tool results
    recorded_messages: int  # messages a compaction the session records had already replaced
    recorded_tokens: int  # their tokens: step 4 sends the recorded summary instead
    result: Any  # pruner.compaction.CompactionResult
    short: Any = None  # the demo alone compacted, when ``source`` is the demo continued
    replaced: tuple[int, ...] = ()  # positions in ``pruned.kept`` the summary replaces
    earlier: tuple[int, ...] = ()  # positions in ``pruned.kept`` a recorded compaction had already replaced

    @property
    def continued(self) -> bool:
        return self.short is not None


def compaction_step(loaded: LoadedSession) -> CompactionStep:
    """Step 5: the pruned session (or, on the default demo, the demo continued) compacted offline.

    The keep-recent budget is set from the context compaction starts from (after any recorded compaction),
    so a session that already compacted keeps about a third of what is left, not of what it once sent.
    """
    if guide_demo.is_demo(loaded):
        short = _compact(loaded)
        return replace(_compact(guide_demo.continued(loaded)), short=short.result)
    return _compact(loaded)


def _compact(loaded: LoadedSession) -> CompactionStep:
    config = STEPS[3][1]
    assert config is not None
    pruned = analysis.analyse(loaded, config).result
    plan = plan_compaction(pruned.kept, CompactionSettings(encoding=config.encoding), force=True, use_usage=False)
    start = plan.tokens(plan.window.context())
    preview = compaction_logic.default_settings(start)
    result = cache.memoised("guide_compaction", (loaded.key, preview), lambda: compact(
        pruned.kept, preview.library(config.encoding), force=True, use_usage=False))
    # the cut with the step's budget (the plan above only measured where compaction starts)
    cut = plan_compaction(pruned.kept, preview.library(config.encoding), force=True, use_usage=False)
    replaced = plan.window.already_compacted
    recorded_tokens = sum(message_tokens(pruned.kept.messages[i], analysis.token_counter(config.encoding))
                          for i in replaced)
    return CompactionStep(source=loaded, pruned=pruned, step4_tokens=pruned.stats.tokens_after,
                          placeholder_tokens=pruned.stats.placeholder_tokens, recorded_messages=len(replaced),
                          recorded_tokens=recorded_tokens, result=result,
                          replaced=cut.to_summarize + cut.turn_prefix if result.compacted_any else (),
                          earlier=replaced)


def compaction_notes(step: CompactionStep) -> list[str]:
    """Why step 5 compacts what it does, why its figures differ from step 4's, and what it does to the cache."""
    r, parts = step.result, []
    if step.short is not None:
        parts.append(
            "The demo alone is too short to compact: a summary that keeps its facts, with its headings, is as long "
            f"as it is ({step.short.tokens_before:,} → {step.short.tokens_after:,} tokens). So this step compacts the "
            f"same chat continued for six more turns ({len(step.source.session.messages):,} messages, "
            f"{step.step4_tokens:,} tokens after the passes).")
    gap = step.step4_tokens - r.tokens_before
    if gap:
        causes = []
        if step.recorded_messages:
            causes.append(
                f"the session already compacted: the {step.recorded_messages:,} messages its recorded compaction "
                f"replaced ({step.recorded_tokens:,} tokens) are no longer in the context, so compaction starts "
                "after that summary")
        if step.placeholder_tokens:
            causes.append(f"the {step.placeholder_tokens:,} tokens of placeholders for pruned tool results are "
                          "added only when the conversation is sent")
        if causes:
            parts.append(f"It starts from {r.tokens_before:,} tokens, not step 4's {step.step4_tokens:,}: "
                         + "; and ".join(causes) + ".")
    if not r.compacted_any:
        parts.append(f"Nothing is compacted: {r.cut_reason}.")
        return parts
    cache = ("**Why compaction breaks the prompt cache**: a provider reads the unchanged start of a prompt from its "
             "cache at a fraction of the price (a tenth with Anthropic). The summary changes the prompt right after "
             f"the system prompt, so the {r.cache_invalidated_tokens:,} tokens of the previous prompt after it are "
             "processed again, once, at full price.")
    if r.tokens_saved > 0:
        requests = -(-r.cache_invalidated_tokens // r.tokens_saved)
        cache += (f" Saving {r.tokens_saved:,} tokens on every later request, it evens out after about "
                  f"{requests:,} request{'s' if requests != 1 else ''} (more where cached tokens cost less): that is "
                  "why agents compact only when the context nears the model's window.")
    else:
        cache += (f" Here it saves nothing ({r.tokens_before:,} → {r.tokens_after:,} tokens), so that cost is never "
                  "paid back.")
    parts.append(cache)
    return parts
