"""The online policies' decisions seed the hindsight bound's search, and the bound does not depend on which
strategies a replay was asked for (issue 30)."""

from __future__ import annotations

import pytest

from pruner.formats import load_session
from pruner.replay import replay
from pruner.replay.limit import compute_limits, replay_plan
from tests.support.paths import ROOT

SAMPLE = ROOT / "sample_sessions" / "workload-tool_agent-200.jsonl"


def _switches_and_drops(run) -> dict[int, str]:
    """A policy's run read as a schedule: a request where it switched to the pruner's context (a prune event
    other than the free drop on arrival, which the strategy names ``FREE_DROP``) is ``prune``, every other
    ``drop``. Priced below by a fresh replay, which must bill what the policy was billed."""
    from pruner.replay.strategies.cache_aware_prune import FREE_DROP

    return {row.request: "prune" if any(e.kind == "prune" and e.detail != FREE_DROP for e in row.events) else "drop"
            for row in run.rows}


@pytest.mark.slow
def test_the_bound_is_at_most_cache_aware_prune_on_the_tool_agent_sample():
    """At 200 turns the beam said $3.63 while cache_aware_prune, whose decisions are drops on arrival and one
    switch (all actions of the prune family), cost $3.50: the search never tried what the policy did. Its
    decisions now seed the search, so the bound is at most that schedule's price.

    Regression."""
    session = load_session(SAMPLE)
    r = replay(session, ["as_recorded", "full", "cache_aware_prune"], snapshots=False)
    run = r.runs["cache_aware_prune"]
    assert run.totals["truncations"] == 0  # the policy did only what the family can
    plan = _switches_and_drops(run)
    priced = replay_plan(session, plan, settings=r.settings, prices=r.price_table).totals["dollars"]
    assert priced == pytest.approx(run.totals["dollars"], rel=0.01)  # the reading is the policy's
    limits = compute_limits(r, families=["prune"])
    assert limits.families["prune"].dollars <= priced + 1e-6
    assert limits.families["prune"].dollars <= run.totals["dollars"] + 1e-6


def test_the_bound_is_the_same_whichever_strategies_the_replay_ran():
    from pruner.bench.workloads import generate

    session = generate("tool_agent", turns=12, seed=2)
    few = compute_limits(replay(session, ["full"], snapshots=False))
    every = compute_limits(replay(session, snapshots=False))
    assert {n: (f.dollars, f.lower_bound, f.schedule) for n, f in few.families.items()} == \
        {n: (f.dollars, f.lower_bound, f.schedule) for n, f in every.families.items()}
