"""The replay's core on hand-built sessions with contract A's metadata (issue 19, "The shape this needs").

Chains (main + subagents, each with its own requests, cache and strategy state), a price per
request from its recorded model (unpriced models never priced as another), a change of model
as a cache break, recorded compactions kept out of every counterfactual, and feasibility
(a request over its model's window makes the strategy infeasible from there).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pruner.money import money

from pruner import Message, Session, ToolCall
from pruner.engine.prune import message_tokens
from pruner.formats.native import dumps
from pruner.replay import ReplaySettings, default_prices, replay
from pruner.replay.requests import find_requests
from pruner.tokens import get_counter
from tests.support.paths import ROOT

T0 = 1_760_000_000.0


def usage(i=10, o=20, r=0, w=0):
    return {"input": i, "output": o, "cache_read": r, "cache_write": w}


def turn(prefix: str, k: int, t: float, model: str | None = "claude-sonnet-4-5", words: int = 300,
         **meta) -> list[Message]:
    md = {"timestamp": t + 1, **({"model": model} if model else {}), **meta}
    return [Message(id=f"{prefix}u{k}", role="user", content=f"{prefix} question {k} " + "word " * words,
                    metadata={"timestamp": t}),
            Message(id=f"{prefix}a{k}", role="assistant", content=f"{prefix} answer {k}", metadata=md)]


def chained_session() -> Session:
    """Main: requests at t=0, 100, 200; subagent: at t=50, 150 (interleaved by start time)."""
    main = [m for k, t in enumerate((0, 100, 200)) for m in turn("m", k, T0 + t)]
    sub = [m for k, t in enumerate((50, 150)) for m in turn("s", k, T0 + t, model="claude-haiku-4-5")]
    agent = Session.of(sub, name="agent", metadata={"chain": "agent-1"})
    return Session.of(main, name="chained", subagents=[agent])


def test_requests_of_every_chain_are_numbered_by_start_time_and_carry_their_chain():
    s = chained_session()
    reqs = find_requests(s)
    # Expected order, worked out here: (start time, chain order, position) of every assistant message.
    expected = sorted((m_prev.metadata["timestamp"], order, i, chain)
                      for order, (chain, conv) in enumerate(s.chains)
                      for i, (m_prev, m) in enumerate(zip(conv.messages, conv.messages[1:]), start=1)
                      if m.role == "assistant")
    assert [(r.chain, r.position) for r in reqs] == [(c, p) for _, _, p, c in expected]
    assert [r.index for r in reqs] == list(range(5))
    assert [r.model for r in reqs] == ["claude-sonnet-4-5", "claude-haiku-4-5"] * 2 + ["claude-sonnet-4-5"]


def test_each_chain_has_its_own_context_cache_and_price_and_totals_sum_the_chains():
    s = chained_session()
    r = replay(s, ["full", "truncate", "prune_every_request"], snapshots=True)
    for name, run in r.runs.items():
        assert [row.chain for row in run.rows] == ["main", "agent-1", "main", "agent-1", "main"]
        t = run.totals
        assert set(t["by_chain"]) == {"main", "agent-1"}
        assert sum(c["dollars"] for c in t["by_chain"].values()) == pytest.approx(t["dollars"], abs=1e-6)
        assert sum(c["requests"] for c in t["by_chain"].values()) == len(run.rows)
        assert {m: v["requests"] for m, v in t["by_model"].items()} == {"claude-sonnet-4-5-20250929": 3,
                                                                       "claude-haiku-4-5-20251001": 2}
        for row in run.rows:
            ids = {m.id for m in r.context(name, row.request)}
            prefix = "m" if row.chain == "main" else "s"
            assert ids and all(i.startswith(prefix) for i in ids), (name, row.request)  # nothing of the other chain
    full = r.runs["full"].rows
    # The subagent's first request is its chain's first: nothing cached, whatever main did before it.
    assert full[1].cached == 0 and full[1].miss in ("first", "below_minimum")
    prices = default_prices()
    haiku, sonnet = prices.get("claude-haiku-4-5"), prices.get("claude-sonnet-4-5")
    for row in full:
        p = haiku if row.chain == "agent-1" else sonnet
        own = p.dollars(input=row.fresh, cached=row.cached, written=row.written, output=row.output)
        assert row.dollars == pytest.approx(own)  # each request at its own model's prices
        assert row.model == p.model and row.priced


def test_a_subagents_own_file_replays_as_its_requests():
    """issue 23 defect 24 (the replay side): a file whose every line is a sidechain has requests."""
    sub = [m for k, t in enumerate((0, 60, 120)) for m in turn("s", k, T0 + t)]
    s = Session.of([], name="sub-only", subagents=[Session.of(sub, metadata={"chain": "agent-9"})])
    r = replay(s, ["as_recorded", "full"])
    assert len(r.requests) == 3 and {row.chain for row in r.runs["full"].rows} == {"agent-9"}
    assert r.runs["full"].totals["dollars"] > 0


def test_an_unpriced_model_is_never_priced_as_another():
    msgs = [m for k, t in enumerate((0, 30, 60)) for m in turn("m", k, T0 + t, model="made-up-model-9",
                                                                 usage=usage(10, 20, 0, 500))]
    s = Session.of(msgs, name="unknown-model")
    for settings in (ReplaySettings(), ReplaySettings(model="claude-opus-4-1")):  # --model: unrecorded ones only
        r = replay(s, ["as_recorded", "full"], settings=settings)
        for run in r.runs.values():
            t = run.totals
            assert t["dollars"] == 0 and all(not row.priced and row.dollars == 0 for row in run.rows)
            assert t["unpriced_requests"] == 3
            assert t["unpriced_tokens"] == sum(row.input + row.output for row in run.rows) > 0
            assert t["by_model"] == {"made-up-model-9": {"requests": 3, "dollars": 0.0, "priced": False}}
        assert any("no prices for made-up-model-9" in n for n in r.notes)
        assert "made-up-model-9: unpriced" in r.money_label


def test_the_cli_never_shows_an_unpriced_bill_as_dollars(tmp_path):
    """Every request of a made-up model: the table and the calibration printed $0.0000 / $0.00 and
    "+0.0 % against the bill", which read as a free session and a perfect fit. Some of them unpriced:
    the dollars are marked as leaving those requests out.

    QA 19, defect 2."""
    only = [m for k, t in enumerate((0, 30, 60)) for m in turn("m", k, T0 + t, model="made-up-model-9",
                                                                 usage=usage(10, 20, 0, 1500))]
    mixed = only[:4] + [m for m in turn("m", 2, T0 + 60, model="claude-sonnet-4-5", usage=usage(10, 20, 1500, 300))]
    out = {}
    for name, msgs in (("only", only), ("mixed", mixed)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(dumps(Session.of(msgs, name=name)))
        p = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--strategies", "as_recorded,full",
                            "--explain"], capture_output=True, text=True, cwd=ROOT)  # the calibration: --explain
        assert p.returncode == 0, p.stderr
        out[name] = {line.split()[0]: line for line in p.stdout.splitlines() if line.strip()}
    for strategy in ("as_recorded", "full"):
        assert out["only"][strategy].split()[6:8] == ["unpriced", "unpriced"], out["only"][strategy]
        assert "$" not in out["only"][strategy]
    calibration = [v for k, v in out["only"].items() if k in ("billed", "modelled")]
    assert calibration and all("$" not in v and "unpriced" in v for v in calibration), calibration
    assert "+0.0 %" not in "\n".join(out["only"].values())
    # The mixed session: the priced request's dollars, marked, and the footnote says how many are left out.
    sonnet = default_prices().get("claude-sonnet-4-5")
    expected = (10 * sonnet.input + 1500 * sonnet.cached_input + 300 * sonnet.cache_write_5m + 20 * sonnet.output) / 1e6
    cell = out["mixed"]["as_recorded"].split()[6]
    assert cell.endswith("*") and abs(float(cell.strip("$*")) - expected) < 5e-5, (cell, expected)
    assert "leave out the 2 requests of models without a price" in out["mixed"]["*"]


def test_a_subagent_chain_of_an_unpriced_model_is_not_printed_as_free(tmp_path):
    """The per-chain line printed '$0.0000' for a subagent whose every request is of a made-up model.

    QA 19, defect 4."""
    main = [m for k, t in enumerate((0, 100)) for m in turn("m", k, T0 + t, usage=usage(10, 20, 0, 1500))]
    sub = [m for k, t in enumerate((50, 60)) for m in turn("s", k, T0 + t, model="made-up-model-9",
                                                             usage=usage(10, 20, 0, 1500))]
    s = Session.of(main, name="sub-unpriced", subagents=[Session.of(sub, metadata={"chain": "agent-9"})])
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(s))
    p = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--strategies", "as_recorded,full"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    lines = [line for line in p.stdout.splitlines() if "by chain:" in line]
    assert len(lines) == 2 and all("agent-9 2 requests unpriced;" in line for line in lines), lines
    assert all("main 2 requests $" in line for line in lines), lines


def test_a_window_the_user_gives_is_kept_even_where_the_recording_went_further():
    """``--context-window 120000`` on a real Claude Code session whose recorded contexts reach 142,670:
    the window was raised to the largest context the recording accepted so far, so ``full`` (peak
    142,670) was feasible and ranked best, and prune_every_request was infeasible against a "72,226-token
    window" (a recorded size, not a window). The recording itself is still never rejected.

    QA 19, defect 8."""
    msgs = [m for k, (t, size) in enumerate([(0, 1_600), (30, 2_400), (60, 16_000)])
            for m in turn("m", k, T0 + t, usage=usage(10, 20, 0, size))]
    settings = ReplaySettings(context_window=3_000, reserve_tokens=500)
    r = replay(Session.of(msgs, name="window"), ["as_recorded", "full"], settings=settings)
    full, recorded = r.runs["full"], r.runs["as_recorded"]
    assert all(row.window == 3_000 for row in full.rows)
    over = [row.request for row in full.rows if row.input > 3_000]  # our own reading of the rows
    assert over and full.totals["feasible"] is False and full.totals["infeasible_from"] == over[0]
    assert "over a 3,000-token window" in full.totals["infeasible_reason"]
    assert recorded.totals["feasible"] is True and recorded.totals["rejected"] == 0
    assert max(row.input for row in recorded.rows) == 16_010  # what happened: 10 fresh + 16,000 written


def test_a_session_of_unknown_models_is_not_said_to_record_no_model():
    """A Pi session whose every request records a made-up model said "(no model is recorded; default
    model)" beside its prices.

    QA 19, defect 9."""
    from pruner.replay.detect import detect

    msgs = [m for k, t in enumerate((0, 30)) for m in turn("m", k, T0 + t, model="made-up-model-9",
                                                             provider="openai", usage=usage(10, 20, 0, 500))]
    s = Session.of(msgs, name="pi-like", metadata={"source_format": "pi"})
    provider, model, how = detect(s, default_prices())
    assert "no model is recorded" not in how and "'made-up-model-9', not in the price table" in how
    assert provider == "openai"  # the recorded provider, not the fallback's
    assert default_prices().find("made-up-model-9") is None


def test_a_change_of_model_within_a_chain_breaks_the_cache():
    msgs = (turn("m", 0, T0, words=800) + turn("m", 1, T0 + 10, words=50)
            + turn("m", 2, T0 + 20, words=50, model="claude-opus-4-1") + turn("m", 3, T0 + 30, words=50,
                                                                            model="claude-opus-4-1"))
    r = replay(Session.of(msgs), ["full"], settings=ReplaySettings(), prices=_cache_from_zero())
    rows = r.runs["full"].rows
    assert rows[1].cached > 0 and rows[1].miss == ""
    assert (rows[2].cached, rows[2].miss) == (0, "model")  # same prefix, another model: written again
    assert rows[3].cached == rows[2].written


def _cache_from_zero():
    from dataclasses import replace
    table = default_prices()
    for name in ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"):
        table = table.with_model(replace(table.get(name), min_cacheable_tokens=0))
    return table


def compacted_session() -> Session:
    """Six turns; a recorded compaction summary before turn 4 (first kept: turn 3's user message)."""
    msgs = [m for k in range(3) for m in turn("m", k, T0 + 10 * k)]
    summary = Message(id="sum1", role="summary", content="<summary>the first three turns</summary>",
                      metadata={"kind": "compaction"})
    msgs += [summary] + [m for k in range(3, 6) for m in turn("m", k, T0 + 10 * k)]
    meta = {"recorded_compactions": [{"position_index": 6, "summary": "the first three turns",
                                      "first_kept_index": 7, "tokens_before": 1000}]}
    return Session.of(msgs, name="compacted", metadata=meta)


def test_no_counterfactual_ever_sends_the_recorded_summary_and_as_recorded_follows_it():
    s = compacted_session()
    r = replay(s, snapshots=True)
    for name in r.runs:
        for row in r.runs[name].rows:
            ids = [m.id for m in r.context(name, row.request)]
            if name == "as_recorded":
                if row.request >= 3:  # after the recorded compaction: the summary, not the first turns
                    assert "sum1" in ids and "mu0" not in ids
            else:
                assert "sum1" not in ids, (name, row.request)
    full_last = [m.id for m in r.context("full", len(r.requests) - 1)]
    assert full_last[:2] == ["mu0", "ma0"] and len(full_last) == 11  # the whole conversation, no summary


def test_a_strategy_over_the_window_is_infeasible_from_that_request_and_never_ranked(tmp_path):
    calls = [Message(id="u0", role="user", content="start")]
    for k in range(12):
        calls += [Message(id=f"a{k}", role="assistant", content="", tool_calls=(ToolCall(f"c{k}", "read", {"k": k}),)),
                  Message(id=f"r{k}", role="tool", content=f"file {k} " + "data " * 400, tool_call_id=f"c{k}",
                          tool_name="read")]
    calls.append(Message(id="end", role="assistant", content="done"))
    s = Session.of(calls, name="grows")
    window = 3_000
    settings = ReplaySettings(context_window=window, reserve_tokens=500, keep_recent_tokens=600)
    r = replay(s, settings=settings)
    # Our own count of the conversation before each assistant message (no recorded usage: scale 1).
    counter = get_counter()
    sizes, total = [], 0
    for m in calls:
        if m.role == "assistant":
            sizes.append(total)
        total += message_tokens(m, counter)
    first_over = next(k for k, n in enumerate(sizes) if n > window)
    full = r.runs["full"].totals
    assert (full["feasible"], full["infeasible_from"]) == (False, first_over)
    assert full["infeasible_reason"] == (f"full: infeasible from request {first_over}, where the context reaches "
                                         f"{sizes[first_over]:,} tokens over a 3,000-token window; this session "
                                         "needed compaction")
    assert full["dollars"] == pytest.approx(sum(row.dollars for row in r.runs["full"].rows[:first_over]), abs=1e-6)
    for name in ("truncate", "compact", "cache_aware_prune", "prune_then_compact"):  # they make room
        assert r.runs[name].totals["feasible"], name
    path = tmp_path / "grows.jsonl"
    path.write_text(dumps(s))
    p = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--context-window", "3000",
                        "--reserve-tokens", "500", "--keep-recent-tokens", "600"], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    partial = money(sum(row.dollars for row in r.runs["full"].rows[:first_over]))  # never an amount of its own
    assert f"not ranked: full: n/a: over the window from request {first_over} ({partial} up to there)" in p.stdout
    assert f"({partial})" not in p.stdout and f"−{partial}" not in p.stdout


