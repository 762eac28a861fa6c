"""cache_aware_prune costs at most 1 % more than full on every workload size and every shipped real session.

The policy spends at most 0.5 % of what ``full`` has cost so far beyond what it
has already saved, so the bound holds at every request, not only at the end;
the tests check it at every request of each session (a generated session of N
turns is the first N turns of the longer one with the same seed, so one
2,000-turn replay covers every benchmark size).
"""

from __future__ import annotations

import json

import pytest

from pruner import load_session
from pruner.bench.workloads import SIZES, WORKLOADS, generate
from pruner.replay import replay
from tests.support.paths import SAMPLES

BOUND = 1.01


def worst_prefix(session) -> tuple[float, int, dict[str, float]]:
    """The largest cumulative cost ratio cache_aware_prune / full over every request, where, and the totals."""
    r = replay(session, ["full", "cache_aware_prune"], snapshots=False)
    full = aware = 0.0
    worst, at = 0.0, -1
    for f, a in zip(r.runs["full"].rows, r.runs["cache_aware_prune"].rows):
        full += f.dollars
        aware += a.dollars
        if full > 0 and aware / full > worst:
            worst, at = aware / full, f.request
    return worst, at, {"full": full, "cache_aware_prune": aware}


@pytest.mark.parametrize("workload", list(WORKLOADS))
@pytest.mark.slow
def test_never_more_than_one_percent_dearer_than_full_at_any_request_of_any_workload_size(workload):
    session = generate(workload, turns=max(SIZES), seed=0)
    worst, at, totals = worst_prefix(session)
    assert worst <= BOUND, f"{workload}: {worst:.4f} x full at request {at}"
    assert totals["cache_aware_prune"] <= totals["full"]


@pytest.mark.slow
def test_never_more_than_one_percent_dearer_on_the_shipped_real_sessions(real_data):
    sessions = [load_session(real_data / "pi" / "large-session.jsonl"),
                load_session(real_data / "swe-agent" / "marshmallow-1867.function_calling_replace.traj")]
    dialogues = len(json.loads((real_data / "tau-bench" / "gpt-4o-airline.json").read_text()))
    sessions += [load_session(real_data / "tau-bench" / "gpt-4o-airline.json", dialogue=k) for k in range(dialogues)]
    for s in sessions:
        worst, at, _ = worst_prefix(s)
        assert worst <= BOUND, f"{s.name}: {worst:.4f} x full at request {at}"


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir() if p.is_file()))
def test_never_more_than_one_percent_dearer_on_the_sample_sessions(name):
    worst, at, _ = worst_prefix(load_session(SAMPLES / name))
    assert worst <= BOUND, f"{name}: {worst:.4f} x full at request {at}"


def test_on_the_shared_pi_session_it_beats_full_and_pruning_every_request(real_data):
    s = load_session(real_data / "pi" / "large-session.jsonl")
    t = {n: run.totals for n, run in replay(s, ["full", "prune_every_request", "cache_aware_prune"],
                                            snapshots=False).runs.items()}
    # 9 % below full since reads edited later are kept (issue 20); 27 % when file_state dropped them
    assert t["cache_aware_prune"]["dollars"] < 0.95 * t["full"]["dollars"]
    assert t["full"]["dollars"] < t["prune_every_request"]["dollars"]
