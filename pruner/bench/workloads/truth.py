"""Read the ground truth back from a generated session (it travels in message metadata).

The benchmark uses this to check pruned, truncated and oracle sessions against
the world model: which facts are referred to, with or without a tag, and which
messages carry each fact's final value.

>>> from pruner.bench.workloads import generate
>>> s = generate("plain_chat", turns=50, seed=0)
>>> truth = session_truth(s)
>>> lost = missing_facts(truth, [m.id for m in oracle_messages(s)])
>>> lost.tagged, lost.untagged
((), ())
>>> lost_items(truth, [m.id for m in oracle_messages(s)])
()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ...model import Message, Session
from .world import DIALOGUE_ROLES


@dataclass(frozen=True)
class FactTruth:
    key: str
    final_version: int
    tagged_refs: int  # messages referring to it with a REF: tag
    untagged_refs: int  # messages referring to it in a paraphrase
    carriers: tuple[str, ...]  # ids of the messages carrying its final value


@dataclass(frozen=True)
class SessionTruth:
    facts: dict[str, FactTruth]
    required: tuple[str, ...]  # ids labelled required
    live: dict[str, tuple[str, ...]]  # item -> ids of the messages carrying a live copy of it

    @property
    def tagged(self) -> tuple[str, ...]:
        """Facts at least one message refers to with a tag: a deterministic pruner can see these."""
        return tuple(k for k, f in self.facts.items() if f.tagged_refs)

    @property
    def untagged_only(self) -> tuple[str, ...]:
        """Facts referred to only in paraphrase: no deterministic pass can see these."""
        return tuple(k for k, f in self.facts.items() if f.untagged_refs and not f.tagged_refs)


@dataclass(frozen=True)
class LostFacts:
    tagged: tuple[str, ...]
    untagged: tuple[str, ...]


def _split(entry: str) -> tuple[str, int]:
    item, _, version = entry.rpartition("@")
    return item, int(version)


def session_truth(session: Session) -> SessionTruth:
    """The facts, labels and live copies recorded in a generated session's message metadata."""
    versions: dict[str, list[tuple[int, str]]] = {}
    tagged: dict[str, int] = {}
    untagged: dict[str, int] = {}
    live: dict[str, list[str]] = {}
    for m in session.messages:
        md = m.metadata or {}
        for entry in md.get("live", ()):
            live.setdefault(_split(entry)[0], []).append(m.id)
        for entry in md.get("carries", ()):
            item, v = _split(entry)
            if item.startswith("fact:"):
                versions.setdefault(item[5:], []).append((v, m.id))
        for k in md.get("uses", ()):
            tagged[k] = tagged.get(k, 0) + 1
        for k in md.get("untagged_uses", ()):
            untagged[k] = untagged.get(k, 0) + 1
    facts = {}
    for key, copies in versions.items():
        final = max(v for v, _ in copies)
        facts[key] = FactTruth(key, final, tagged.get(key, 0), untagged.get(key, 0),
                               tuple(mid for v, mid in copies if v == final))
    return SessionTruth(facts=facts, required=tuple(m.id for m in session.messages if m.required),
                        live={k: tuple(v) for k, v in live.items()})


def missing_facts(truth: SessionTruth, kept_ids: Iterable[str]) -> LostFacts:
    """Referred-to facts whose final value no kept message carries."""
    kept = dict.fromkeys(kept_ids)
    def lost(keys: Iterable[str]) -> tuple[str, ...]:
        return tuple(k for k in keys if not any(c in kept for c in truth.facts[k].carriers))
    return LostFacts(tagged=lost(truth.tagged), untagged=lost(truth.untagged_only))


def lost_items(truth: SessionTruth, kept_ids: Iterable[str]) -> tuple[str, ...]:
    """Live items (see ``pruner.bench.workloads.world``) of which no kept message has a copy."""
    kept = dict.fromkeys(kept_ids)
    return tuple(item for item, ids in truth.live.items() if not any(i in kept for i in ids))


def oracle_messages(session: Session) -> tuple[Message, ...]:
    """What the oracle keeps: the required messages, the dialogue and the system prompt."""
    return tuple(m for m in session.messages if m.required or m.role in DIALOGUE_ROLES)
