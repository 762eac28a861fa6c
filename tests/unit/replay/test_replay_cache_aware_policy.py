"""``cache_aware`` (issue 30): what it never pays, that it is causal on real logs, and its recall.

The invariant (the strategy's docstring argues it): at a request where it does not act, it sends its
previous context with the new messages the pruner keeps appended, which is never dearer than
``full``'s request; so over any prefix of a session it costs at most ``full`` plus what it paid at
the requests where it acted. Checked row by row from the replay's rows (never from the strategy's
own figures), up to ``full``'s first request over the window (``full`` stops there). One allowance:
OpenAI's 128-token step of the cached prefix (``rounding``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from pruner import load_session
from pruner.bench.workloads import WORKLOADS, generate
from pruner.replay import ReplaySettings, default_prices, replay, strategy_names
from pruner.replay.cache import OPENAI_INCREMENT
from pruner.replay.detect import detect
from pruner.replay.verdict import DEFAULT_MIN_RECALL
from tests.strategies import sessions
from tests.support.paths import REAL_DATA

POLICY = "cache_aware"
CENT = 1e-9  # rounding of one row's dollars
#: What a leave-out on arrival says: those messages were never sent, so nothing was paid for it.
FREE = "left out new messages the pruner drops"


def acted(row) -> bool:
    """The policy did something that may cost at this request (a break, a compaction, a cut)."""
    return any(e.kind != "prune" or not e.detail.startswith(FREE) for e in row.events)


def rounding(r, row) -> float:
    """OpenAI counts the cached prefix in steps of 128 tokens (rounded down): removing R tokens can
    cache up to R + 127 fewer, so a request may pay 127 tokens at the uncached price more than
    ``full`` (the provider's rule, not the policy's choice). Anthropic and Google: no step."""
    price = r.price_table.get(row.model)
    if price.provider != "openai":
        return 0.0
    return (OPENAI_INCREMENT - 1) * (price.input - price.cached_input) / 1e6


def excess_outside_actions(r) -> tuple[float, float, list[int]]:
    """What it paid over ``full`` at the requests where the policy acted, plus the rounding allowance
    elsewhere; its whole excess over ``full``; and the requests where it did not act and paid more
    than ``full`` beyond the rounding (must be none)."""
    paid, broken = 0.0, []
    for mine, full in zip(r.runs[POLICY].rows, r.runs["full"].rows):
        if full.rejected:
            break  # full cannot go on; nothing after it is comparable
        if acted(mine):
            paid += mine.dollars - full.dollars
            continue
        paid += rounding(r, mine)
        if mine.dollars > full.dollars + rounding(r, mine) + CENT:
            broken.append(mine.request)
    compared = list(zip(r.runs[POLICY].rows, r.runs["full"].rows))[:len(paid_rows(r))]
    return paid, sum(m.dollars - f.dollars for m, f in compared), broken


def paid_rows(r) -> list:
    """``full``'s rows up to its first request over the window."""
    rows = []
    for f in r.runs["full"].rows:
        if f.rejected:
            break
        rows.append(f)
    return rows


def _real(name: str):
    path = REAL_DATA / name
    if not path.is_file():
        pytest.skip(f"{path} is not there")
    s = load_session(path, dialogue=0 if name.startswith("tau-bench/") else None)
    prices = default_prices()
    provider, model, _ = detect(s, prices)
    return s, ReplaySettings(provider=provider, model=model), prices


REAL = ("pi/large-session.jsonl", "claude-code/codemie-session-624a4a58.jsonl",
        "claude-code/task-patterns-998db3cd.jsonl", "claude-code/ccviewer-fe5e1c67.jsonl",
        "codex/codemie-rollout-2026-05-11.jsonl", "gemini-cli/codemie-session-2026-01-16-file-ops.json",
        "tau-bench/gpt-4o-airline.json", "swe-agent/marshmallow-1867.function_calling_replace.traj")


def test_it_is_registered_so_the_causality_property_covers_it():
    assert POLICY in strategy_names() and "cache_aware_prune" in strategy_names()


@pytest.mark.parametrize("name", REAL)
def test_on_real_logs_it_never_pays_more_than_full_where_it_did_not_act(name):
    s, settings, prices = _real(name)
    r = replay(s, ["full", POLICY], settings=settings, prices=prices, snapshots=False, recall=False)
    paid, excess, broken = excess_outside_actions(r)
    assert not broken, f"{name}: dearer than full at requests {broken[:10]} where it did not act"
    assert excess <= paid + CENT * len(r.requests)


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_on_the_workloads_it_never_pays_more_than_full_where_it_did_not_act(workload):
    r = replay(generate(workload, turns=500, seed=0), ["full", POLICY], snapshots=False, recall=False)
    paid, excess, broken = excess_outside_actions(r)
    assert not broken, f"{workload}: dearer than full at requests {broken[:10]} where it did not act"
    assert excess <= paid + CENT * len(r.requests)


