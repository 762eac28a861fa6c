"""The guide's logic: the session it steps through (or a window of its turns), the steps, and what
each step's numbers mean next to the previous one's."""

from __future__ import annotations

from dataclasses import replace

from pruner import PruneConfig

from ..loading import LoadedSession

#: Sessions longer than this many turns are guided through a window of at most this many.
MAX_TURNS = 30
#: The guide's own URL parameters: the step (1-based) and the window (``first-last``).
PAGE_KEYS = ("step", "window")

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
     "pruned session, keeping about its newest third."),
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
    return replace(loaded, key=f"{loaded.key}:turns{first}-{last}", label=f"{loaded.label}, turns {first}–{last}",
                   session=loaded.session.with_messages(messages))


def parse_window(text: str | None) -> tuple[int, int] | None:
    """``"12-41"`` -> (12, 41); anything else -> None."""
    try:
        first, last = (int(p) for p in (text or "").split("-"))
    except ValueError:
        return None
    return (first, last) if 0 <= first <= last else None


def compaction_note(step4_tokens: int, placeholder_tokens: int, result) -> str:
    """Why step 5's numbers differ from step 4's, and when compaction pays, in this session's figures."""
    parts = []
    if result.tokens_before != step4_tokens:
        parts.append(
            f"Compaction starts from {result.tokens_before:,} tokens, not the {step4_tokens:,} sent at step 4: it "
            f"works on the kept messages, and the {placeholder_tokens:,} tokens of placeholders that stand in "
            "for pruned tool results are only added when the conversation is sent.")
    if result.compacted_any and result.tokens_saved > 0:
        requests = -(-result.cache_invalidated_tokens // result.tokens_saved)
        parts.append(
            f"It saves {result.tokens_saved:,} tokens on every later request, but the provider's prompt cache "
            f"must process {result.cache_invalidated_tokens:,} tokens again once (everything after the unchanged "
            f"prefix), so it evens out after about {requests:,} request{'s' if requests != 1 else ''} (more where "
            "cached tokens cost less than new ones). That is why compaction waits until the context nears the "
            "model's window.")
    return " ".join(parts)