def test_clear_tool_uses_is_not_applicable_to_an_openai_session():
    msgs = [m for k, t in enumerate((0, 30)) for m in turn("m", k, T0 + t, model="gpt-4.1")]
    r = replay(Session.of(msgs), ["full", "clear_tool_uses"], settings=ReplaySettings(provider="openai"))
    t = r.runs["clear_tool_uses"].totals
    assert not t["applicable"] and not t["feasible"] and "not applicable" in t["not_applicable_reason"]
    assert r.runs["full"].totals["applicable"]


def test_real_claude_code_compaction_full_sends_no_recorded_summary_and_is_infeasible(real_data):
    """codemie-session-624a4a58 compacted once (compact_boundary + isCompactSummary): full replays the
    conversation without the summary, and the whole conversation outgrows the 200k window."""
    from pruner import load_session
    from pruner.compaction.cut import is_summary_message

    s = load_session(real_data / "claude-code" / "codemie-session-624a4a58.jsonl")
    r = replay(s, ["as_recorded", "full", "compact"], snapshots=True, recall=False)
    assert any(is_summary_message(m) for q in r.requests for m in r.context("as_recorded", q.index))
    assert not any(is_summary_message(m) for q in r.requests for m in r.context("full", q.index))
    full = r.runs["full"].totals
    rows = r.runs["full"].rows
    first_over = next(row.request for row in rows if row.input > row.window)
    assert (full["feasible"], full["infeasible_from"]) == (False, first_over)
    assert full["dollars"] == pytest.approx(sum(row.dollars for row in rows[:first_over]), abs=1e-6)
    assert r.runs["compact"].totals["feasible"] and r.runs["as_recorded"].totals["feasible"]


