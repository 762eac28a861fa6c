"""The dashboard's pure frame builders (dashboard/tables.py), called directly."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard import tables, ui
from pruner import (ROLES, STATUSES, Decision, Message, PruneConfig, Session, ToolCall,
                    get_counter, load_session, message_tokens, prune)
from tests.support.paths import ROOT

DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"


def frame_of(session: Session, config: PruneConfig | None = None):
    result = prune(session, config)
    counter = get_counter()
    return result, tables.messages_frame(session, result.decisions,
                                         [message_tokens(m, counter) for m in session.messages])


@pytest.fixture(scope="module")
def demo():
    if not DEMO.exists():
        pytest.skip("sample_sessions/native_demo.jsonl is missing")
    return load_session(DEMO)


def test_messages_frame_has_one_row_per_message_with_its_decision(demo):
    result, frame = frame_of(demo)
    assert list(frame["id"]) == [m.id for m in demo.messages]
    assert list(frame["status"]) == [d.status for d in result.decisions]
    assert list(frame["rule"]) == [d.rule for d in result.decisions]
    for _, row in frame[frame["related"] != ""].iterrows():
        assert demo.messages[row["related_position"]].id == row["related"]
    assert set(frame.loc[frame["related"] == "", "related_position"]) <= {-1}
    # the kept + restored token counts plus placeholders are the library's own total
    kept = frame[frame["status"].isin(["kept", "restored"])]["tokens"].sum()
    assert kept + result.stats.placeholder_tokens == result.stats.tokens_after


def test_slots_keep_message_order_inside_each_turn(demo):
    _, frame = frame_of(demo)
    for turn, rows in frame.groupby("turn"):
        slots = rows.sort_values("position")["slot"].tolist()
        assert slots == sorted(slots) and len(set(slots)) == len(slots)
        assert all(turn - 0.45 <= s <= turn + 0.45 for s in slots)


def test_messages_frame_rejects_misaligned_tokens(demo):
    with pytest.raises(ValueError):
        tables.messages_frame(demo, None, [1])


def test_missing_decisions_count_as_kept():
    s = Session.of([Message(id="u", role="user", content="hello there")])
    frame = tables.messages_frame(s, None, [2])
    assert list(frame["status"]) == ["kept"] and list(frame["reason"]) == [""]


def test_search_finds_tool_call_arguments():
    s = Session.of([Message(id="u", role="user", content="look it up"),
                    Message(id="a", role="assistant", content="",
                            tool_calls=(ToolCall("c1", "read_file", {"path": "src/zebra.py"}),)),
                    Message(id="r", role="tool", content="ok", tool_call_id="c1")])
    frame = tables.messages_frame(s, None, [1, 1, 1])
    assert list(tables.filter_messages(frame, text="ZEBRA")["id"]) == ["a"]
    assert list(tables.filter_messages(frame, text="R")["id"]) == ["a", "r"]  # "read_file" and id "r"


rows_strategy = st.lists(st.fixed_dictionaries({
    "turn": st.integers(0, 6), "role": st.sampled_from(ROLES), "status": st.sampled_from(STATUSES),
    "rule": st.sampled_from(["", "ttl", "near_duplicate", "dependency"]),
    "content": st.text(alphabet="abcXYZ ", max_size=12)}), max_size=40)


def _frame(rows):
    rows = sorted(rows, key=lambda r: r["turn"])
    frame = pd.DataFrame([{**r, "position": i, "id": f"m{i}"} for i, r in enumerate(rows)],
                         columns=["position", "id", "turn", "role", "status", "rule", "content"])
    return rows, frame


@given(rows=rows_strategy, statuses=st.sets(st.sampled_from(STATUSES)), roles=st.sets(st.sampled_from(ROLES)),
       lo=st.integers(0, 6), span=st.integers(0, 6), text=st.text(alphabet="abcxyz", max_size=2),
       changed=st.booleans())
def test_filter_matches_a_plain_python_filter(rows, statuses, roles, lo, span, text, changed):
    rows, frame = _frame(rows)
    got = tables.filter_messages(frame, statuses=statuses, roles=roles, turns=(lo, lo + span), text=text,
                                 changed_only=changed)
    expected = [f"m{i}" for i, r in enumerate(rows)
                if (not statuses or r["status"] in statuses) and (not roles or r["role"] in roles)
                and lo <= r["turn"] <= lo + span and (not changed or r["status"] != "kept")
                and (text.casefold() in r["content"].casefold() or text.casefold() in f"m{i}")]
    assert list(got["id"]) == expected


@given(n=st.integers(0, 300), size=st.integers(1, 60), extra=st.integers(0, 3))
def test_pages_partition_the_rows(n, size, extra):
    frame = pd.DataFrame({"position": range(n)})
    pages = tables.page_count(n, size)
    assert pages >= 1 and (pages - 1) * size < max(n, 1) <= pages * size or n == 0
    joined = pd.concat([tables.page_of(frame, p, size) for p in range(1, pages + 1)])
    assert list(joined["position"]) == list(range(n))
    # a page past the end shows the last page rather than nothing
    assert list(tables.page_of(frame, pages + extra, size)["position"]) == \
        list(tables.page_of(frame, pages, size)["position"])


def test_context_before_is_everything_so_far(demo):
    _, frame = frame_of(demo)
    before = tables.context_before_frame(frame)
    totals = tables.context_totals(before)
    assert list(totals["turn"]) == list(range(demo.last_turn + 1))
    assert totals["before"].is_monotonic_increasing
    for turn in totals["turn"]:
        expected = frame.loc[frame["turn"] <= turn, "tokens"].sum()
        assert totals.loc[totals["turn"] == turn, "before"].item() == expected
    assert totals["after"].isna().all()  # not computed here


def test_context_frame_and_totals_from_samples():
    samples = [{"turn": 1, "after": {"user": 5, "tool": 7}}, {"turn": 3, "after": {"user": 9}}]
    context = tables.context_frame(samples)
    assert set(context["stage"]) == {"after"}
    totals = tables.context_totals(context)
    assert list(totals["after"]) == [12, 9]


def test_role_tokens_lists_every_role():
    out = tables.role_tokens(["user", "tool", "user"], [1, 2, 3])
    assert list(out) == list(ROLES) and out["user"] == 4 and out["tool"] == 2 and out["system"] == 0


def test_status_changes_between_passes_are_the_decisions_that_differ(demo):
    r1, f1 = frame_of(demo, PruneConfig(expire=True, deduplicate=False, restore=False))
    r2, f2 = frame_of(demo, PruneConfig(expire=True, deduplicate=True, restore=False))
    changes = tables.status_changes(f1, f2)
    expected = [d2.id for d1, d2 in zip(r1.decisions, r2.decisions) if d1.status != d2.status]
    assert list(changes["id"]) == expected and expected
    assert set(changes["was"]) == {"kept"} and set(changes["status"]) == {"duplicate"}


def test_decisions_csv_round_trips(demo):
    result, frame = frame_of(demo)
    csv = tables.decisions_frame(frame).to_csv(index=False)
    back = pd.read_csv(io.StringIO(csv), keep_default_na=False)
    assert list(back["id"]) == [d.id for d in result.decisions]
    assert list(back["status"]) == [d.status for d in result.decisions]
    assert list(back["reason"]) == [d.reason for d in result.decisions]


def test_status_counts_and_rule_options():
    s = Session.of([Message(id=f"m{i}", role="user", content=str(i)) for i in range(3)])
    decisions = [Decision("m0", "kept", "", ""), Decision("m1", "expired", "ttl", "x"),
                 Decision("m2", "duplicate", "exact_duplicate", "y")]
    frame = tables.messages_frame(s, decisions, [1, 1, 1])
    assert tables.status_counts(frame) == {"kept": 1, "expired": 1, "duplicate": 1, "restored": 0}
    assert tables.rule_options(frame) == ["exact_duplicate", "ttl"]


def test_recorded_compactions_frame_flattens_rows():
    rows = [{"entry_id": "c1", "position_index": 9,
             "recorded": {"first_kept_index": 4, "first_kept_message_id": "m4", "tokens_before": 100},
             "computed": {"first_kept_index": 5, "first_kept_message_id": "m5", "split_turn": False,
                          "tokens_before": 98, "reason": "r"}, "same_cut": False},
            {"entry_id": None, "position_index": None, "recorded": {}, "computed": None, "same_cut": None}]
    frame = tables.recorded_compactions_frame(rows)
    assert list(frame["recorded first kept #"])[0] == 4 and list(frame["computed first kept id"]) == ["m5", ""]


@given(st.text())
def test_escape_markdown_is_reversible_and_leaves_no_markup(text):
    escaped = ui.escape_markdown(text)
    import re
    assert re.sub(r"\\(.)", r"\1", escaped, flags=re.S) == text
    for ch in "<>*_`[]()#!|":
        assert ch not in re.sub(r"\\.", "", escaped, flags=re.S)


BENCH_ROWS = [
    {"workload": "a", "turns": 50, "seed": 0, "reduction_pct": 10.0, "oracle_reduction_pct": 12.0,
     "truncation_reduction_pct": 10.0, "tagged_facts_missing": 0, "truncation_tagged_facts_missing": 3,
     "tokens_before": 100, "tokens_after": 90, "removed_by_rule": {"ttl": 1}, "idempotent": True},
    {"workload": "a", "turns": 50, "seed": 1, "reduction_pct": 20.0, "oracle_reduction_pct": 22.0,
     "truncation_reduction_pct": 20.0, "tagged_facts_missing": 0, "truncation_tagged_facts_missing": 5,
     "tokens_before": 300, "tokens_after": 240, "removed_by_rule": {}, "idempotent": True},
    {"workload": "b", "turns": 200, "seed": 0, "reduction_pct": 30.0, "oracle_reduction_pct": 31.0,
     "truncation_reduction_pct": 30.0, "tagged_facts_missing": 0, "truncation_tagged_facts_missing": 0,
     "tokens_before": 1000, "tokens_after": 700, "removed_by_rule": {}, "idempotent": True},
]


def test_bench_frames_average_seeds_and_line_up_the_baselines():
    flat = tables.bench_rows_frame(BENCH_ROWS)
    assert "removed_by_rule" not in flat.columns and len(flat) == 3
    by_size = tables.bench_by_size(BENCH_ROWS)
    assert list(by_size["config"]) == ["a · 50", "b · 200"]
    assert list(by_size["reduction_pct"]) == [15.0, 30.0]  # the mean of the two seeds
    assert list(by_size["tokens_before"]) == [200.0, 1000.0]
    base = tables.baselines_frame(by_size)
    assert list(base[base["config"] == "a · 50"]["method"]) == ["pruner", "oracle", "truncation"]
    truncation = base[(base["method"] == "truncation")]
    assert list(truncation["tagged_facts_missing"]) == [4.0, 0.0]
    wide = tables.baselines_wide(base, "reduction_pct")
    assert list(wide["config"]) == ["a · 50", "b · 200"]  # run order, not alphabetical
    assert list(wide["oracle"]) == [17.0, 31.0] and list(wide["truncation"]) == [15.0, 30.0]


def test_bench_summary_table_and_headline():
    summary = {"configurations": 2, "tagged_facts_preserved": {"count": 2, "of": 2},
               "idempotent": {"count": 1, "of": 2}, "untagged_facts": 9, "untagged_facts_lost": 1,
               "per_workload": {"a": {"reduction_pct": {"min": 1.0, "max": 3.0, "mean": 2.0},
                                      "pct_of_oracle": {"min": None, "max": None, "mean": None},
                                      "truncation_tagged_facts_missing": 8}}}
    frame = tables.bench_summary_frame(summary)
    assert frame.loc[0, "token reduction %"] == "1.0 – 3.0 (mean 2.0)"
    assert frame.loc[0, "% of oracle"] == "n/a" and frame.loc[0, "facts lost by truncation"] == 8
    assert tables.bench_headline(summary) == {"tagged facts preserved": "2/2", "idempotent": "1/2",
                                              "untagged facts lost": "1/9", "configurations": "2"}


def test_baselines_keep_sizes_in_numeric_order():
    rows = [{**BENCH_ROWS[2], "workload": "a", "turns": t} for t in (1000, 200)]
    wide = tables.baselines_wide(tables.baselines_frame(tables.bench_by_size(rows)), "reduction_pct")
    assert list(wide["config"]) == ["a · 200", "a · 1000"]
