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

EXAMPLES = {"dev": 100, "ci": 600, "nightly": 10_000}[profile()]
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