def test_the_lookback_counts_a_run_of_tool_uses_and_a_run_of_tool_results_as_one_position_each():
    from pruner.replay.wire import lookback_start

    calls = tuple(ToolCall(f"c{k}", "read", {"k": k}) for k in range(5))
    turn_ = [Message(id="a", role="assistant", content="reading five files", tool_calls=calls)]
    turn_ += [Message(id=f"r{k}", role="tool", content="x", tool_call_id=f"c{k}") for k in range(5)]
    messages = [Message(id="u", role="user", content="go"), *turn_, Message(id="a2", role="assistant", content="ok")]
    # From the end: a2 (1), the five results (1 together), the call's text and its run of five tool_use
    # blocks (2), u (1); the breakpoint's own block counts as the first of the lookback's positions.
    assert lookback_start(messages, 3) == 2  # a2 and the run of results: 2 positions after the breakpoint's
    assert lookback_start(messages, 4) == 2  # the call's 2 positions do not fit in the one left
    assert lookback_start(messages, 5) == 1
    assert lookback_start(messages, 6) == 0
    assert lookback_start(messages, 20) == 0


def _tool_session(n: int = 8) -> Session:
    msgs = [Message(id="u0", role="user", content="start")]
    for k in range(n):
        msgs += [Message(id=f"a{k}", role="assistant", content="",
                         tool_calls=(ToolCall(f"c{k}", "read" if k % 2 else "grep", {"path": "x" * 300}),)),
                 Message(id=f"r{k}", role="tool", content="data " * 300, tool_call_id=f"c{k}",
                         tool_name="read" if k % 2 else "grep")]
    msgs.append(Message(id="end", role="assistant", content="done"))
    return Session.of(msgs)


