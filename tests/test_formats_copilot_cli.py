"""GitHub Copilot CLI session event logs (``pruner.formats.copilot_cli``) and their bill-only reader.

Copilot CLI keeps a request's output tokens on its ``assistant.message`` and the session's input, cache
and output totals on ``session.shutdown`` (its ``assistant.usage`` events are ephemeral, never on disk);
these tests check where each count lands, that a log which does hold usage events is billed from them,
and the differential property: on generated logs (``tests/support/fuzz.py``'s ``copilot_cli_file``)
the bill-only reader either leaves the file to the full reader or gives its row exactly."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.errors import FormatError
from pruner.formats import loads
from pruner.formats.copilot_cli import loads as copilot_loads
from pruner.replay import bill
from tests.support.agent_rows import fast_row, full_row
from tests.support.fuzz import file_text
from tests.support.profile import profile

# CI: 150 generated files (was 600: the Copilot property took 194 s of the three-worker run of 2026-12-07,
# issue 43); the derandomized CI draw repeats a fixed list, the nightly profile draws 10,000 fresh ones.
EXAMPLES = {"dev": 100, "ci": 150, "nightly": 10_000}[profile()]
START = {"type": "session.start", "id": "e0", "timestamp": "2026-01-01T00:00:00Z",
         "data": {"sessionId": "s1", "context": {"cwd": "/w"}}}


def _ev(i: str, typ: str, data: dict, **extra) -> dict:
    return {"type": typ, "id": i, "timestamp": "2026-01-01T00:00:01Z", "parentId": None, "data": data, **extra}


def _reply(i: str, call: str, out: int, model: str = "gpt-5", **data) -> dict:
    return _ev(i, "assistant.message", {"messageId": f"m-{i}", "apiCallId": call, "model": model, "content": "ok",
                                        "outputTokens": out, **data})


def _text(*events: dict) -> str:
    return "\n".join(json.dumps(e) for e in (START, *events))


def _shutdown(models: dict, agents: dict | None = None) -> dict:
    data = {"shutdownType": "routine", "modelMetrics": models}
    if agents is not None:
        data["agentMetrics"] = agents
    return _ev("end", "session.shutdown", data)


def _u(inp: int, read: int, out: int, write: int = 0) -> dict:
    return {"usage": {"inputTokens": inp, "cacheReadTokens": read, "cacheWriteTokens": write, "outputTokens": out}}


def test_shutdown_totals_land_on_each_models_last_request_with_the_output_not_yet_counted():
    s = copilot_loads(_text(_reply("a", "c1", 10), _reply("b", "c2", 20), _shutdown({"gpt-5": _u(5000, 4000, 45)})))
    usages = [m.metadata["usage"] for m in s.messages]
    assert usages[0] == {"input": 0, "output": 10, "cache_read": 0, "cache_write": 0}
    assert usages[1] == {"input": 1000, "cache_read": 4000, "cache_write": 0, "output": 20 + (45 - 30)}
    assert sum(u["output"] for u in usages) == 45 and s.metadata["source"]["usage_totals"] == "session.shutdown"


def test_chunks_of_one_api_call_are_one_request():
    s = copilot_loads(_text(_reply("a", "c1", 10), _reply("b", "c1", 10, content="more")))
    assert len(s.messages) == 1 and s.messages[0].content == "ok\nmore"
    assert s.messages[0].metadata["usage"]["output"] == 10


def test_agent_totals_go_to_their_subagent_chain_and_a_total_without_a_request_becomes_one():
    s = copilot_loads(_text(_reply("a", "c1", 10), _ev("b", "assistant.message", {
        "messageId": "mb", "apiCallId": "c2", "model": "gpt-4.1", "content": "sub", "outputTokens": 5}, agentId="x"),
        _shutdown({}, {"main": {"modelMetrics": {"gpt-5": _u(100, 0, 10), "gpt-5-mini": _u(50, 0, 3)}},
                       "x": {"modelMetrics": {"gpt-4.1": _u(70, 0, 5)}}})))
    chains = dict(s.chains)
    assert [m.metadata["usage"]["input"] for m in chains["x"].messages] == [70]
    assert [(m.metadata.get("model"), m.metadata["usage"]["input"]) for m in chains["main"].messages] == [
        ("gpt-5", 100), ("gpt-5-mini", 50)]
    assert s.metadata["source"]["usage_totals"] == "session.shutdown"


def test_usage_events_when_recorded_bill_each_request_and_the_totals_are_not_added():
    usage = _ev("u", "assistant.usage", {"apiCallId": "c1", "model": "gpt-5", "inputTokens": 900,
                                         "cacheReadTokens": 800, "outputTokens": 10})
    s = copilot_loads(_text(_reply("a", "c1", 10), usage, _shutdown({"gpt-5": _u(99999, 0, 10)})))
    assert s.messages[0].metadata["usage"] == {"input": 100, "output": 10, "cache_read": 800, "cache_write": 0}
    assert round(bill(s).dollars, 9) == round((100 * 1.25 + 800 * 0.125 + 10 * 10) / 1e6, 9)


def test_a_running_session_bills_its_output_and_says_so():
    s = copilot_loads(_text(_reply("a", "c1", 10)))
    assert s.messages[0].metadata["usage"] == {"input": 0, "output": 10, "cache_read": 0, "cache_write": 0}
    assert s.metadata["source"]["usage_totals"].startswith("absent")


def test_tool_result_links_to_its_call_and_a_tool_the_person_ran_is_not_a_message():
    call = {"toolCallId": "t1", "name": "bash", "arguments": {"command": "ls"}}
    s = copilot_loads(_text(_reply("a", "c1", 10, toolRequests=[call]),
                            _ev("r", "tool.execution_complete", {"toolCallId": "t1", "success": False,
                                                                 "error": {"message": "denied"}}),
                            _ev("p", "tool.execution_complete", {"toolCallId": "t9", "success": True,
                                                                 "result": {"content": "x"}})))
    assert [m.role for m in s.messages] == ["assistant", "tool"]
    assert s.messages[1].content == "denied" and s.messages[1].metadata["is_error"] is True
    assert s.metadata["source"]["events"] == {"tool.execution_complete (no model call)": 1}


def test_tool_requests_of_the_wrong_type_are_a_one_line_error_naming_file_line_and_field():
    with pytest.raises(FormatError) as e:
        loads(_text(_reply("a", "c1", 1, toolRequests={"toolCallId": "t"})), file="c.jsonl", format="copilot_cli")
    assert str(e.value).startswith("c.jsonl:2: data.toolRequests:") and "\n" not in str(e.value)


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(st.data())
def test_bill_only_reader_gives_the_full_row_or_leaves_the_file(data):
    text = data.draw(file_text("copilot_cli"), label="file")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        fast = fast_row("copilot_cli", path)
        if fast is not None:
            assert fast == full_row("copilot_cli", path)


# -- issue 41: Copilot CLI 1.0.x's own accounting -----------------------------------------------------------------

#: USD per million tokens, from Anthropic's price page (input, cache read, 5-minute cache write, output).
OPUS_45 = (5.0, 0.5, 6.25, 25.0)
HAIKU_45 = (1.0, 0.1, 1.25, 5.0)
SONNET_45 = (3.0, 0.3, 3.75, 15.0)


def _dollars(price: tuple[float, float, float, float], uncached: int, read: int, written: int, out: int) -> float:
    return (uncached * price[0] + read * price[1] + written * price[2] + out * price[3]) / 1e6


def _metric(inp: int, read: int, write: int, out: int, uncached: int | None = None, count: int = 1) -> dict:
    """A ``modelMetrics`` entry as Copilot CLI 1.0.x writes it: ``inputTokens`` holds the cache reads and the
    cache writes; ``tokenDetails.input`` is the uncached part."""
    m = {"requests": {"count": count, "cost": 1}, "totalNanoAiu": 123,
         "usage": {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": read, "cacheWriteTokens": write,
                   "reasoningTokens": 0}}
    if uncached is not None:
        m["tokenDetails"] = {"input": {"tokenCount": uncached}, "output": {"tokenCount": out}}
    return m


def _both(tmp_path: Path, *events: dict, lines: list[dict] | None = None) -> tuple[dict, dict]:
    """The row both readers make of the events (the session.start first unless ``lines`` are given)."""
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in (lines if lines is not None else (START, *events))) + "\n")
    return full_row("copilot_cli", path), fast_row("copilot_cli", path)


def test_copilot_shutdown_input_tokens_hold_the_cache_writes_so_they_are_billed_once(tmp_path):
    # The figures of a real 1.0.x session: 596,075 input = 2,373 uncached + 536,945 read + 56,757 written.
    inp, read, write, out = 596_075, 536_945, 56_757, 9_000
    shutdown = _ev("end", "session.shutdown", {"shutdownType": "routine", "sessionStartTime": 1767225600000,
                                               "modelMetrics": {"claude-opus-4.5": _metric(inp, read, write, out,
                                                                                           uncached=2_373)}})
    full, fast = _both(tmp_path, _reply("a", "c1", 4_000, model="claude-opus-4.5"),
                       _reply("b", "c2", 5_000, model="claude-opus-4.5"), shutdown)
    want = _dollars(OPUS_45, 2_373, read, write, out)
    assert full["billed"] == pytest.approx(want, abs=1e-9)
    assert fast == full
    s = copilot_loads((tmp_path / "events.jsonl").read_text())
    billed = [m.metadata["usage"] for m in s.messages if m.metadata["usage"]["cache_read"]]
    assert billed == [{"input": 2_373, "output": 5_000, "cache_read": read, "cache_write": write, "reasoning": 0}]


def test_copilot_input_without_token_details_leaves_out_both_the_reads_and_the_writes(tmp_path):
    inp, read, write, out = 10_000, 6_000, 3_000, 100
    full, fast = _both(tmp_path, _reply("a", "c1", out, model="claude-sonnet-4.5"),
                       _shutdown({"claude-sonnet-4.5": _metric(inp, read, write, out)}))
    assert full["billed"] == pytest.approx(_dollars(SONNET_45, inp - read - write, read, write, out), abs=1e-9)
    assert fast == full


def _resumed(tmp_path: Path, *, resume: bool = True) -> tuple[list[dict], dict, dict]:
    """A session run twice: the first run's Opus and a Haiku subagent, then (resumed) more Opus. Each run's
    shutdown covers that run only."""
    run1 = [START,
            _ev("mc", "session.model_change", {"newModel": "claude-opus-4.5"}),
            _reply("a", "c1", 300, model="claude-opus-4.5"),
            _ev("h", "assistant.message", {"messageId": "mh", "apiCallId": "c2", "model": "claude-haiku-4.5",
                                           "content": "sub", "outputTokens": 50}, agentId="task-1"),
            _ev("end1", "session.shutdown", {"shutdownType": "routine", "sessionStartTime": 1767225600000,
                                             "modelMetrics": {"claude-opus-4.5": _metric(50_000, 40_000, 8_000, 300,
                                                                                         uncached=2_000),
                                                              "claude-haiku-4.5": _metric(9_000, 0, 0, 50,
                                                                                          uncached=9_000)}})]
    run2 = ([_ev("r", "session.resume", {"resumeTime": "2026-01-02T00:00:00Z", "eventCount": 5,
                                         "selectedModel": "claude-opus-4.5", "context": {"cwd": "/w"}})]
            if resume else [])
    run2 += [_reply("b", "c3", 700, model="claude-opus-4.5"),
             _ev("end2", "session.shutdown", {"shutdownType": "routine", "sessionStartTime": 1767225600000,
                                              "modelMetrics": {"claude-opus-4.5": _metric(90_000, 80_000, 6_000,
                                                                                          700, uncached=4_000)}})]
    lines = run1 + run2
    full, fast = _both(tmp_path, lines=lines)
    return lines, full, fast


def test_a_resumed_copilot_session_sums_every_runs_shutdown_per_model_subagents_included(tmp_path):
    lines, full, fast = _resumed(tmp_path)
    # The test's own sum over the raw shutdowns: every run, every model, each uncached input as recorded.
    want = 0.0
    for e in lines:
        if e["type"] == "session.shutdown":
            for model, m in e["data"]["modelMetrics"].items():
                u = m["usage"]
                price = OPUS_45 if "opus" in model else HAIKU_45
                want += _dollars(price, m["tokenDetails"]["input"]["tokenCount"], u["cacheReadTokens"],
                                 u["cacheWriteTokens"], u["outputTokens"])
    assert full["billed"] == pytest.approx(want, abs=1e-9)
    assert fast == full
    s = copilot_loads((tmp_path / "events.jsonl").read_text())
    outputs = sum(m.metadata["usage"]["output"] for _, chain in s.chains for m in chain.messages
                  if m.role == "assistant")
    assert outputs == 300 + 50 + 700  # each output token once: the messages' and the totals' not both
    assert s.metadata["source"]["usage_totals"] == "session.shutdown: 2 runs summed"
    assert not any(r["kind"] == "overlapping_shutdowns" for r in s.metadata.get("repairs", ()))


def test_two_copilot_shutdowns_with_no_resume_between_them_are_summed_and_reported(tmp_path):
    _, full, fast = _resumed(tmp_path, resume=False)
    assert fast == full
    s = copilot_loads((tmp_path / "events.jsonl").read_text())
    overlap = [r for r in s.metadata.get("repairs", ()) if r["kind"] == "overlapping_shutdowns"]
    assert len(overlap) == 1 and overlap[0]["lines"] == [7], overlap


def test_a_copilot_reply_without_a_model_is_the_model_that_session_model_change_selected(tmp_path):
    # Copilot CLI 1.0.10: assistant.message has no model; session.model_change names it; no shutdown yet.
    change = _ev("mc", "session.model_change", {"newModel": "claude-sonnet-4.5", "previousModel": None})
    reply = _ev("a", "assistant.message", {"messageId": "ma", "apiCallId": "c1", "content": "ok",
                                           "outputTokens": 1_000})
    full, fast = _both(tmp_path, change, reply)
    assert json.loads(full["models"]) == {"claude-sonnet-4.5": 1}
    assert full["billed"] == pytest.approx(1_000 * SONNET_45[3] / 1e6, abs=1e-12)
    assert full["unpriced_requests"] == 0
    assert fast == full


def test_replaying_a_copilot_session_whose_usage_is_one_lump_refuses_the_counterfactuals(tmp_path, capsys):
    """Issue 41: "full $126.44" against a $3.32 bill. The shutdown's totals are one lump per run, so a
    per-request replay has nothing to compare with: pruner replay says so in one line, with the bill, and
    pruner logs keeps the bill with no modelled or strategy figure."""
    from pruner.cli import main
    from pruner.logs.money import money_columns

    read, write, out = 40_000, 8_000, 300
    path = tmp_path / "events.jsonl"
    path.write_text(_text(_reply("a", "c1", out, model="claude-opus-4.5"),
                          _shutdown({"claude-opus-4.5": _metric(50_000, read, write, out, uncached=2_000)})) + "\n")
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    want = _dollars(OPUS_45, 2_000, read, write, out)
    assert len(err.splitlines()) == 1 and "no strategy can be replayed" in err and f"${want:,.4f}" in err, err
    row = money_columns(copilot_loads(path.read_text()), ("full", "truncate"))
    assert row["billed"] == pytest.approx(want, abs=1e-9)
    assert row.get("modelled") is None and row.get("full_dollars") is None and row["money_error"] is None


def test_a_legacy_copilot_session_that_records_no_usage_has_no_bill_not_a_bill_of_zero(tmp_path, monkeypatch, capsys):
    """Issue 41: Copilot CLI's first (pre-1.0) flat ``session-state/<id>.jsonl`` files record the replies with
    no outputTokens and no shutdown: 127 requests showed as $0 priced with 0 unpriced. The row's bill is
    null, and the headline says the session holds no usage."""
    import pyarrow.parquet as pq

    from pruner.cli import main
    from pruner.logs.table import TABLE

    home = tmp_path / "home"
    state = home / ".copilot" / "session-state"
    state.mkdir(parents=True)
    replies = [_ev(f"a{k}", "assistant.message", {"messageId": f"m{k}", "content": "ok"}) for k in range(3)]
    users = [_ev(f"u{k}", "user.message", {"content": "go"}) for k in range(3)]
    events = [START] + [e for pair in zip(users, replies) for e in pair]
    (state / "0b6c5a3e-legacy.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    assert main(["logs", "--agent", "copilot_cli", "--out", str(tmp_path / "out"), "--bill-only"]) == 0
    out = capsys.readouterr().out
    (row,) = pq.read_table(tmp_path / "out" / TABLE).to_pylist()
    assert row["error"] is None and row["requests_main"] == len(replies)
    assert row["billed"] is None and row["unpriced_requests"] == 0
    assert "1 session holds no usage (the log records none: no bill, not $0)" in out, out
