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

from ..analysis.config import DEFAULT_NEAR_DUPLICATE_THRESHOLD, ORPHAN_POLICIES, PruneConfig  # noqa: F401  (public here)
from ..analysis.index import SessionIndex, build_index, index_for
from .payoff import pays
from .result import PruneResult, PruneStats, finish  # noqa: F401  (PruneResult, PruneStats: public here)
from .rounds import family_of, settled
from ..model import Message, Session, canonical_json, is_validated, validate_session
from ..rules import REMOVAL_STAGES, Removal, Rule, rules_for
from ..tokens import HeuristicCounter, TokenCounter, get_counter


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
