"""Gemini CLI chat recordings: the two real sessions import, prune and replay; their usage maps
onto the shared contract the way the recorded totals say; Gemini's implicit caching model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner import load_session, prune, validate_session
from pruner.formats import detect_format
from pruner.replay import ModelPrice, ReplaySettings, replay
from pruner.replay.cache import CACHE_MODELS, GoogleCache, google_minimum
from tests.support.paths import SAMPLES
from tests.unit.replay.test_replay import Priced, View, bill

REAL = ("codemie-session-2025-12-01.json", "codemie-session-2026-01-16-file-ops.json")


def _real(real_data: Path, name: str) -> tuple[Path, dict]:
    path = real_data / "gemini-cli" / name
    return path, json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", REAL)
def test_real_session_imports_with_every_message_call_and_result(real_data, name):
    path, raw = _real(real_data, name)
    session = load_session(path)
    validate_session(session)
    assert session.source_format == "gemini_cli" and session.name == raw["sessionId"]
    turns = [m for m in raw["messages"] if m["type"] in ("user", "gemini")]
    calls = [c for m in raw["messages"] for c in m.get("toolCalls", [])]
    assert len(session.messages) == len(turns) + sum(1 for c in calls if "result" in c)
    assert [c.name for m in session.messages for c in m.tool_calls] == [c["name"] for c in calls]
    results = [m for m in session.messages if m.role == "tool"]
    call_ids = {c.id for m in session.messages for c in m.tool_calls}
    assert results and all(m.tool_call_id in call_ids for m in results)
    # the first result's text is what the CLI sent back for the first call
    first = calls[0]["result"][0]["functionResponse"]["response"]["output"]
    assert results[0].content == first


@pytest.mark.parametrize("name", REAL)
def test_real_usage_adds_up_to_each_requests_recorded_total(real_data, name):
    """The mapping (input excludes cached, thoughts are output) is checked against the recorded
    ``total``: a mapping that dropped or double-counted a field would miss it."""
    path, raw = _real(real_data, name)
    session = load_session(path)
    gemini = [m for m in raw["messages"] if m["type"] == "gemini"]
    assistants = [m for m in session.messages if m.role == "assistant"]
    assert len(assistants) == len(gemini)
    for m, r in zip(assistants, gemini):
        u, t = m.metadata["usage"], r["tokens"]
        assert u["input"] + u["cache_read"] + u["cache_write"] + u["output"] == t["total"]
        assert u["cache_read"] == t["cached"] and u["reasoning"] == t["thoughts"]
        assert m.metadata["model"] == r["model"]


def test_sample_maps_cached_tool_and_thought_tokens():
    session = load_session(SAMPLES / "gemini_cli.json")
    raw = json.loads((SAMPLES / "gemini_cli.json").read_text(encoding="utf-8"))
    rows = [m["tokens"] for m in raw["messages"] if m["type"] == "gemini"]
    usages = [m.metadata["usage"] for m in session.messages if m.role == "assistant"]
    assert [u["input"] for u in usages] == [t["input"] - t["cached"] + t["tool"] for t in rows]
    assert [u["output"] for u in usages] == [t["output"] + t["thoughts"] for t in rows]
    assert session.messages[1].metadata["thinking"].startswith("Reading the file")
    assert [n["type"] for n in session.metadata["source"]["notices"]] == ["info"]
    assert "repairs" not in session.metadata  # a CLI notice is known, not damage


def test_a_message_type_nobody_knows_is_kept_and_reported():
    text = json.dumps({"sessionId": "s", "projectHash": "p", "messages": [
        {"id": "u", "type": "user", "content": "hi"}, {"id": "x", "type": "robot", "content": "beep"}]})
    from pruner.formats import loads
    session = loads(text)
    assert [m.role for m in session.messages] == ["user"]
    assert session.metadata["source"]["notices"][0]["type"] == "robot"
    assert "robot" in session.metadata["repairs"][0]["message"]


@pytest.mark.parametrize("name", REAL)
def test_real_session_prunes_and_replays_every_request(real_data, name):
    path, raw = _real(real_data, name)
    session = load_session(path)
    result = prune(session)
    validate_session(result.session)
    from pruner.replay.prices import PriceTable
    gemini = [m for m in raw["messages"] if m["type"] == "gemini"]
    # every request is priced at its own recorded model: one row per model this file records, at test prices
    rows = tuple(ModelPrice(provider="google", model=model, input=2.0, cached_input=0.2, output=12.0,
                            context_window=1_000_000, min_cacheable_tokens=4096)
                 for model in sorted({m["model"] for m in gemini}))
    table = PriceTable(models=rows, retrieved="test", origin="test")
    r = replay(session, ["as_recorded", "full", "prune_every_request"],
               settings=ReplaySettings(provider="google", model=rows[0].model), prices=table)
    assert len(r.runs["full"].rows) == len(gemini)
    # as recorded, from the recorded usage at this table's prices, summed here from the raw JSON
    expected = sum(((t["input"] - t["cached"] + t["tool"]) * 2.0 + t["cached"] * 0.2
                    + (t["output"] + t["thoughts"]) * 12.0) / 1e6 for t in (m["tokens"] for m in gemini))
    assert r.runs["as_recorded"].totals["dollars"] == pytest.approx(expected, abs=1e-6)  # totals carry 6 decimals


def test_gemini_files_are_detected_as_gemini_and_nothing_else_is(real_data):
    for name in REAL:
        assert detect_format((real_data / "gemini-cli" / name).read_text(encoding="utf-8")) == "gemini_cli"
    others = [p for folder in ("claude-code", "codex", "pi", "swe-agent", "tau-bench")
              for p in sorted((real_data / folder).glob("*")) if p.suffix in (".json", ".jsonl", ".traj")]
    assert others
    for p in others:
        try:
            found = detect_format(p.read_text(encoding="utf-8"))
        except Exception:
            continue
        assert found != "gemini_cli", p


# -- Gemini implicit caching -----------------------------------------------------------------------


def _price(model="gemini-2.5-pro", minimum=0):
    return ModelPrice(provider="google", model=model, input=1.25, cached_input=0.125, output=10.0,
                      min_cacheable_tokens=minimum)


def _google(model="gemini-2.5-pro", minimum=0):
    return Priced(GoogleCache(), _price(model, minimum))


def test_google_is_a_registered_cache_model_with_the_documented_minimums():
    assert CACHE_MODELS["google"] is GoogleCache
    assert google_minimum("gemini-3-pro-preview") == 4096
    assert google_minimum("gemini-3-flash-preview") == 1024
    assert google_minimum("gemini-2.5-flash-lite") == 2048
    assert google_minimum("gemini-1.0-ultra") == 4096  # unknown: the largest documented minimum
    assert GoogleCache().minimum(_price(minimum=0)) == 2048
    assert GoogleCache().minimum(_price(minimum=1024)) == 1024  # the price row's own minimum wins


def test_google_reads_the_common_prefix_without_rounding_and_writes_nothing():
    m = _google()
    st = m.new_state()
    first = bill(m, st, View(5_000, 0, 10))
    assert (first.cached, first.written, first.fresh, first.miss) == (0, 0, 5_000, "first")
    u = bill(m, st, View(6_001, 10, 12))
    assert (u.cached, u.written, u.fresh, u.miss) == (5_000, 0, 1_001, "")


def test_google_below_the_minimum_and_after_the_retention_caches_nothing():
    m = _google()
    st = m.new_state()
    bill(m, st, View(1_500, 0, 3), time=0)
    assert bill(m, st, View(1_900, 3, 4), time=1).miss == "below_minimum"
    bill(m, st, View(5_000, 4, 6), time=2)
    assert bill(m, st, View(5_100, 6, 7), time=2 + 299).cached == 5_000
    late = bill(m, st, View(5_200, 7, 8), time=2 + 299 + 301)
    assert (late.cached, late.fresh, late.miss) == (0, 5_200, "ttl")


@pytest.mark.parametrize("tokens", [{"input": -5, "output": 1, "cached": 0},
                                    {"input": 10, "output": 1, "cached": 11},
                                    {"input": 1e13, "output": 1, "cached": 0},
                                    {"input": "9", "output": 1, "cached": 0}])
def test_damaged_token_counts_drop_the_usage_and_are_reported(tokens):
    """Issue 23 defect 5's rule, as for every format: a count that is not a whole number in 0..10**12
    (or more cached than input) is damage, reported; the message stays."""
    from pruner.formats import loads
    text = json.dumps({"sessionId": "s", "projectHash": "p", "messages": [
        {"id": "u", "type": "user", "content": "hi"},
        {"id": "g", "type": "gemini", "content": "ok", "model": "gemini-3-pro", "tokens": tokens}]})
    session = loads(text)
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert "usage" not in session.messages[1].metadata
    assert any(r["kind"] == "invalid_usage" for r in session.metadata["repairs"])


@pytest.mark.parametrize("name", REAL)
def test_real_session_bills_from_its_recorded_usage_at_its_own_models_price(real_data, name):
    """The bill (pruner.replay.bill) against a sum made here from the raw JSON and the price row's numbers."""
    from pruner.replay import bill, default_prices
    path, raw = _real(real_data, name)
    prices = default_prices()
    expected = 0.0
    for m in raw["messages"]:
        if m["type"] == "gemini":
            t, p = m["tokens"], prices.find(m["model"])
            assert p is not None and p.provider == "google", m["model"]
            expected += ((t["input"] - t["cached"] + t["tool"]) * p.input + t["cached"] * p.cached_input
                         + (t["output"] + t["thoughts"]) * p.output) / 1e6
    b = bill(load_session(path), prices)
    assert b.unpriced_requests == 0 and b.dollars == pytest.approx(expected, rel=1e-12)
