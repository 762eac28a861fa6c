"""The hindsight bound equals the brute-force optimum of its family on sessions of up to 12 requests
(issue 30), for every family the search covers: prune, compaction and combined.

``tests/unit/replay/test_replay_limit.py`` replays every schedule from scratch (``replay_plan``), which is
actions ** requests replays: 3 ** 12 = 531,441 for prune and 5 ** 12 = 244 million for combined, out
of reach. This brute force walks the same set of schedules as a tree, level by level: each node is
one schedule's first k requests, stepped once through the replay's lane and forked for each action
at request k+1, so a schedule's shared past is stepped once. It never merges two paths (that is what
the search does, and what is under test). It leaves out a child only when a sibling (same parent,
same request) reached exactly the same state: the same context sent on every chain, the same cache
entries, the same compaction, the same recall holders (every message's copies, placeholders,
departures), the same dollars and terms missing. Those two subtrees are identical, so the optimum is
unchanged; the key is stricter than the search's merge key (the holders are in it), so a merge that
loses a future would show here.

The tree's pricing (the lane forked per action) is checked against fresh replays: the optimum's
schedule and a stride of other leaves are replayed with ``replay_plan`` from scratch and must cost
what the tree says, with the same recall.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings as hsettings, target

from pruner.replay import replay
from pruner.replay.limit import compute_limits, replay_plan
from pruner.replay.limit.family import FAMILIES
from pruner.replay.limit.schedule import build, plan_lane
from pruner.replay.limit.search import MODELLED_ONLY, Choice, Fork, max_missing, used_counts
from pruner.replay.recall import RecallCollector
from pruner.replay.requests import find_requests
from tests.support.profile import profile
from tests.unit.replay.test_replay_limit import _prices, cases

#: Fresh replays of leaves per example, besides the optimum's (spread over the leaves in order).
CHECKED_LEAVES = 6


def _holder_state(h: Any) -> tuple[Any, ...]:
    return (tuple(h.sent), tuple(map(id, h.mirror)), tuple(sorted((k, v[2]) for k, v in h.extras.items())),
            tuple(sorted(h.subs.items())), tuple(sorted(h.left.items())),
            None if h.open is None else id(h.open), len(h.closed))


def _sibling_key(f: Fork) -> tuple[Any, ...]:
    holders = tuple((c, _holder_state(h)) for c, h in sorted(f.holders.items()))
    return (f.key(), holders, f.dollars, f.missing)


def tree_brute_force(session, settings, prices, family: str, min_recall: float):
    """Every schedule of ``family`` as a tree: (the cheapest leaf, every leaf) as (dollars, missing,
    plan), leaves feasible and within the terms the bar allows; ``None`` best when there is none."""
    _, requests, runner = build(session, settings, prices)
    allowed = max_missing(sum(used_counts(runner, requests)), min_recall)
    _, requests, runner = build(session, settings, prices)  # a fresh pruner feed
    choice = Choice()
    root = Fork(plan_lane(runner, choice, MODELLED_ONLY), RecallCollector(runner.session, requests, facts=False))
    actions = ("none", *FAMILIES[family].actions)
    level: list[tuple[Fork, tuple[tuple[int, str], ...]]] = [(root, ())]
    for req in requests:
        nxt = []
        for fork, plan in level:
            children = [fork] + [fork.clone() for _ in actions[1:]]  # cloned before any is stepped
            seen: set[tuple[Any, ...]] = set()
            for action, child in zip(actions, children):
                choice.value = action
                child.lane.request(req)
                row = child.lane.run.rows.pop()
                if row.rejected and not row.aborted:
                    continue  # over the window: the API refuses it
                child.missing += child.last_lost
                if child.missing > allowed:
                    continue
                child.dollars += row.dollars
                key = _sibling_key(child)
                if key in seen:
                    continue
                seen.add(key)
                nxt.append((child, plan + ((req.index, action),) if action != "none" else plan))
        level = nxt
    leaves = sorted((f.dollars, f.missing, plan) for f, plan in level)
    event(f"{len(leaves):,} distinct leaves" if len(leaves) < 100 else f"{10 ** (len(str(len(leaves))) - 1):,}+ leaves")
    return (leaves[0] if leaves else None), leaves


def _check(case, family: str) -> None:
    session, settings, min_recall = case
    prices = _prices()
    r = replay(session, ["as_recorded", "full"], settings=settings, prices=prices)
    limit = compute_limits(r, min_recall=min_recall, families=[family], max_states=10**9).families[family]
    best, leaves = tree_brute_force(session, settings, prices, family, min_recall)
    assert limit.exact and limit.approximation is None
    if best is None:
        assert limit.dollars is None and not limit.feasible
        return
    assert limit.dollars == pytest.approx(best[0], abs=1e-6), (limit, best)  # totals are rounded to 6 places
    # the tree's prices are the replay's: its optimum and a stride of leaves replayed from scratch
    stride = max(1, len(leaves) // CHECKED_LEAVES)
    for dollars, _missing, plan in [best, *leaves[::stride], leaves[-1]]:
        t = replay_plan(session, dict(plan), settings=settings, prices=prices).totals
        assert t["feasible"], plan
        assert t["dollars"] == pytest.approx(dollars, abs=1e-6), plan
        assert t["context_recall"] >= min_recall, (plan, t["context_recall"])


# The combined family's brute force is 5 actions a request (its two tests were 232 s of the serial run of
# 2026-12-07 at 10 examples each): CI runs 4 of each (derandomized, so the same 4 sessions every run,
# the nightly profile 50 random ones, as before); the prune and compaction families keep theirs.
COMBINED_CI = 4


def _examples(ci: int, nightly: int | None = None) -> hsettings:
    n = {"nightly": nightly or ci * 5, "ci": ci}.get(profile(), max(2, ci // 2))
    return hsettings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck))


def _long(case, least: int = 6) -> Any:
    """Sessions of ``least`` to 12 requests: shorter ones are the from-scratch brute force's."""
    n = len(find_requests(case[0]))
    assume(n >= least)
    event(f"{n} requests")
    target(float(n))  # toward the longest sessions the bound is asked to match
    return case


