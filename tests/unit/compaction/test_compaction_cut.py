"""Compaction cut rules: trigger, cut point, split turns, iterative updates, file lists, recorded compactions."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.compaction import (CompactionSettings, compact, compare_recorded, context_window, plan_compaction,
                               should_compact)
from pruner.compaction.cut import valid_cut_positions
from pruner.compaction.sections import PREFIX_SECTIONS, SUMMARY_SECTIONS, parse_file_lists
from pruner.compaction.settings import usage_total
from pruner.errors import PrunerError
from pruner.formats.export import to_openai_messages, validate_openai_messages
from pruner.model import Message, Session, ToolCall
from pruner.engine.prune import message_tokens
from pruner.tokens import get_counter
from tests.strategies import sessions
from tests.support.paths import REAL_DATA

COUNTER = get_counter("o200k_base")
PI_SESSION = REAL_DATA / "pi" / "large-session.jsonl"


def tokens(m: Message) -> int:
    return message_tokens(m, COUNTER)


def words(n: int, seed: str = "w") -> str:
    return " ".join(f"{seed}{i}" for i in range(n))


def call(mid: str, cid: str, name: str, args: dict, text: str = "") -> Message:
    return Message(id=mid, role="assistant", content=text, tool_calls=(ToolCall(cid, name, args),))


def result(mid: str, cid: str, text: str, **meta) -> Message:
    return Message(id=mid, role="tool", content=text, tool_call_id=cid, metadata=meta)


def coding_session() -> Session:
    """Three turns of coding work: reads, edits, an error, a plan."""
    return Session.of([
        Message(id="u1", role="user", content="Add a --json flag to the report command. Never change the "
                                              "output of the text mode. " + words(40, "a")),
        call("a1", "c1", "read", {"path": "src/report.py"}, "Reading the command first."),
        result("r1", "c1", "def report(args):\n    print(text)\n" + words(60, "b")),
        call("a2", "c2", "edit", {"path": "src/report.py", "old": "print", "new": "emit"}),
        result("r2", "c2", "edited " + words(30, "c")),
        Message(id="a3", role="assistant", content="Added the flag. " + words(30, "d")),
        Message(id="u2", role="user", content="Now add a test for it. I prefer pytest. " + words(40, "e")),
        call("a4", "c3", "write", {"path": "tests/test_report.py", "content": "def test(): pass"}),
        result("r3", "c3", "written " + words(20, "f")),
        call("a5", "c4", "bash", {"command": "pytest -q"}),
        result("r4", "c4", "Traceback (most recent call last):\nAssertionError: expected json", is_error=True),
        Message(id="a6", role="assistant", content="The test fails. Next:\n- fix emit\n- rerun pytest"),
        Message(id="u3", role="user", content="Go ahead. " + words(40, "g")),
        call("a7", "c5", "read", {"path": "src/emit.py"}),
        result("r5", "c5", "def emit(): ... " + words(60, "h")),
        Message(id="a8", role="assistant", content="Found it. " + words(50, "i")),
    ], name="coding")


def suffix_tokens(messages) -> list[int]:
    out = [0] * (len(messages) + 1)
    for j in range(len(messages) - 1, -1, -1):
        out[j] = out[j + 1] + tokens(messages[j])
    return out


# -- trigger -----------------------------------------------------------------------------------------

def test_trigger_uses_reported_usage_of_the_last_assistant_message_plus_later_messages():
    usage = {"input": 1000, "output": 200, "cache_read": 150_000, "cache_write": 30_000}
    later = Message(id="u2", role="user", content=words(50))
    s = Session.of([Message(id="u1", role="user", content="hi"),
                    Message(id="a1", role="assistant", content="old", metadata={"usage": {"input": 5, "output": 5,
                                                                                          "cache_read": 0,
                                                                                          "cache_write": 0}}),
                    Message(id="a2", role="assistant", content="new", metadata={"usage": usage}), later])
    d = should_compact(s, CompactionSettings())
    assert d.source == "usage" and d.usage_message_id == "a2"
    assert d.context_tokens == sum(usage.values()) + tokens(later)
    assert d.triggered == (d.context_tokens > 200_000 - 16_384)
    assert "a2" in d.reason


def test_zero_usage_counts_as_no_usage_and_the_estimate_is_used():
    s = Session.of([Message(id="u1", role="user", content=words(30)),
                    Message(id="a1", role="assistant", content="x",
                            metadata={"usage": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}})])
    d = should_compact(s, CompactionSettings())
    assert usage_total(s.messages[1]) is None
    assert d.source == "estimate" and d.context_tokens == sum(tokens(m) for m in s.messages)


def test_trigger_threshold_and_force():
    s = coding_session()
    total = sum(tokens(m) for m in s.messages)
    below = CompactionSettings(context_window=total + 100, reserve_tokens=100, keep_recent_tokens=10)
    above = CompactionSettings(context_window=total + 99, reserve_tokens=100, keep_recent_tokens=10)
    assert not should_compact(s, below).triggered  # equal to the threshold is not above it
    assert should_compact(s, above).triggered
    not_fired = compact(s, below)
    assert not not_fired.triggered and not_fired.cut_index is None and not_fired.compacted is s
    forced = compact(s, below, force=True)
    assert forced.triggered and forced.cut_index is not None and "by hand" in forced.trigger_reason


def test_settings_reject_nonsense():
    with pytest.raises(PrunerError, match="reserve_tokens"):
        CompactionSettings(context_window=100, reserve_tokens=100)
    with pytest.raises(PrunerError, match="keep_recent_tokens"):
        CompactionSettings(keep_recent_tokens=-1)


# -- cut point ---------------------------------------------------------------------------------------

def test_budget_not_reached_compacts_nothing():
    s = coding_session()
    total = sum(tokens(m) for m in s.messages)
    r = compact(s, CompactionSettings(keep_recent_tokens=total + 1), force=True)
    assert r.cut_index is None and r.summary == "" and r.compacted is s
    assert r.tokens_after == r.tokens_before == total
    assert "fewer than keep_recent_tokens" in r.cut_reason


def test_cut_moves_forward_past_tool_results_so_a_call_stays_with_its_result():
    s = coding_session()
    msgs = s.messages
    suffix = suffix_tokens(msgs)
    r5 = next(i for i, m in enumerate(msgs) if m.id == "r5")
    # A budget whose walk back stops exactly on the tool result r5.
    keep = suffix[r5]
    plan = plan_compaction(s, CompactionSettings(keep_recent_tokens=keep), force=True)
    assert plan.cut.index == r5 + 1 and msgs[plan.cut.index].id == "a8"
    r = compact(s, CompactionSettings(keep_recent_tokens=keep), force=True)
    kept_ids = {m.id for m in r.kept}
    assert "r5" not in kept_ids and "a7" not in kept_ids
    assert r.kept_tokens == suffix[r5 + 1] < keep  # moving forward may keep less than the budget


@given(sessions(max_turns=8), st.integers(0, 400))
def test_cut_rules_hold_for_any_session(session, keep):
    plan = plan_compaction(session, CompactionSettings(keep_recent_tokens=keep), force=True)
    msgs = session.messages
    window = plan.window.window
    w_msgs = [msgs[i] for i in window]
    suffix = suffix_tokens(w_msgs)
    reached = [j for j in range(len(w_msgs)) if suffix[j] >= keep]
    valid = valid_cut_positions(w_msgs)
    if not reached:
        assert plan.cut.index is None
        return
    start = max(reached)
    candidates = [j for j in range(start, len(w_msgs)) if valid[j]]
    if not candidates or candidates[0] == 0:
        assert plan.cut.index is None
        return
    cut = candidates[0]
    assert plan.cut.index == window[cut]
    first_kept = msgs[plan.cut.index]
    assert first_kept.role in ("user", "assistant") and first_kept.tool_call_id is None
    # Every call and its result end up on the same side of the cut.
    side = {}
    for i in plan.to_summarize + plan.turn_prefix:
        side.update({c.id: "old" for c in msgs[i].tool_calls})
    for i in plan.kept:
        side.update({c.id: "new" for c in msgs[i].tool_calls})
    for i in plan.to_summarize + plan.turn_prefix:
        if msgs[i].tool_call_id:
            assert side.get(msgs[i].tool_call_id) == "old"
    for i in plan.kept:
        if msgs[i].tool_call_id:
            assert side.get(msgs[i].tool_call_id) == "new"
    # Split turn exactly when the cut is an assistant message with the turn's user message before it.
    users_before = [j for j in range(cut) if w_msgs[j].role == "user"]
    assert plan.cut.split_turn == (first_kept.role == "assistant" and bool(users_before))
    assert plan.to_summarize + plan.turn_prefix + plan.kept == window


@given(sessions(max_turns=6), st.integers(0, 200))
def test_compacted_session_exports_api_valid_and_input_is_untouched(session, keep):
    before = copy.deepcopy(session)
    r = compact(session, CompactionSettings(keep_recent_tokens=keep), force=True)
    assert session == before
    validate_openai_messages(to_openai_messages(r.compacted))
    if r.cut_index is not None:
        first = r.compacted.messages[len(r.pinned)]
        assert first.role == "user" and first.metadata["kind"] == "compaction_summary"
        assert [m.id for m in r.compacted.messages[len(r.pinned) + 1:]] == [m.id for m in r.kept]
        assert r.tokens_after == sum(tokens(m) for m in r.compacted.messages)


# -- split turn ------------------------------------------------------------------------------------------

def test_split_turn_summarises_history_and_turn_prefix_separately():
    s = coding_session()
    msgs = s.messages
    a8 = next(i for i, m in enumerate(msgs) if m.id == "a8")
    keep = tokens(msgs[a8])  # the walk back stops on a8, an assistant message inside turn 3
    r = compact(s, CompactionSettings(keep_recent_tokens=keep), force=True)
    assert r.split_turn and r.cut_message_id == "a8"
    u3 = next(i for i, m in enumerate(msgs) if m.id == "u3")
    assert r.turn_start_index == u3
    assert [m.id for m in r.turn_prefix] == [m.id for m in msgs[u3:a8]]
    assert [m.id for m in r.to_summarize] == [m.id for m in msgs[:u3]]
    assert r.prefix_request is not None and r.request is not None
    assert "[User]: Go ahead." in r.prefix_request.user_message
    assert "Go ahead." not in r.request.user_message
    positions = [r.summary.index(f"## {name}") for name in SUMMARY_SECTIONS + PREFIX_SECTIONS]
    assert positions == sorted(positions)
    assert "Go ahead." in r.sections["Original Request"]


def test_a_cut_on_a_user_message_is_not_a_split_turn():
    s = coding_session()
    msgs = s.messages
    u3 = next(i for i, m in enumerate(msgs) if m.id == "u3")
    r = compact(s, CompactionSettings(keep_recent_tokens=suffix_tokens(msgs)[u3]), force=True)
    assert r.cut_message_id == "u3" and not r.split_turn and r.turn_prefix == () and r.prefix_request is None


# -- iterative update and file tracking ------------------------------------------------------------------

def extend(compacted: Session, extra: list[Message]) -> Session:
    return Session.of(list(compacted.messages) + extra, name=compacted.name, metadata=compacted.metadata)


def test_second_compaction_merges_and_starts_at_the_previous_first_kept_message():
    s = coding_session()
    msgs = s.messages
    u2 = next(i for i, m in enumerate(msgs) if m.id == "u2")
    first = compact(s, CompactionSettings(keep_recent_tokens=suffix_tokens(msgs)[u2]), force=True)
    assert first.cut_message_id == "u2"
    more = [Message(id="u4", role="user", content="Also document it in docs/flags.md. " + words(40, "j")),
            call("a9", "c6", "edit", {"path": "docs/flags.md", "old": "", "new": "--json"}),
            result("r6", "c6", "ok"),
            Message(id="a10", role="assistant", content="Documented. " + words(40, "k"))]
    second_input = extend(first.compacted, more)
    window = context_window(second_input)
    assert window.previous is not None
    assert second_input.messages[window.window[0]].id == "u2"  # the previous first kept message
    u4 = next(i for i, m in enumerate(second_input.messages) if m.id == "u4")
    second = compact(second_input, CompactionSettings(keep_recent_tokens=suffix_tokens(second_input.messages)[u4]),
                     force=True)
    assert second.previous_summary is not None
    assert [m.id for m in second.to_summarize][0] == "u2"
    assert "<previous-summary>" in second.request.user_message
    # Preserved: the goal of the first compaction is still the goal.
    assert first.sections["Goal"].splitlines()[0] == second.sections["Goal"].splitlines()[0]
    # Files accumulate across compactions.
    assert set(first.modified_files) <= set(second.modified_files)
    assert {"tests/test_report.py", "src/report.py"} <= set(second.modified_files)
    assert parse_file_lists(second.summary) == (second.read_files, second.modified_files)
    # Only one summary message in the result, the old one replaced.
    assert sum(m.metadata.get("kind") == "compaction_summary" for m in second.compacted.messages) == 1


def test_file_lists_come_from_the_summarised_part_only():
    s = coding_session()
    msgs = s.messages
    u3 = next(i for i, m in enumerate(msgs) if m.id == "u3")
    r = compact(s, CompactionSettings(keep_recent_tokens=suffix_tokens(msgs)[u3]), force=True)
    # src/report.py was read then edited: listed once, as modified. src/emit.py is read after the cut.
    assert r.modified_files == ("src/report.py", "tests/test_report.py")
    assert "src/emit.py" not in r.read_files and "src/report.py" not in r.read_files
    assert "<modified-files>\nsrc/report.py\ntests/test_report.py\n</modified-files>" in r.summary


# -- pinned system prompt and cache cost ---------------------------------------------------------------

def test_leading_system_message_is_pinned_and_the_cache_cost_counts_everything_after_it():
    base = coding_session()
    system = Message(id="sys", role="system", content="You are a careful coding agent. " + words(20, "s"))
    s = Session.of((system,) + base.messages)
    r = compact(s, CompactionSettings(keep_recent_tokens=60), force=True)
    assert r.compacted.messages[0] == s.messages[0] and r.pinned == (s.messages[0],)
    assert all(m.id != "sys" for m in r.to_summarize)
    assert r.cache_invalidated_tokens == r.tokens_before - tokens(system)
    assert r.cache_rewrite_tokens == r.tokens_after - tokens(system)


# -- recorded compactions (Pi) -------------------------------------------------------------------------

def pi_like_session() -> Session:
    """History, then a recorded compaction that kept from u2 on, then more history."""
    base = list(coding_session().messages)
    u2 = next(i for i, m in enumerate(base) if m.id == "u2")
    summary_at = len(base)
    summary = Message(id="cmp1", role="summary", content="## Goal\n- Add a --json flag\n\n<read-files>\n"
                      "old/read.py\n</read-files>", metadata={"kind": "compaction"})
    later = [Message(id="u9", role="user", content="And a changelog entry. " + words(30, "m")),
             Message(id="a99", role="assistant", content="Added. " + words(30, "n"))]
    record = {"entry_id": "cmp1", "summary": summary.content, "first_kept_message_id": "u2",
              "first_kept_index": u2, "tokens_before": 12345, "position_index": summary_at}
    return Session.of(base + [summary] + later, name="pi-like", source_format="pi",
                      metadata={"recorded_compactions": [record]})


def test_recorded_compaction_sets_the_window_and_its_summary_is_merged():
    s = pi_like_session()
    window = context_window(s)
    rec = s.metadata["recorded_compactions"][0]
    assert window.previous.source == "recorded" and window.previous.message_index == rec["position_index"]
    assert window.window[0] == rec["first_kept_index"]
    assert rec["position_index"] not in window.window
    assert window.already_compacted == tuple(range(rec["first_kept_index"]))
    r = compact(s, CompactionSettings(keep_recent_tokens=10), force=True)
    assert r.previous_summary.startswith("## Goal")
    assert "Add a --json flag" in r.sections["Goal"]
    assert "old/read.py" in r.read_files  # files listed by the earlier summary are carried over
    assert r.tokens_before == sum(tokens(s.messages[i]) for i in window.context())


def test_compare_recorded_puts_the_computed_cut_beside_the_recorded_one():
    s = pi_like_session()
    rec = s.metadata["recorded_compactions"][0]
    history = s.messages[:rec["position_index"]]
    keep = suffix_tokens(history)[rec["first_kept_index"]]
    rows = compare_recorded(s, CompactionSettings(keep_recent_tokens=keep))
    assert len(rows) == 1
    row = rows[0]
    assert row["recorded"] == {"first_kept_index": rec["first_kept_index"], "first_kept_message_id": "u2",
                               "tokens_before": 12345}
    assert row["computed"]["first_kept_message_id"] == "u2" and row["same_cut"] is True
    assert row["computed"]["tokens_before"] == sum(tokens(m) for m in history)
    other = compare_recorded(s, CompactionSettings(keep_recent_tokens=10))[0]
    assert other["same_cut"] is False and other["computed"]["first_kept_index"] > rec["first_kept_index"]
    json.dumps(rows)  # JSON-ready


# -- the real Pi session ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pi_session():
    if not PI_SESSION.is_file():
        pytest.skip(f"real Pi session not found at {PI_SESSION}")
    from pruner.formats import FORMATS, load_session
    if "pi" not in FORMATS:
        pytest.skip("the Pi importer is not part of this build")
    return load_session(PI_SESSION)


def test_real_pi_session_trigger_uses_the_recorded_usage(pi_session):
    msgs = pi_session.messages
    last = max(i for i, m in enumerate(msgs) if m.role == "assistant" and usage_total(m))
    expected = usage_total(msgs[last]) + sum(tokens(m) for m in msgs[last + 1:])
    d = should_compact(pi_session, CompactionSettings())
    assert d.source == "usage" and d.context_tokens == expected
    assert d.triggered == (expected > CompactionSettings().threshold)


def test_real_pi_session_default_cut_is_a_split_turn(pi_session):
    settings = CompactionSettings()
    r = compact(pi_session, settings, force=True)
    msgs = pi_session.messages
    suffix = suffix_tokens(msgs)
    start = max(j for j in range(len(msgs)) if suffix[j] >= settings.keep_recent_tokens)
    valid = valid_cut_positions(msgs)
    assert r.cut_index == next(j for j in range(start, len(msgs)) if valid[j])
    first_kept = msgs[r.cut_index]
    assert first_kept.role == "assistant" and not first_kept.is_tool_result
    assert r.split_turn and msgs[r.turn_start_index].role == "user"
    assert all(m.role != "user" for m in msgs[r.turn_start_index + 1:r.cut_index])
    assert all(name in r.sections for name in SUMMARY_SECTIONS + PREFIX_SECTIONS)
    assert r.tokens_before == sum(tokens(m) for m in msgs) and r.tokens_after < r.tokens_before
    assert r.kept_tokens == suffix[r.cut_index]
    validate_openai_messages(to_openai_messages(r.compacted))
    kept_calls = {c.id for m in r.kept for c in m.tool_calls}
    assert all(m.tool_call_id in kept_calls for m in r.kept if m.tool_call_id)
    assert r.modified_files and set(r.read_files).isdisjoint(r.modified_files)


def test_real_pi_session_compacts_again_from_the_first_kept_message(pi_session):
    first = compact(pi_session, CompactionSettings(keep_recent_tokens=40_000), force=True)
    again = compact(first.compacted, CompactionSettings(keep_recent_tokens=10_000), force=True)
    assert again.to_summarize[0].id == first.cut_message_id or again.turn_prefix[0].id == first.cut_message_id
    assert set(first.modified_files) <= set(again.modified_files)
    assert again.previous_summary is not None


def test_a_branch_summary_is_context_not_an_earlier_compaction():
    s = Session.of([Message(id="u1", role="user", content="hi"),
                    Message(id="b1", role="summary", content="an abandoned branch tried X",
                            metadata={"kind": "branch_summary"}),
                    Message(id="a1", role="assistant", content="ok")])
    window = context_window(s)
    assert window.previous is None and window.window == (0, 1, 2)


def test_usage_recorded_before_an_earlier_compaction_is_not_used():
    big = {"input": 190_000, "output": 10, "cache_read": 0, "cache_write": 0}
    msgs = [Message(id="u1", role="user", content="start " * 30),
            Message(id="a1", role="assistant", content="kept " * 30, metadata={"usage": big}),
            Message(id="cmp", role="summary", content="## Goal\n- start", metadata={"kind": "compaction"}),
            Message(id="u2", role="user", content="go on")]
    record = {"entry_id": "cmp", "summary": "## Goal\n- start", "first_kept_message_id": "a1",
              "first_kept_index": 1, "tokens_before": 190_010, "position_index": 2}
    s = Session.of(msgs, metadata={"recorded_compactions": [record]})
    plan = plan_compaction(s, CompactionSettings())
    assert plan.trigger.source == "estimate" and not plan.trigger.triggered
    assert plan.trigger.context_tokens == sum(tokens(s.messages[i]) for i in plan.window.context())
    later = Session.of(msgs + [Message(id="a2", role="assistant", content="x", metadata={"usage": big})],
                       metadata={"recorded_compactions": [record]})
    assert plan_compaction(later, CompactionSettings()).trigger.source == "usage"
