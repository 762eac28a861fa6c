"""The hindsight bound (issue 30): the search's optimum equals the brute-force optimum, and the
families hold their own strategies.

The brute force enumerates every schedule of a family and prices each with ``replay_plan`` (a fresh
replay of that schedule through ``prepare``, ``Lane``, the cache models and the recall collector),
never with the search's own bookkeeping; the cheapest feasible one that meets the bar is compared
with ``compute_limits``. Sessions are small (the number of schedules is actions ** requests), and
built to reach every corner the cache model has: gaps past the TTL, recorded usage (inherited cold
requests, warm reads), several models, windows a schedule can overflow, compactions that cut.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from pruner.replay import ReplaySettings, default_prices, replay
from pruner.replay.limit import compute_limits, replay_plan
from pruner.replay.limit.family import FAMILIES
from pruner.replay.requests import find_requests
from tests.strategies import sessions
from tests.support.profile import profile

T0 = 1_760_000_000.0


def _prices():
    """Sonnet 4.5 caching from the first token (small test sessions exercise the cache)."""
    table = default_prices()
    return table.with_model(replace(table.get("claude-sonnet-4-5"), min_cacheable_tokens=0))


@st.composite
def cases(draw, max_requests: int, max_turns: int = 4, min_turns: int = 1):
    """A session of at most ``max_requests`` requests (``max_turns`` 4 gives up to about 7; 7 reaches 12)."""
    s = draw(sessions(max_turns=max_turns, min_turns=min_turns))
    out, t = [], T0
    recorded = draw(st.booleans())
    for m in s.messages:
        t += draw(st.sampled_from([5, 30, 400]))
        meta = {**m.metadata, "timestamp": t}
        if m.role == "tool":  # long results: contexts that grow past a window, compactions that cut
            m = replace(m, content=m.content + " filler" * draw(st.sampled_from([0, 150, 600])))
        if recorded and m.role == "assistant" and draw(st.booleans()):
            context = draw(st.integers(0, 3_000))
            read = 0 if draw(st.booleans()) else draw(st.integers(0, context))
            meta["usage"] = {"input": draw(st.integers(0, 50)), "output": draw(st.integers(0, 400)),
                             "cache_read": read, "cache_write": context - read}
            meta["model"] = draw(st.sampled_from(["claude-sonnet-4-5", "claude-haiku-4-5"]))
        out.append(replace(m, metadata=meta))
    session = s.with_messages(out)
    n = len(find_requests(session))
    from hypothesis import assume
    assume(1 <= n <= max_requests)
    settings = ReplaySettings(context_window=draw(st.sampled_from([None, 1_200, 2_500])),
                              reserve_tokens=draw(st.sampled_from([0, 100])),
                              keep_recent_tokens=draw(st.sampled_from([30, 300])))
    return session, settings, draw(st.sampled_from([0.0, 0.9, 0.99, 1.0]))


def brute_force(session, settings, prices, family: str, min_recall: float) -> float | None:
    """The cheapest feasible schedule of ``family`` meeting ``min_recall``, each one replayed."""
    n = len(find_requests(session))
    best = None
    for combo in itertools.product(("none", *FAMILIES[family].actions), repeat=n):
        plan = {k: a for k, a in enumerate(combo) if a != "none"}
        t = replay_plan(session, plan, settings=settings, prices=prices).totals
        if t["feasible"] and t["context_recall"] >= min_recall and (best is None or t["dollars"] < best):
            best = t["dollars"]
    return best


def _check(case, family: str) -> None:
    session, settings, min_recall = case
    prices = _prices()
    r = replay(session, ["as_recorded", "full"], settings=settings, prices=prices)
    # No beam: the exhaustive search itself is what is checked (the beam is a stated approximation).
    limit = compute_limits(r, min_recall=min_recall, families=[family], max_states=10**9).families[family]
    expected = brute_force(session, settings, prices, family, min_recall)
    assert limit.exact and limit.approximation is None
    assert limit.lower_bound == limit.dollars  # exact: the optimum is proven, the two meet
    if expected is None:
        assert limit.dollars is None and not limit.feasible
    else:
        assert limit.dollars == pytest.approx(expected, abs=1e-9), limit
        assert limit.feasible and limit.recall is not None and limit.recall >= min_recall


_FAST = hsettings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
#: Too slow for CI on 2 cores (thousands of replays per example; tens of seconds per large real log):
#: run with PRUNER_NIGHTLY=1 (tests/support/profile.py). See docs/explanation/hindsight-bound.md.
NIGHTLY = pytest.mark.skipif(profile() != "nightly",
                             reason="nightly: set PRUNER_NIGHTLY=1 (too slow for CI on 2 cores)")
_SLOW = hsettings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


@_FAST
@given(cases(max_requests=5))
def test_prune_bound_equals_the_brute_force_optimum(case):
    _check(case, "prune")


@_FAST
@given(cases(max_requests=8))
@pytest.mark.slow
def test_compaction_bound_equals_the_brute_force_optimum(case):
    _check(case, "compaction")


@_FAST
@given(cases(max_requests=3))
def test_combined_bound_equals_the_brute_force_optimum(case):
    _check(case, "combined")


@pytest.mark.slow
@NIGHTLY
@_SLOW
@given(cases(max_requests=7))
def test_prune_bound_equals_the_brute_force_optimum_up_to_7_requests(case):
    _check(case, "prune")


@hsettings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(max_requests=12, max_turns=7))
@pytest.mark.slow
def test_compaction_bound_equals_the_brute_force_optimum_on_sessions_of_9_to_12_requests(case):
    """Up to 12 requests, as issue 30 asks (4,096 schedules replayed at 12): sessions of fewer than 9
    requests are the test above's."""
    from hypothesis import assume

    assume(len(find_requests(case[0])) >= 9)
    _check(case, "compaction")


