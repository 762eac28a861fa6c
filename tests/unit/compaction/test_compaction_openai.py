"""The OpenAI summariser against a real local Chat Completions server, with the real ``openai`` client.

Every fault leaves the session untouched, names its cause, keeps the offline
summary available (``on_error="fallback"``), and never shows the key: not in the
error, not in any log record (DEBUG, including the client's and the HTTP
library's loggers), not on stdout/stderr.
"""

from __future__ import annotations

import copy
import json
import logging
import time

import pytest

from pruner.compaction import CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact
from pruner.errors import ConfigurationError, SummarizerError
from pruner.model import Message, Session, ToolCall
from tests.support.openai_server import FULL_SUMMARY, PARTIAL_SUMMARY, Reply, completion, unused_url

KEY = "sk-local-test-7f3a9c1e5b2d4680"
SETTINGS = CompactionSettings(keep_recent_tokens=40)


def session(split: bool = False) -> Session:
    msgs = [Message(id="u1", role="user", content="Rename the config loader. Never break the CLI. " * 5),
            Message(id="a1", role="assistant", content="", tool_calls=(ToolCall("c1", "read", {"path": "cfg.py"}),)),
            Message(id="r1", role="tool", content="def load(): ...", tool_call_id="c1"),
            Message(id="a2", role="assistant", content="Renamed load to load_config. " * 5)]
    if split:
        msgs += [Message(id="u2", role="user", content="now the docs please " * 5),
                 Message(id="a3", role="assistant", content="", tool_calls=(ToolCall("c2", "read",
                                                                                   {"path": "README.md"}),)),
                 Message(id="r2", role="tool", content="# Docs", tool_call_id="c2"),
                 Message(id="a4", role="assistant", content="Docs updated for load_config. " * 6)]
    else:
        msgs += [Message(id="u2", role="user", content="thanks, that is all for now " * 6)]
    return Session.of(msgs, name="openai-test")


def summarizer(url: str, **kw) -> OpenAISummarizer:
    options = dict(base_url=url, model="test-model", api_key=KEY, timeout=2.0, max_retries=2,
                   backoff_seconds=0.01, max_output_tokens=512)
    options.update(kw)
    return OpenAISummarizer(**options)


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "pruner"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def assert_key_never_shown(*texts, caplog=None, capsys=None):
    for text in texts:
        assert KEY not in text
    if caplog is not None:
        for record in caplog.records:
            assert KEY not in record.getMessage()
            assert KEY not in str(record.args)
        assert KEY not in caplog.text
    if capsys is not None:
        out, err = capsys.readouterr()
        assert KEY not in out and KEY not in err


# -- the normal answer ------------------------------------------------------------------------------

def test_normal_answer_is_used_and_the_exact_request_is_sent(openai_server, logs, capsys):
    server = openai_server("ok")
    s = session(split=True)
    r = compact(s, SETTINGS, summarizer(server.url), force=True)
    assert r.split_turn and r.error is None and r.summarizer_name == "openai/test-model"
    assert r.summary.startswith(FULL_SUMMARY.strip())
    assert "## Original Request" in r.summary and "turn prefix" in r.sections["Original Request"]
    assert len(server.requests) == 2  # history, then the turn's prefix
    first, second = (req.body for req in server.requests)
    assert first["messages"] == r.request.as_messages() and second["messages"] == r.prefix_request.as_messages()
    assert first["model"] == "test-model" and first["max_tokens"] == 512
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # sent to the server, nowhere else
    assert_key_never_shown(r.summary, json.dumps(r.to_dict(include_request=True)), repr(r),
                           caplog=logs, capsys=capsys)


def test_base_url_and_key_come_from_the_standard_environment_variables(openai_server, monkeypatch):
    server = openai_server("ok")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    s = OpenAISummarizer(model="env-model", timeout=2.0)
    assert KEY not in repr(s)
    r = compact(session(), SETTINGS, s, force=True)
    assert r.error is None and server.requests[0].body["model"] == "env-model"


def test_rate_limit_then_success_is_retried(openai_server, logs, capsys):
    server = openai_server(["rate_limited", "ok"])
    r = compact(session(), SETTINGS, summarizer(server.url), force=True)
    assert r.error is None and r.summary.startswith(FULL_SUMMARY.strip())
    assert len(server.requests) == 2
    assert any("429" in rec.getMessage() for rec in logs.records if rec.name.startswith("pruner"))
    assert_key_never_shown(caplog=logs, capsys=capsys)


