"""Regression tests for issue 23's money and real-log defects 5, 6, 22, 23 and 24.

They use only what main had before the fix (``loads``, ``load_session``,
``parse_prices``, ``replay``, ``find_requests``), so they run against the old
main too, where each of them failed.
"""

from __future__ import annotations

import json
import math

import pytest

from pruner.errors import ConfigurationError, FormatError
from pruner.formats import load_session, loads
from pruner.replay import replay
from pruner.replay.prices import default_prices, parse_prices
from pruner.replay.requests import find_requests


def _cc(kind, uuid, parent, message, **extra):
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": False,
                       "message": message, **extra})


def _reply(uuid, parent, usage, **extra):
    return _cc("assistant", uuid, parent, {"role": "assistant", "id": f"msg_{uuid}", "model": "claude-sonnet-4-5",
                                           "content": [{"type": "text", "text": "ok"}], "usage": usage}, **extra)


def test_huge_usage_is_refused_at_import_naming_line_and_field():
    """Round 3, defect 05."""
    usage = {"input_tokens": 1e307, "output_tokens": 5, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 0}
    text = "\n".join([_cc("user", "u1", None, {"role": "user", "content": "go"}), _reply("a1", "u1", usage)])
    session = loads(text, file="huge.jsonl", format="claude_code")  # an agent log: repaired, reported
    repair = next(r for r in session.metadata.get("repairs", []) if "usage" in r["message"])
    assert repair["lines"] == [2] and "input_tokens" in repair["message"]
    assert "usage" not in session.messages[1].metadata
    replay(session, ["as_recorded", "full"])  # no OverflowError later
    doc = json.dumps({"messages": [{"role": "user", "content": "go"},
                                   {"role": "assistant", "content": "ok", "usage": usage}]})
    with pytest.raises(FormatError, match=r"input_tokens") as err:  # an API trace: refused
        loads(doc, file="api.json", format="anthropic")
    assert "api.json" in str(err.value) and "$.messages[1].usage.input_tokens" in str(err.value)
    for bad in (2.5, -3, "12", 10**13):
        fractional = dict(usage, input_tokens=bad)
        s = loads("\n".join([_cc("user", "u1", None, {"role": "user", "content": "go"}),
                             _reply("a1", "u1", fractional)]), format="claude_code")
        assert "usage" not in s.messages[1].metadata, bad


@pytest.mark.parametrize("bad", [1e308, 10**400, -1.0, math.nan, math.inf, True])
def test_prices_are_bounded_and_refused_naming_the_field(bad):
    """Round 3, defect 06."""
    rows = [dict(m.as_dict()) for m in default_prices().models[:1]]
    rows[0]["output"] = bad
    with pytest.raises(ConfigurationError, match=r"models\[0\]: field 'output'"):
        parse_prices({"schema": "pruner.prices/1", "retrieved": "2026-12-01", "models": rows}, origin="p.json")


def test_a_content_list_of_plain_strings_is_text():
    """Round 3, defect 22."""
    text = "\n".join([_cc("user", "u1", None, {"role": "user", "content": ["wow error", "second"]}),
                      _reply("a1", "u1", {"input_tokens": 3, "output_tokens": 1})])
    s = loads(text, file="strings.jsonl", format="claude_code")
    assert s.messages[0].content == "wow error\nsecond"


def test_lines_out_of_time_order_give_no_negative_gap():
    """Round 3, defect 23."""
    t = ["2026-01-01T10:00:00Z", "2026-01-01T10:00:05Z", "2026-01-01T06:05:45Z", "2026-01-01T10:00:20Z",
         "2026-01-01T10:00:30Z"]
    u = {"input_tokens": 3, "output_tokens": 1}
    lines = [_cc("user", "u1", None, {"role": "user", "content": "go"}, timestamp=t[0]),
             _reply("a2", "u3", u, timestamp=t[3]),  # written before its parent
             _reply("a1", "u1", u, timestamp=t[1]),
             _cc("user", "u3", "a1", {"role": "user", "content": "more"}, timestamp=t[2]),  # clock stepped back
             _reply("a3", "a2", u, timestamp=t[4])]
    s = loads("\n".join(lines), format="claude_code")
    assert [m.id for m in s.messages] == ["u1", "a1", "u3", "a2", "a3"]  # the conversation's own links
    times = [r.time for r in find_requests(s)]
    assert all(b >= a for a, b in zip(times, times[1:])), times


def test_a_subagents_own_file_has_its_requests(real_data):
    """Round 3, defect 24."""
    path = real_data / "claude-code" / "codemie-subagent-a485154.jsonl"
    raw = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ids = {r.get("requestId") or r["message"]["id"] for r in raw if r.get("type") == "assistant"}
    r = replay(load_session(path), ["as_recorded"])
    billed = [row for row in r.runs["as_recorded"].rows if row.dollars > 0]
    assert len(ids) == 6 and len(r.requests) == len(billed) == 6