def test_clear_tool_uses_triggers_on_tool_uses_and_clears_tool_inputs_as_documented():
    s = _tool_session()
    base = dict(clear_keep=2, clear_trigger=4, clear_trigger_type="tool_uses")
    r = replay(s, ["clear_tool_uses"], settings=ReplaySettings(**base), snapshots=True)
    rows = r.runs["clear_tool_uses"].rows
    # The context holds k tool uses at request k (the call of request k-1 and before): more than 4 from request 5.
    first = next(row.request for row in rows if row.events)
    assert first == 5
    ctx = r.context("clear_tool_uses", first)
    placeholders = [m for m in ctx if m.metadata.get("kind") == "placeholder"]
    assert len(placeholders) == 3  # results of calls 0..2: all but the newest 2 tool uses (3 and 4)
    assert all(c.arguments for m in ctx for c in m.tool_calls)  # inputs kept by default
    r = replay(s, ["clear_tool_uses"], settings=ReplaySettings(**base, clear_tool_inputs=True), snapshots=True)
    ctx = r.context("clear_tool_uses", first)
    emptied = {c.id for m in ctx for c in m.tool_calls if not c.arguments}
    assert emptied == {"c0", "c1", "c2"}
    r = replay(s, ["clear_tool_uses"], settings=ReplaySettings(**base, clear_tool_inputs=("read",)), snapshots=True)
    ctx = r.context("clear_tool_uses", first)
    assert {c.id for m in ctx for c in m.tool_calls if not c.arguments} == {"c1"}  # only read's inputs
    with pytest.raises(Exception, match="clear_trigger_type"):
        ReplaySettings(clear_trigger_type="messages")