@_examples(30)
@given(cases(max_requests=12, max_turns=7))
@pytest.mark.slow
def test_prune_bound_equals_the_tree_brute_force_optimum_up_to_12_requests(case):
    _check(_long(case), "prune")


@_examples(15)
@given(cases(max_requests=12, max_turns=7))
@pytest.mark.slow
def test_compaction_bound_equals_the_tree_brute_force_optimum_up_to_12_requests(case):
    _check(_long(case), "compaction")


@_examples(COMBINED_CI, nightly=50)
@given(cases(max_requests=12, max_turns=7))
@pytest.mark.slow
def test_combined_bound_equals_the_tree_brute_force_optimum_up_to_12_requests(case):
    _check(_long(case), "combined")


#: Sessions of 9 to 12 requests, the top of the issue's range, drawn with more turns.
LONG = cases(max_requests=12, max_turns=8, min_turns=5)


@_examples(30)
@given(LONG)
@pytest.mark.slow
def test_prune_bound_equals_the_tree_brute_force_optimum_on_sessions_of_9_to_12_requests(case):
    _check(_long(case, 9), "prune")


@_examples(15)
@given(LONG)
@pytest.mark.slow
def test_compaction_bound_equals_the_tree_brute_force_optimum_on_sessions_of_9_to_12_requests(case):
    _check(_long(case, 9), "compaction")


@_examples(COMBINED_CI, nightly=50)
@given(LONG)
@pytest.mark.slow
def test_combined_bound_equals_the_tree_brute_force_optimum_on_sessions_of_9_to_12_requests(case):
    _check(_long(case, 9), "combined")
