"""The guide's steps: the same session pruned with one more pass switched on at each step."""

from __future__ import annotations

from pruner import PruneConfig

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