def _prices():
    table = default_prices()
    return table.with_model(replace(table.get("claude-sonnet-4-5"), min_cacheable_tokens=0))


@hsettings(max_examples=60, deadline=None)
@given(sessions(max_turns=8), st.sampled_from([None, 3_000, 8_000]), st.sampled_from([5.0, 400.0]))
def test_on_generated_sessions_it_never_pays_more_than_full_where_it_did_not_act(session, window, gap):
    timed = session.with_messages([replace(m, metadata={**m.metadata, "timestamp": 1_760_000_000 + gap * i})
                                   for i, m in enumerate(session.messages)])
    settings = ReplaySettings(context_window=window, reserve_tokens=300 if window else 16_384,
                              keep_recent_tokens=300)
    r = replay(timed, ["full", POLICY], settings=settings, prices=_prices(), snapshots=False, recall=False)
    paid, excess, broken = excess_outside_actions(r)
    assert not broken
    assert excess <= paid + CENT * max(1, len(r.requests))


@pytest.mark.parametrize("name,k", [("claude-code/codemie-session-624a4a58.jsonl", 48),
                                    ("pi/large-session.jsonl", 300)])
def test_on_a_real_log_cutting_the_session_after_request_k_leaves_its_rows_up_to_k_unchanged(name, k):
    """Causal on real logs too, across a compaction (624a4a58 compacts at its window near request 42)."""
    s, settings, prices = _real(name)
    whole = replay(s, [POLICY], settings=settings, prices=prices, snapshots=False, recall=False)
    cut = s.with_messages(s.messages[:whole.requests[k].position + 1])
    part = replay(cut, [POLICY], settings=settings, prices=prices, snapshots=False, recall=False)
    a = [row.as_dict() for row in whole.runs[POLICY].rows[:k + 1]]
    b = [row.as_dict() for row in part.runs[POLICY].rows[:k + 1]]
    assert a == b


def test_on_the_shared_pi_session_it_keeps_the_recall_bar_and_costs_less_than_full(real_data):
    s, settings, prices = _real("pi/large-session.jsonl")
    r = replay(s, ["full", POLICY], settings=settings, prices=prices, snapshots=False)
    t = r.runs[POLICY].totals
    # the share computed here from the term counts, not read from the library's ratio
    recall = 1 - t["terms_missing"] / t["used_terms"]
    assert t["used_terms"] > 1_000 and recall >= DEFAULT_MIN_RECALL, recall
    assert t["feasible"] and t["dollars"] < 0.95 * r.runs["full"].totals["dollars"]
    # it pruned: some break or leave-out happened (else the saving would come from nowhere)
    assert any(row.events for row in r.runs[POLICY].rows)


def test_the_compaction_the_window_forces_keeps_what_its_savings_pay_for_and_the_recall_bar():
    """tool_agent at 1,000 turns outgrows the window once: the compaction kept the newest 20,000 tokens
    although the policy had saved dollars against ``full`` to keep more, and the replies after it used
    terms the summary did not hold (97.37 % recall). It now keeps what its savings pay for, up to half
    the room under the trigger, and keeps the bar at less than ``cache_aware_prune``'s dollars.

    Regression."""
    s = generate("tool_agent", turns=1_000, seed=0)
    r = replay(s, ["as_recorded", "cache_aware_prune", POLICY], snapshots=False)
    t = r.runs[POLICY].totals
    assert t["feasible"] and len(t["compactions"]) >= 1
    recall = 1 - t["terms_missing"] / t["used_terms"]  # from the term counts, not the library's ratio
    assert recall >= DEFAULT_MIN_RECALL, recall
    assert t["dollars"] < r.runs["cache_aware_prune"].totals["dollars"]


def test_a_compaction_at_a_model_priced_at_nothing_does_not_divide_by_its_price():
    """Found by the causality property (CI=true): a compaction on a request priced at zero (a model with
    no price for what it bills) divided the savings by the kept tail's price per token, zero there.

    Regression."""
    table = default_prices()
    free = replace(table.get("claude-sonnet-4-5"), input=0.0, cached_input=0.0, output=0.0, cache_write_5m=0.0,
                   cache_write_1h=0.0, min_cacheable_tokens=0)
    settings = ReplaySettings(provider="anthropic", model="claude-sonnet-4-5", context_window=2_500,
                              reserve_tokens=300, keep_recent_tokens=300)
    r = replay(generate("tool_agent", turns=20, seed=0), ["full", POLICY], settings=settings,
               prices=table.with_model(free), snapshots=False)
    t = r.runs[POLICY].totals
    assert t["compactions"] and t["feasible"] and t["dollars"] == 0