# -- faults ---------------------------------------------------------------------------------------

FAULTS = {
    "unauthorized": ("unauthorized", {}, ["HTTP 401", "API key"], 1),
    "server_error": ("server_error", {}, ["gave up after 3 attempts", "HTTP 500"], 3),
    "hang": ("hang", {"timeout": 0.3, "max_retries": 0}, ["timeout", "0.3 s"], 1),
    "empty": ("empty", {}, ["empty"], 1),
    "missing_sections": ("missing_sections", {}, ["## Next Steps", "## Critical Context", "without the required"],
                         1),
    "cut_at_max_tokens": (Reply(200, completion(PARTIAL_SUMMARY, finish_reason="length")), {},
                          ["## Next Steps", "max_output_tokens"], 1),
    "not_running": (None, {}, ["cannot connect", "gave up after 3 attempts"], 0),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_every_fault_names_its_cause_keeps_the_session_and_the_offline_summary(case, openai_server, logs, capsys):
    behaviour, options, expected, n_requests = FAULTS[case]
    server = openai_server(behaviour, hang_seconds=10.0) if behaviour is not None else None
    url = server.url if server else unused_url()
    s = session()
    before = copy.deepcopy(s)
    start = time.monotonic()
    with pytest.raises(SummarizerError) as info:
        compact(s, SETTINGS, summarizer(url, **options), force=True)
    message = str(info.value)
    for text in expected:
        assert text in message
    assert "test-model" in message and url.split("//")[1].split("/")[0] in message
    # No chained client exception: its text could quote the key back from the server.
    assert info.value.__cause__ is None and info.value.__context__ is None
    if case == "hang":
        assert time.monotonic() - start < 5  # the 0.3 s timeout fired, not the 10 s hang
    fallback = compact(s, SETTINGS, summarizer(url, **options), force=True, on_error="fallback")
    offline = compact(s, SETTINGS, OfflineSummarizer(), force=True)
    assert fallback.error == message
    assert fallback.summary == offline.summary and fallback.compacted.messages[1:] == offline.compacted.messages[1:]
    assert fallback.summarizer_name == "offline (fallback: openai/test-model failed)"
    assert s == before
    if server is not None:
        assert len(server.requests) == 2 * n_requests
    assert_key_never_shown(message, fallback.error, json.dumps(fallback.to_dict()), caplog=logs, capsys=capsys)


def test_a_hanging_server_shuts_down_promptly(openai_server):
    server = openai_server("hang", hang_seconds=30.0)
    with pytest.raises(SummarizerError):
        compact(session(), SETTINGS, summarizer(server.url, timeout=0.2, max_retries=0), force=True)
    start = time.monotonic()
    server.close()
    assert time.monotonic() - start < 3


def test_missing_key_is_reported_without_a_request(openai_server, monkeypatch):
    server = openai_server("ok")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s = OpenAISummarizer(base_url=server.url, model="m")
    with pytest.raises(SummarizerError, match="OPENAI_API_KEY"):
        compact(session(), SETTINGS, s, force=True)
    assert server.requests == []
    r = compact(session(), SETTINGS, s, force=True, on_error="fallback")
    assert "OPENAI_API_KEY" in r.error and r.sections


def test_bad_options_are_refused():
    # A setting is a ConfigurationError (the error tree's kind for settings), raised at once.
    with pytest.raises(ConfigurationError, match="timeout"):
        OpenAISummarizer(api_key=KEY, timeout=0)
    with pytest.raises(ConfigurationError, match="max_retries"):
        OpenAISummarizer(api_key=KEY, max_retries=-1)


def test_llm_summary_not_claimed_when_nothing_is_compacted(openai_server):
    """Regression (issue 10): with nothing to cut, the result named the LLM summariser as if it had
    written a summary, so the README's ``print(r.error or "LLM summary used")`` claimed an LLM call."""
    server = openai_server(["ok"])
    s = session()
    r = compact(s, CompactionSettings(keep_recent_tokens=100_000), summarizer(server.url), force=True,
                on_error="fallback")
    assert r.cut_index is None and r.request is None and r.summary == ""
    assert (r.summarizer_name, r.error) == ("none", None) and server.requests == []
    called = compact(s, SETTINGS, summarizer(server.url), force=True, on_error="fallback")
    assert called.summarizer_name == "openai/test-model" and len(server.requests) == 1