@pytest.mark.slow
@NIGHTLY
@_SLOW
@given(cases(max_requests=12, max_turns=7))
def test_compaction_bound_equals_the_brute_force_optimum_up_to_12_requests(case):
    _check(case, "compaction")


@pytest.mark.slow
@NIGHTLY
@_SLOW
@given(cases(max_requests=5))
def test_combined_bound_equals_the_brute_force_optimum_up_to_5_requests(case):
    _check(case, "combined")


def _check_lower_bound(case, family: str) -> None:
    """A beam forced from the first requests (2 states, 1 kept): its ``lower_bound`` is at most the
    brute-force optimum of the family, and its ``dollars`` (a real schedule) at least it."""
    session, settings, min_recall = case
    prices = _prices()
    r = replay(session, ["as_recorded", "full"], settings=settings, prices=prices)
    limit = compute_limits(r, min_recall=min_recall, families=[family], max_states=2, beam=1).families[family]
    expected = brute_force(session, settings, prices, family, min_recall)
    if expected is None:
        assert limit.dollars is None
        return
    assert limit.lower_bound is not None, limit  # None says no schedule is feasible: one is
    assert limit.lower_bound <= expected + 1e-9, (limit.lower_bound, expected)
    if limit.dollars is not None:
        assert limit.lower_bound <= limit.dollars + 1e-9
        assert limit.dollars >= expected - 1e-9


@_FAST
@given(cases(max_requests=5))
def test_prune_lower_bound_is_at_most_the_brute_force_optimum_when_the_search_is_a_beam(case):
    _check_lower_bound(case, "prune")


@_FAST
@given(cases(max_requests=6))
@pytest.mark.slow
def test_compaction_lower_bound_is_at_most_the_brute_force_optimum_when_the_search_is_a_beam(case):
    _check_lower_bound(case, "compaction")


@_FAST
@given(cases(max_requests=3))
def test_combined_lower_bound_is_at_most_the_brute_force_optimum_when_the_search_is_a_beam(case):
    _check_lower_bound(case, "combined")


@_FAST
@given(cases(max_requests=6), st.data())
def test_prune_input_floor_is_at_most_what_any_prune_schedule_pays_at_each_request(case, data):
    """The floor under the prune family's input (``limit.floor``): every schedule of the family, replayed
    through ``replay_plan``, pays at least it at every request (its rows' dollars, output included)."""
    from pruner.replay.limit.floor import input_floors
    from pruner.replay.limit.search import MODELLED_ONLY

    session, settings, _ = case
    prices = _prices()
    floors = input_floors(session, settings, prices, None, MODELLED_ONLY)
    n = len(find_requests(session))
    actions = data.draw(st.lists(st.sampled_from(["none", "drop", "prune"]), min_size=n, max_size=n))
    run = replay_plan(session, {k: a for k, a in enumerate(actions) if a != "none"}, settings=settings,
                      prices=prices)
    assert len(run.rows) == len(floors)
    for row, floor in zip(run.rows, floors):
        assert floor <= row.dollars + 1e-12, (row.request, floor, row.dollars, actions)


