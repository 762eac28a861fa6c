"""Run the three passes and explain every decision.

>>> from pruner import Message, Session, ToolCall, prune
>>> call = lambda cid: Message(id="a" + cid, role="assistant", content="",
...     tool_calls=(ToolCall(id=cid, name="search", arguments={"q": "refunds"}),))
>>> policy = ("Refunds are accepted within 30 days of purchase, with the original receipt, at any of our "
...     "stores or by post to the returns desk.")  # longer than its placeholder, so removing it pays
>>> s = Session.of([Message(id="u1", role="user", content="refund policy?"),
...     call("c1"), Message(id="r1", role="tool", content=policy, tool_call_id="c1"),
...     Message(id="u2", role="user", content="again please"),
...     call("c2"), Message(id="r2", role="tool", content=policy, tool_call_id="c2")])
>>> result = prune(s)
>>> [(d.id, d.status, d.rule) for d in result.decisions if d.status != "kept"]
[('r1', 'expired', 'superseded_call')]
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from typing import Iterator
from dataclasses import dataclass

from .fileops import DEFAULT_FILE_TOOLS, FileTools
from .index import SessionIndex, build_index, index_for
from .payoff import pays
from .result import PruneResult, PruneStats, finish  # noqa: F401  (PruneResult, PruneStats: public here)
from .rounds import family_of, settled
from ..errors import ConfigurationError
from ..model import Message, Session, canonical_json, is_validated, validate_session
from ..rules import REMOVAL_STAGES, Removal, Rule, rules_for
from ..setting_fields import setting
from ..tokens import DEFAULT_ENCODING, ENCODINGS, HeuristicCounter, TokenCounter, get_counter

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

    expire: bool = setting(True, label="Pass 1: expire superseded, stale and timed-out messages",
                           help="pass 1: expire superseded, stale and timed-out messages",
                           flag_help="switch off pass 1 (expired context)")
    deduplicate: bool = setting(True, label="Pass 2: remove exact and near duplicates", flag="--no-dedupe",
                                help="pass 2: remove exact and near duplicates",
                                flag_help="switch off pass 2 (duplicate context)")
    restore: bool = setting(True, label="Pass 3: restore what kept messages depend on",
                            help="pass 3: restore what kept messages depend on",
                            flag_help="switch off pass 3 (dependency restoration)")
    disabled_rules: frozenset[str] = frozenset()
    near_duplicate_threshold: float = setting(DEFAULT_NEAR_DUPLICATE_THRESHOLD, label="Near-duplicate threshold",
                                              help="share of a text's word 3-grams already in one kept text",
                                              metavar="X")
    file_tools: FileTools = DEFAULT_FILE_TOOLS
    orphan_policy: str = setting("placeholder", label="Orphaned calls", choices=ORPHAN_POLICIES,
                                 help="what the export sends for a kept call whose result was pruned")
    encoding: str = setting(DEFAULT_ENCODING, label="Token counter encoding", choices=ENCODINGS,
                            help="tiktoken encoding")

    def __post_init__(self) -> None:
        threshold = self.near_duplicate_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise ConfigurationError(f"near_duplicate_threshold is {threshold!r}; it must be a number in (0, 1]",
                                     setting="near_duplicate_threshold")
        if self.orphan_policy not in ORPHAN_POLICIES:
            raise ConfigurationError(f"orphan_policy is {self.orphan_policy!r}; "
                                     f"expected one of {', '.join(ORPHAN_POLICIES)}", setting="orphan_policy")
        object.__setattr__(self, "disabled_rules", frozenset(self.disabled_rules))

    def stage_on(self, stage: str) -> bool:
        return {"expired": self.expire, "duplicate": self.deduplicate, "restored": self.restore}[stage]

    def family_on(self, family: Rule) -> bool:
        """A rule family runs when its stage is on and neither it nor a name it emits is disabled."""
        off = self.disabled_rules
        return self.stage_on(family.stage) and family.name not in off and not (
            family.stage == "restored" and off.intersection(family.emits))


def message_tokens(m: Message, counter: TokenCounter | HeuristicCounter) -> int:
    """Tokens of a message's content and of its tool calls' names and arguments."""
    n = counter.count(m.content)
    for c in m.tool_calls:
        n += counter.count(c.name) + counter.count(
            c.arguments if isinstance(c.arguments, str) else canonical_json(c.arguments))
    return n


def run_passes(index: SessionIndex, config: PruneConfig
               ) -> tuple[bytearray, dict[int, tuple[str, Removal]], list[Removal], dict[int, Removal]]:
    """One round of the three passes: ``(alive, removals, restorations, held)``, positions in ``index``.

    ``held``: the messages kept because a rule's removal would not have paid for its placeholder
    (``pruner.engine.payoff``), each with the first such removal; a later rule may still remove one.
    """
    alive = bytearray(b"\x01") * len(index.messages)
    removals: dict[int, tuple[str, Removal]] = {}  # position -> (status, removal)
    held: dict[int, Removal] = {}
    for stage in REMOVAL_STAGES:
        for family in rules_for(stage):
            if not config.family_on(family):
                continue
            status = family.status
            for r in family.apply(index, alive, config):
                if not alive[r.index]:
                    continue
                if not pays(index, r, config):
                    held.setdefault(r.index, r)
                    continue
                alive[r.index] = 0
                removals[r.index] = (status, r)
                held.pop(r.index, None)
    restorations: list[Removal] = []
    for family in rules_for("restored"):
        if config.family_on(family):
            restorations += family.apply(index, alive, config)
    for r in restorations:
        alive[r.index] = 1
    return alive, removals, restorations, held


@contextmanager
def collector_paused() -> Iterator[None]:
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
    Raises ``InvalidSessionError`` (naming message and field) on invalid input. A
    session is checked once: one that was validated before (every loader validates
    what it reads) is not checked again.
    """
    config = config or PruneConfig()
    if validate and not is_validated(session):
        validate_session(session)
    counter = get_counter(config.encoding)  # load the tokenizer before the clock starts
    with collector_paused():
        start = time.perf_counter()
        index = index_for(session, config.file_tools)
        return _prune(session, index, config, counter, start)


