"""The generator's world model, and the ground truth it yields.

Every message *carries* items of information, each at a version:

* ``chunk:<id>`` a retrieved document chunk (a sub-chunk carries only part of it);
* ``call:<tool>(<args>)`` what a tool call returned (a re-run with changed data is a new version);
* ``file:<path>`` a file's content (an edit or write makes a new version);
* ``fact:<key>`` a fact someone stated or a tool result defined (a restatement is a new version);
* ``ack:<call id>`` the acknowledgement of a write or edit.

A fact is *used* when a later message refers to it (with a ``REF:key`` tag or in
a paraphrase); every other item is used by the reply of the turn it appears in.
An assistant reply that uses a fact writes its value, so it also carries a copy of
the fact's current version (the generator records it).
A context message (tool result or retrieved document) is **required** when it
carries the last copy of the final version of a used item that no dialogue
message carries; otherwise everything it carries is superseded (an older
version) or duplicated (another copy), and it is **redundant**. The system
prompt and the user/assistant dialogue are required. This module knows nothing
about pruning rules: the labels follow from the world alone.

>>> w = World()
>>> _ = w.add("user", carries=[("fact:fmt", w.bump("fact:fmt"))])
>>> _ = w.add("tool", carries=[("chunk:a", w.bump("chunk:a"))])
>>> _ = w.add("tool", carries=[("chunk:a", 1)])
>>> _ = w.add("user", uses=["fmt"])
>>> w.labels()
[True, False, True, True]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DIALOGUE_ROLES = ("system", "user", "assistant")


@dataclass
class MessageTruth:
    role: str
    carries: list[tuple[str, int]] = field(default_factory=list)  # full copies (item, version)
    partial: list[tuple[str, int]] = field(default_factory=list)  # part of an item (a sub-chunk)
    uses: list[str] = field(default_factory=list)  # fact keys referred to with a REF: tag
    untagged_uses: list[str] = field(default_factory=list)  # fact keys referred to in a paraphrase
    variant: str | None = None  # how a re-retrieved chunk differs from the original
    # What a tool call copies from the context, (item, lowest version): ``line:<path>:<i>``, line i of a
    # file as it reads from that version on (an edit's old line, each line a write keeps), shown by the
    # messages carrying ``file:<path>`` at that version or later and by the edit that wrote the line
    # (``sets``); ``args:<item>``, the call's arguments, shown by any message carrying the item and by
    # the calls that made one (a re-run, a re-read path, the id of a document shown before). Third: the
    # text copied (metadata ``copied``, beside ``copies``): a compaction summary quoting it still shows it.
    copies: list[tuple[str, int, str]] = field(default_factory=list)
    sets: list[tuple[str, int]] = field(default_factory=list)  # the file line an edit writes (its args show it)

    def as_metadata(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.carries:
            d["carries"] = [f"{item}@{v}" for item, v in self.carries]
        if self.partial:
            d["partial"] = [f"{item}@{v}" for item, v in self.partial]
        if self.uses:
            d["uses"] = list(self.uses)
        if self.untagged_uses:
            d["untagged_uses"] = list(self.untagged_uses)
        if self.variant:
            d["variant"] = self.variant
        if self.copies:
            d["copies"] = [f"{item}@{v}" for item, v, _ in self.copies]
            d["copied"] = [text for _, _, text in self.copies]
        if self.sets:
            d["sets"] = [f"{item}@{v}" for item, v in self.sets]
        return d


class World:
    """Item versions plus what each emitted message carries and uses, in order."""

    def __init__(self) -> None:
        self.version: dict[str, int] = {}
        self.messages: list[MessageTruth] = []

    def bump(self, item: str) -> int:
        """Start the next version of ``item`` (1 for a new item) and return it."""
        v = self.version.get(item, 0) + 1
        self.version[item] = v
        return v

    def current(self, item: str) -> int:
        return self.version[item]

    def add(self, role: str, **truth: Any) -> MessageTruth:
        t = MessageTruth(role=role, **truth)
        self.messages.append(t)
        return t

    def used_facts(self) -> dict[str, None]:
        used: dict[str, None] = {}
        for t in self.messages:
            for k in t.uses + t.untagged_uses:
                used[k] = None
        return used

    def labels(self) -> list[bool]:
        """``required`` for every message, from the world alone (see the module docstring)."""
        return self.ground_truth()[0]

    def ground_truth(self) -> tuple[list[bool], list[list[tuple[str, int]]]]:
        """``(required, live)``: the labels, and per message the *live* copies it carries.

        A copy is live when it is the final version of a used item that no dialogue
        message carries: a safe pruner must keep at least one live copy of each such
        item. The required message for an item is the one with its last live copy.
        """
        used = self.used_facts()
        final = self.version
        covered_by_dialogue: dict[tuple[str, int], None] = {}
        live: list[list[tuple[str, int]]] = [[] for _ in self.messages]
        last_copy: dict[str, int] = {}
        for i, t in enumerate(self.messages):
            for item, v in t.carries:
                if v != final.get(item, v):
                    continue  # an older version: superseded
                if item.startswith("fact:") and item[5:] not in used:
                    continue  # nobody ever needs this fact
                if t.role in DIALOGUE_ROLES:
                    covered_by_dialogue[(item, v)] = None
                else:
                    live[i].append((item, v))
                    last_copy[item] = i  # later copies replace earlier ones: the last is required
        required = [t.role in DIALOGUE_ROLES for t in self.messages]
        for item, i in last_copy.items():
            if (item, final.get(item, 1)) not in covered_by_dialogue:
                required[i] = True
        live = [[c for c in copies if c not in covered_by_dialogue] for copies in live]
        return required, live

    def fact_summary(self) -> dict[str, dict[str, Any]]:
        """Per fact: final version, where it came from, and how often it is referred to."""
        facts: dict[str, dict[str, Any]] = {}
        for t in self.messages:
            for item, v in t.carries:
                if item.startswith("fact:"):
                    f = facts.setdefault(item[5:], {"final_version": 0, "source": t.role,
                                                    "tagged_refs": 0, "untagged_refs": 0})
                    f["final_version"] = max(f["final_version"], v)
        for t in self.messages:
            for k in t.uses:
                if k in facts:
                    facts[k]["tagged_refs"] += 1
            for k in t.untagged_uses:
                if k in facts:
                    facts[k]["untagged_refs"] += 1
        return facts