def test_what_the_recording_shows_accepted_is_never_infeasible():
    """A recorded context over the price table's window (a 1M-token beta, an outdated table) was accepted:
    the model's window is at least that from that request on, so as_recorded stays feasible."""
    big = {"input": 5, "output": 7, "cache_read": 0, "cache_write": 400_000}
    msgs = turn("m", 0, T0, usage=big) + turn("m", 1, T0 + 10, usage={**big, "cache_read": 400_000,
                                                                       "cache_write": 1_000})
    r = replay(Session.of(msgs), ["as_recorded", "full"])
    assert [q.window for q in r.requests] == [400_005, 401_005]
    assert r.runs["as_recorded"].totals["feasible"] and r.runs["full"].totals["feasible"]


@pytest.mark.parametrize("window, reserve", [(None, 16_384), (2, 0), (1_000, 16_384), (16_385, 16_384),
                                             (200_000, 10**6), (2 * 10**9, 1)])
def test_huge_in_bound_usage_never_turns_the_reserve_negative(window, reserve):
    """Reliability's fuzz case (STATUS 20:24): in-bound recorded usage of 1,065,536 then 10**9 tokens on a
    2-request session made the measured scale convert the reserve to -1 ("compaction setting
    reserve_tokens must be a non-negative integer, got -1"). Every strategy must replay, with the
    compaction settings it derives non-negative.

    Defect 23 (its 5-second symptom)."""
    from pruner.replay.strategies.compactor import Compactor

    msgs = [Message(id="u0", role="user", content="hello " * 50),
            Message(id="a0", role="assistant", content="ok", metadata={"usage": usage(65_536, 7, 0, 1_000_000)}),
            Message(id="u1", role="user", content="again " * 50),
            Message(id="a1", role="assistant", content="ok", metadata={"usage": usage(3, 0, 0, 10**9)})]
    s = Session.of(msgs)
    for provider in ("anthropic", "openai"):
        settings = ReplaySettings(provider=provider, context_window=window, reserve_tokens=reserve)
        r = replay(s, settings=settings, snapshots=False, recall=False)
        assert set(r.runs) and all(len(run.rows) == 2 for run in r.runs.values())
        for req in r.requests:
            env = type("Env", (), {"settings": settings, "summarizer": None})()
            c = Compactor(env).settings(req)
            assert c.reserve_tokens >= 0 and c.keep_recent_tokens >= 0 and c.context_window > c.reserve_tokens


def test_the_verdict_never_reads_an_unpriced_session_as_free():
    """The verdict said "Recorded: $0.0000. Cheapest strategy ...: full, $0.0000 (n/a)" on a session whose
    every request is of a made-up model.

    QA 19, defect 10."""
    from pruner.replay import verdict

    only = [m for k, t in enumerate((0, 30)) for m in turn("m", k, T0 + t, model="made-up-model-9",
                                                             usage=usage(10, 20, 0, 1500))]
    v = verdict(replay(Session.of(only, name="v")))
    assert v.best is None and "$" not in v.sentence and "unpriced (all 2 requests" in v.sentence
    mixed = only + turn("m", 2, T0 + 60, usage=usage(10, 20, 1500, 300))
    v = verdict(replay(Session.of(mixed, name="v2")))
    # the requests left out are counted and their model named (issue 41: the bill names what it cannot price)
    assert "leave out 2 requests of models without a list price (made-up-model-9)" in v.sentence, v.sentence
