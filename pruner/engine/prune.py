"""Run the three passes and explain every decision.

>>> from pruner import Message, Session, ToolCall, prune
>>> call = lambda cid: Message(id="a" + cid, role="assistant", content="",
...     tool_calls=(ToolCall(id=cid, name="search", arguments={"q": "refunds"}),))
>>> s = Session.of([Message(id="u1", role="user", content="refund policy?"),
...     call("c1"), Message(id="r1", role="tool", content="30 days", tool_call_id="c1"),
...     Message(id="u2", role="user", content="again please"),
...     call("c2"), Message(id="r2", role="tool", content="30 days", tool_call_id="c2")])
>>> result = prune(s)
>>> [(d.id, d.status, d.rule) for d in result.decisions if d.status != "kept"]
[('r1', 'expired', 'superseded_call')]
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Mapping

from .index import build_index
from .placeholders import placeholder_text
from .fileops import DEFAULT_FILE_TOOLS, FileTools
from ..errors import ConfigurationError
from ..model import STATUSES, Decision, Message, Session, canonical_json, validate_session
from ..rules import STAGES, Removal, explain, rules_for
from .rounds import full_session_lookups, settled
from ..rules.dependencies import restore_dependencies
from ..tokens import DEFAULT_ENCODING, get_counter

ORPHAN_POLICIES = ("placeholder", "drop_pair")
DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.8


@dataclass(frozen=True, kw_only=True)
class PruneConfig:
    """Settings for ``prune``. Every field is keyword-only and has a sensible default.

    ``expire``, ``deduplicate`` and ``restore`` switch the three passes;
    ``disabled_rules`` switches single rules off by name (see ``pruner.rules.RULES``).
    ``near_duplicate_threshold`` is the share of a text's word 3-grams that must
    already appear in one earlier kept text for it to count as a near-duplicate.
    ``orphan_policy`` says what the export sends for a kept tool call whose
    result was pruned: a short ``placeholder`` naming the newer result, or
    ``drop_pair``: drop the call too when its assistant message holds nothing else.
    """

    expire: bool = True
    deduplicate: bool = True
    restore: bool = True
    disabled_rules: frozenset[str] = frozenset()
    near_duplicate_threshold: float = DEFAULT_NEAR_DUPLICATE_THRESHOLD
    file_tools: FileTools = DEFAULT_FILE_TOOLS
    orphan_policy: str = "placeholder"
    encoding: str = DEFAULT_ENCODING

    def __post_init__(self):
        threshold = self.near_duplicate_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise ConfigurationError(f"near_duplicate_threshold is {threshold!r}; it must be a number in (0, 1]")
        if self.orphan_policy not in ORPHAN_POLICIES:
            raise ConfigurationError(f"orphan_policy is {self.orphan_policy!r}; "
                                     f"expected one of {', '.join(ORPHAN_POLICIES)}")
        object.__setattr__(self, "disabled_rules", frozenset(self.disabled_rules))


@dataclass(frozen=True)
class PruneStats:
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int  # kept messages plus the placeholders the export sends
    placeholder_tokens: int
    by_status: Mapping[str, int]
    by_rule: Mapping[str, int]
    counter: str  # which token counter produced the numbers
    elapsed_ms: float  # the passes only
    rounds: int  # passes are re-run on the kept set until it no longer changes

    @property
    def reduction(self) -> float:
        """Share of tokens removed (0..1)."""
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0


@dataclass(frozen=True)
class PruneResult:
    session: Session  # the input, unchanged
    kept: Session  # the kept messages, input order, content unchanged
    decisions: tuple[Decision, ...]  # one per input message, input order
    stats: PruneStats
    placeholders: Mapping[str, str] = field(default_factory=dict)  # call id -> placeholder text

    def decision(self, message_id: str) -> Decision:
        for d in self.decisions:
            if d.id == message_id:
                return d
        raise KeyError(message_id)

    def report(self) -> dict:
        """The JSON-ready report: totals, counter, and every decision."""
        s = self.stats
        return {
            "session": self.session.name, "source_format": self.session.source_format,
            "messages_before": s.messages_before, "messages_after": s.messages_after,
            "tokens_before": s.tokens_before, "tokens_after": s.tokens_after,
            "placeholder_tokens": s.placeholder_tokens, "reduction_pct": round(100 * s.reduction, 2),
            "encoding": s.counter, "elapsed_ms": round(s.elapsed_ms, 3), "rounds": s.rounds,
            "by_status": dict(s.by_status), "by_rule": dict(s.by_rule),
            "decisions": [d.as_dict() for d in self.decisions],
        }


def message_tokens(m: Message, counter) -> int:
    """Tokens of a message's content and of its tool calls' names and arguments."""
    n = counter.count(m.content)
    for c in m.tool_calls:
        n += counter.count(c.name) + counter.count(
            c.arguments if isinstance(c.arguments, str) else canonical_json(c.arguments))
    return n


def _run_passes(messages: list[Message], config: PruneConfig):
    """One round of the three passes over ``messages`` (local indices)."""
    index = build_index(messages, config.file_tools)
    alive = [True] * len(messages)
    removals: dict[int, tuple[str, Removal]] = {}  # local index -> (status, removal)
    stages = [s for s, on in (("expired", config.expire), ("duplicate", config.deduplicate)) if on]
    for stage in stages:
        for rule in rules_for(stage):
            if rule.name in config.disabled_rules:
                continue
            for r in rule.apply(index, alive, config):
                if alive[r.index]:
                    alive[r.index] = False
                    removals[r.index] = (STAGES[stage], r)
    restorations: list[Removal] = []
    if config.restore and "dependency" not in config.disabled_rules:
        restorations = restore_dependencies(index, alive)
        for r in restorations:
            alive[r.index] = True
    return index, alive, removals, restorations


def _settled(index, alive: list[bool], removals: dict, restorations: list[Removal]) -> bool:
    later_results, later_invalidators = full_session_lookups(index)
    return settled(index, [r.index for r in restorations], kept=alive.__getitem__,
                   removed_by_pass1=lambda i: removals[i][0] == "expired",
                   later_results=later_results, later_invalidators=later_invalidators)


def _to_original(r: Removal, current: list[int]) -> Removal:
    return replace(r, index=current[r.index], related=None if r.related is None else current[r.related])


def _settle_orphans(msgs: list[Message], alive: list[bool], final: dict[int, tuple[str, Removal]],
                    policy: str) -> dict[str, str]:
    """Placeholders for kept calls whose results were removed (``drop_pair`` first drops
    assistant messages that held nothing but such calls). Updates ``alive`` and ``final``."""
    call_owner = {c.id: i for i, m in enumerate(msgs) for c in m.tool_calls}
    orphaned: dict[int, list[int]] = {}  # assistant index -> its removed results
    for i, m in enumerate(msgs):
        if not alive[i] and m.tool_call_id is not None:
            owner = call_owner.get(m.tool_call_id)
            if owner is not None and alive[owner]:
                orphaned.setdefault(owner, []).append(i)
    if policy == "drop_pair":
        answered = {m.tool_call_id for m, a in zip(msgs, alive) if a and m.tool_call_id}
        for owner, results in orphaned.items():
            a = msgs[owner]
            if not a.content.strip() and not a.defines and not any(c.id in answered for c in a.tool_calls):
                alive[owner] = False
                final[owner] = (final[results[0]][0],
                                Removal(owner, "tool_pair", results[0], ("dropped_with_results",)))
    placeholders: dict[str, str] = {}
    for owner, results in orphaned.items():
        if alive[owner]:
            for i in results:
                status, r = final[i]
                related = msgs[r.related] if r.related is not None else None
                placeholders[msgs[i].tool_call_id] = placeholder_text(status, r.rule, related, msgs[i])
    return placeholders


@contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector for the duration.

    Pruning allocates many small, acyclic objects (dicts, lists, tuples). With a
    long conversation alive in memory, every full collection those allocations
    set off walks the whole conversation again, which made the passes grow
    faster than the input. Nothing made here forms a cycle, so nothing is lost.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def prune(session: Session, config: PruneConfig | None = None, *, validate: bool = True) -> PruneResult:
    """Prune ``session``; return the kept session, one decision per message, and stats.

    Pure: the input is never modified, and the same input gives the same output.
    Idempotent: pruning the kept session again keeps exactly the same messages.
    Raises ``InvalidSessionError`` (naming message and field) on invalid input.
    """
    config = config or PruneConfig()
    if validate:
        validate_session(session)
    get_counter(config.encoding)  # load the tokenizer before the clock starts
    with collector_paused():
        return _prune(session, config)


def _prune(session: Session, config: PruneConfig) -> PruneResult:
    msgs = list(session.messages)
    n = len(msgs)

    start = time.perf_counter()
    final: dict[int, tuple[str, Removal]] = {}
    ever_restored: dict[int, Removal] = {}
    first_removal: dict[int, str] = {}
    current = list(range(n))  # original indices of this round's input
    rounds = 0
    while True:
        rounds += 1
        index, alive, removals, restorations = _run_passes([msgs[i] for i in current], config)
        for li, (status, r) in removals.items():
            first_removal.setdefault(current[li], r.rule)
            if not alive[li]:
                final[current[li]] = (status, _to_original(r, current))
        for r in restorations:
            ever_restored.setdefault(current[r.index], _to_original(r, current))
        survivors = [current[li] for li in range(len(current)) if alive[li]]
        # Without restorations the kept set is already a fixpoint; with them, a restored
        # message can change what the passes see: prune the kept set again unless
        # pruner.engine.rounds shows that would change nothing.
        done = (not restorations or len(survivors) == len(current)
                or _settled(index, alive, removals, restorations))
        current = survivors
        if done:
            break
    alive_final = [False] * n
    for i in current:
        alive_final[i] = True
    return _finish(session, msgs, alive_final, final, ever_restored, first_removal, config, rounds, start)


def _finish(session: Session, msgs: list[Message], alive_final: list[bool],
            final: dict[int, tuple[str, Removal]], ever_restored: dict[int, Removal],
            first_removal: dict[int, str], config: PruneConfig, rounds: int, start: float) -> PruneResult:
    """Settle orphaned calls, then explain every decision and count tokens."""
    counter = get_counter(config.encoding)
    n = len(msgs)
    placeholders = _settle_orphans(msgs, alive_final, final, config.orphan_policy)
    elapsed_ms = (time.perf_counter() - start) * 1000

    decisions = []
    for i, m in enumerate(msgs):
        if alive_final[i]:
            r = ever_restored.get(i)
            if r is not None:
                reason = explain(r, msgs) + f" (it had been removed by {first_removal[i]})"
                decisions.append(Decision(m.id, "restored", r.rule, reason, msgs[r.related].id))
            else:
                decisions.append(Decision(m.id, "kept", "", "no pruning rule applies to it"))
        else:
            status, r = final[i]
            decisions.append(Decision(m.id, status, r.rule, explain(r, msgs),
                                      None if r.related is None else msgs[r.related].id))
    kept = session.with_messages(m for i, m in enumerate(msgs) if alive_final[i])

    tokens = [message_tokens(m, counter) for m in msgs]
    placeholder_tokens = sum(counter.count(t) for t in placeholders.values())
    by_status = {s: 0 for s in STATUSES}
    by_rule: dict[str, int] = {}
    for d in decisions:
        by_status[d.status] += 1
        if d.rule:
            by_rule[d.rule] = by_rule.get(d.rule, 0) + 1
    stats = PruneStats(
        messages_before=n, messages_after=len(kept.messages),
        tokens_before=sum(tokens),
        tokens_after=sum(t for t, a in zip(tokens, alive_final) if a) + placeholder_tokens,
        placeholder_tokens=placeholder_tokens, by_status=by_status,
        by_rule=dict(sorted(by_rule.items())), counter=counter.name, elapsed_ms=elapsed_ms, rounds=rounds)
    return PruneResult(session=session, kept=kept, decisions=tuple(decisions), stats=stats,
                       placeholders=placeholders)