def test_a_beam_carries_a_proven_lower_bound_below_its_figure():
    """At 200 turns the tool_agent beam said $3.63 for prune while cache_aware_prune cost $3.50, and
    nothing said how low the optimum could be. A beam now carries ``lower_bound``, below its figure,
    proven from what it cut: here at most every family strategy that meets the bar, and below the beam.

    Regression."""
    from pruner.bench.workloads import generate

    session = generate("tool_agent", turns=12, seed=2)
    r = replay(session, ["as_recorded", "full", "prune_every_request"])
    limit = compute_limits(r, families=["prune"], max_states=2, beam=1).families["prune"]
    assert not limit.exact and limit.lower_bound is not None and limit.dollars is not None
    assert limit.lower_bound < limit.dollars
    assert "lower_bound" in (limit.approximation or "")
    table = default_prices()
    # every schedule pays every reply's output: counted here from full's rows and the price table
    outputs = sum(row.output * table.get(row.model).output / 1e6 for row in r.runs["full"].rows if row.priced)
    assert outputs - 1e-9 <= limit.lower_bound
    for name in ("full", "prune_every_request"):
        t = r.runs[name].totals
        if t["feasible"] and t["context_recall"] >= limit.min_recall:
            assert limit.lower_bound <= t["dollars"] + 1e-9


def test_the_line_under_the_table_says_how_low_a_beams_optimum_can_be():
    from pruner.bench.workloads import generate
    from pruner.money import money
    from pruner.replay.limit.text import bound_line

    r = replay(generate("tool_agent", turns=12, seed=2), ["as_recorded", "full", "prune_every_request"])
    limits = compute_limits(r, max_states=2, beam=1)
    combined = limits.combined
    assert not combined.exact and combined.lower_bound is not None
    assert f"the optimum is at least {money(combined.lower_bound)}" in bound_line(r, limits)
    exact = compute_limits(r, families=["combined"], max_states=10**9)
    assert "at least" not in bound_line(r, exact)


def test_past_max_states_the_search_says_it_is_a_beam_and_stays_at_most_the_family_strategies():
    from pruner.bench.workloads import generate

    session = generate("tool_agent", turns=12, seed=2)
    r = replay(session, ["as_recorded", "full", "prune_every_request"])
    limit = compute_limits(r, families=["prune"], max_states=2, beam=1).families["prune"]
    assert not limit.exact and "beam" in (limit.approximation or "")
    replayed = replay_plan(session, {a.request: a.action for a in limit.schedule}).totals
    assert limit.dollars == pytest.approx(replayed["dollars"], abs=1e-9)  # the figure is its schedule's
    for name in ("full", "prune_every_request"):
        t = r.runs[name].totals
        if t["feasible"] and t["context_recall"] >= limit.min_recall:
            assert limit.dollars <= t["dollars"] + 1e-9


@pytest.mark.parametrize("seed", [0, 3])
def test_a_beam_keeps_combined_at_most_the_prune_and_compaction_bounds(seed):
    """Every schedule of prune and of compaction is one of combined's, so a beam may not put combined
    above either (three shared Claude Code logs did before combined was seeded with their schedules).
    Each figure is checked against a fresh replay of its own schedule: it is achievable."""
    from pruner.bench.workloads import generate

    session = generate("tool_agent", turns=10, seed=seed)
    r = replay(session, ["as_recorded", "full", "prune_every_request", "compact", "prune_then_compact"])
    limits = compute_limits(r, families=["prune", "compaction", "combined"], max_states=2, beam=1).families
    combined = limits["combined"]
    assert not combined.exact and combined.dollars is not None
    for name in ("prune", "compaction", "combined"):
        limit = limits[name]
        if limit.dollars is None:
            continue
        replayed = replay_plan(session, {a.request: a.action for a in limit.schedule}).totals
        assert limit.dollars == pytest.approx(replayed["dollars"], abs=1e-9), name
        assert combined.dollars <= limit.dollars + 1e-9, name


def test_the_clearing_bound_is_at_most_full_when_the_session_passes_every_trigger(monkeypatch):
    """Never clearing is one of clear_tool_uses' settings (a trigger the session never reaches). On
    cctrace-phase0-main, whose context passes every trigger of the grid, the clearing bound was
    $10.70 against $10.62 for full: the grid had no point that never clears. Here the grid's triggers
    are made small, so every point of it clears on a short session.

    Regression."""
    from pruner.bench.workloads import generate
    from pruner.replay.limit import clearing

    monkeypatch.setattr(clearing, "TRIGGERS", (200,))
    monkeypatch.setattr(clearing, "KEEPS", (1,))
    monkeypatch.setattr(clearing, "AT_LEAST", (0,))
    session = generate("tool_agent", turns=30, seed=1)
    r = replay(session, ["as_recorded", "full", "clear_tool_uses"], prices=_prices(), snapshots=False)
    full = r.runs["full"].totals
    limit = compute_limits(r, families=["clearing"]).families["clearing"]
    assert full["feasible"] and limit.dollars is not None
    assert limit.dollars <= full["dollars"] + 1e-9, (limit.dollars, full["dollars"], limit.parameters)