def _prune(session: Session, index: SessionIndex, config: PruneConfig, counter: TokenCounter | HeuristicCounter,
           start: float) -> PruneResult:
    final: dict[int, tuple[str, Removal]] = {}
    ever_restored: dict[int, Removal] = {}
    first_removal: dict[int, str] = {}
    rounds = 1
    alive, removals, restorations, held = run_passes(index, config)
    # Without restorations the kept set is already a fixpoint; with them, a restored message can
    # change what the passes see: prune the kept set again unless pruner.engine.rounds shows that
    # would change nothing.
    for i, (status, r) in removals.items():
        first_removal[i] = r.rule
        if not alive[i]:
            final[i] = (status, r)
    for r in restorations:
        ever_restored.setdefault(r.index, r)
    if restorations and 0 in alive and not _settled(index, alive, removals, restorations):
        alive, rounds = _more_rounds(index, alive, config, final, ever_restored, first_removal, held)
    return finish(session, index, alive, final, ever_restored, first_removal, config, counter, rounds, start,
                  held=held)


def _settled(index: SessionIndex, alive: bytearray, removals: dict[int, tuple[str, Removal]],
             restorations: list[Removal]) -> bool:
    families: dict[str, Rule | None] = {}

    def removed_by(i: int) -> Rule | None:
        rule = removals[i][1].rule
        if rule not in families:
            families[rule] = family_of(rule)
        return families[rule]
    return settled(index, [r.index for r in restorations], kept=alive.__getitem__, removed_by=removed_by)


def _more_rounds(index: SessionIndex, alive: bytearray, config: PruneConfig, final: dict[int, tuple[str, Removal]],
                 ever_restored: dict[int, Removal], first_removal: dict[int, str],
                 held: dict[int, Removal]) -> tuple[bytearray, int]:
    """Prune the kept set again (as a session of its own) until a round changes nothing."""
    msgs = index.messages
    current = [i for i in range(len(msgs)) if alive[i]]
    rounds = 1
    while True:
        rounds += 1
        sub = build_index([msgs[i] for i in current], config.file_tools)
        sub_alive, removals, restorations, sub_held = run_passes(sub, config)
        for li, r in sub_held.items():
            held.setdefault(current[li], _to_original(r, current))
        for li, (status, r) in removals.items():
            first_removal.setdefault(current[li], r.rule)
            if not sub_alive[li]:
                final[current[li]] = (status, _to_original(r, current))
        for r in restorations:
            ever_restored.setdefault(current[r.index], _to_original(r, current))
        survivors = [current[li] for li in range(len(current)) if sub_alive[li]]
        done = (not restorations or len(survivors) == len(current)
                or _settled(sub, sub_alive, removals, restorations))
        current = survivors
        if done:
            break
    alive = bytearray(len(msgs))
    for i in current:
        alive[i] = 1
    return alive, rounds


def _to_original(r: Removal, current: list[int]) -> Removal:
    return r._replace(index=current[r.index], related=None if r.related is None else current[r.related])
