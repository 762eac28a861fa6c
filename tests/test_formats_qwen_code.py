"""Qwen Code chat recordings (``pruner.formats.qwen_code``) and their bill-only reader.

The usage reading is checked on the two paths Qwen Code records by: the OpenAI-compatible one
(``candidatesTokenCount`` is ``completion_tokens``, thoughts inside it, ``totalTokenCount`` = prompt +
candidates) and Gemini's own (thoughts apart, counted in the total). The differential property: on
generated recordings (``tests/support/fuzz.py``'s hostile ``qwen_code_file``) the bill-only reader either
leaves the file to the full reader or gives its row exactly."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.errors import FormatError
from pruner.formats import load_session, loads
from pruner.formats.qwen_code import loads as qwen_loads
from tests.support.agent_rows import fast_row, full_row
from tests.support.fuzz import file_text
from tests.support.profile import profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sessions" / "qwen_code.jsonl"
EXAMPLES = {"dev": 100, "ci": 600, "nightly": 10_000}[profile()]


def _line(**fields) -> str:
    base = {"uuid": "u", "parentUuid": None, "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w",
            "version": "0.14.2"}
    return json.dumps({**base, **fields})


def _assistant(uuid: str, usage: dict, parts: list | None = None) -> str:
    return _line(uuid=uuid, type="assistant", model="qwen3-coder-plus", usageMetadata=usage,
                 message={"role": "model", "parts": parts or [{"text": "ok"}]})


def test_openai_compatible_usage_keeps_thoughts_inside_the_output():
    u = {"promptTokenCount": 1000, "cachedContentTokenCount": 800, "candidatesTokenCount": 50,
         "thoughtsTokenCount": 30, "totalTokenCount": 1050}
    got = qwen_loads(_assistant("a", u)).messages[0].metadata["usage"]
    assert got == {"input": 1000 - 800, "cache_read": 800, "cache_write": 0, "output": 50, "reasoning": 30}


def test_gemini_usage_adds_thoughts_counted_apart_and_tool_use_prompt():
    u = {"promptTokenCount": 1000, "cachedContentTokenCount": 0, "candidatesTokenCount": 50,
         "thoughtsTokenCount": 30, "toolUsePromptTokenCount": 7, "totalTokenCount": 1087}
    got = qwen_loads(_assistant("a", u)).messages[0].metadata["usage"]
    assert got == {"input": 1007, "cache_read": 0, "cache_write": 0, "output": 80, "reasoning": 30}


def test_cached_above_the_prompt_is_damage_dropped_and_reported():
    s = qwen_loads(_assistant("a", {"promptTokenCount": 5, "cachedContentTokenCount": 9}))
    assert "usage" not in s.messages[0].metadata
    assert [r["kind"] for r in s.metadata["repairs"]] == ["invalid_usage"]


def test_calls_results_system_records_and_subagent_chain():
    text = "\n".join([
        _line(uuid="s0", type="system", subtype="ui_telemetry"),
        _line(uuid="u1", type="user", message={"role": "user", "parts": [{"text": "go"}]}),
        _assistant("a1", {"promptTokenCount": 10}, [{"text": "think", "thought": True},
                                                    {"functionCall": {"id": "c1", "name": "read_file", "args": {}}}]),
        _line(uuid="t1", type="tool_result", toolCallResult={"status": "error"}, message={"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "read_file", "response": {"error": "no such file"}}}]}),
        _line(uuid="x1", type="assistant", isSidechain=True, agentId="explore-1", model="qwen3-coder-plus",
              message={"role": "model", "parts": [{"text": "sub"}]}, usageMetadata={"promptTokenCount": 3}),
    ])
    s = qwen_loads(text)
    assert [m.role for m in s.messages] == ["user", "assistant", "tool"]
    assert s.messages[1].metadata["thinking"] == "think" and s.messages[1].content == ""
    assert s.messages[2].tool_call_id == s.messages[1].tool_calls[0].id
    assert s.messages[2].content == "no such file" and s.messages[2].metadata["is_error"] is True
    assert s.metadata["source"]["system_records"] == {"ui_telemetry": 1}
    assert [(chain, [m.content for m in c.messages]) for chain, c in s.chains][1] == ("explore-1", ["sub"])


def test_sample_is_qwen_code_and_claude_code_sample_is_still_claude_code():
    assert load_session(SAMPLE).source_format == "qwen_code"
    assert load_session(ROOT / "sample_sessions" / "claude_code.jsonl").source_format == "claude_code"


def test_a_result_for_no_call_is_a_one_line_error_naming_file_line_and_field():
    text = "\n".join([_line(uuid="u1", type="user", message={"role": "user", "parts": [{"text": "go"}]}),
                      _line(uuid="t1", type="tool_result", message={"role": "user", "parts": [
                          {"functionResponse": {"id": "zz", "name": "f", "response": {"output": "x"}}}]})])
    with pytest.raises(FormatError) as e:
        loads(text, file="q.jsonl", format="qwen_code")
    message = str(e.value)
    assert "\n" not in message and message.startswith("q.jsonl:2: message.parts[0].functionResponse:")
    assert "'zz'" in message


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(st.data())
def test_bill_only_reader_gives_the_full_row_or_leaves_the_file(data):
    text = data.draw(file_text("qwen_code"), label="file")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        fast = fast_row("qwen_code", path)
        if fast is not None:
            assert fast == full_row("qwen_code", path)


@pytest.mark.parametrize("junk", [b"1e999", b"9" * 5000, b'"\xed\xa0\x80"'], ids=["overflow", "digits", "not-utf8"])
def test_regression_what_msgspec_skips_unchecked_sends_the_file_to_the_full_reader(tmp_path, junk):
    """msgspec skips a field the typed decoder does not declare without checking its number's range or
    its string's UTF-8; the strict reader refuses both (the line is skipped, or the file refused)."""
    good = _assistant("a", {"promptTokenCount": 10}).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(good + b"\n" + good[:-1].replace(b'"uuid": "a"', b'"uuid": "b"') + b', "extra": ' + junk + b"}\n")
    assert fast_row("qwen_code", path) is None
    assert "error" in full_row("qwen_code", path) or full_row("qwen_code", path)["damaged_lines"] == 1
