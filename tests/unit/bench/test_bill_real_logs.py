"""The bill on real agent logs equals an independent sum computed here from the raw lines (issue 19).

This file has its own reader of each format and its own price look-up from the
rows of ``prices.json`` (no pruner importer, no ``PriceTable``): every unique
request id with usage, the LAST line of each (Claude Code writes a response as
several lines and ``output_tokens`` grows), each at its own line's model.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.formats import load_session
from pruner.model import Message, Session
from pruner.replay import bill
from tests.support.paths import REAL_DATA

CLAUDE_CODE = ["cctrace-phase0-main.jsonl", "ccviewer-5c0375b4.jsonl", "ccviewer-fe5e1c67.jsonl",
               "codemie-session-196820da.jsonl", "codemie-session-3fe1b6bc.jsonl", "codemie-session-624a4a58.jsonl",
               "codemie-subagent-a485154.jsonl", "dmux-a9185eb7.jsonl", "task-patterns-998db3cd.jsonl"]
TOLERANCE = 0.005  # the 0.5 %


def _rows() -> dict[str, dict]:
    """model id and every alias -> its row, straight from the shipped JSON."""
    data = json.loads(resources.files("pruner.replay").joinpath("prices.json").read_text(encoding="utf-8"))
    out = {}
    for row in data["models"]:
        for name in [row["model"], *row.get("aliases", [])]:
            out[name] = row
    return out


ROWS = _rows()


def _row(model: str) -> dict | None:
    if model in ROWS:
        return ROWS[model]
    undated = re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2})$", "", model)
    return ROWS.get(undated) if undated != model else None


def _dollars(model: str, fresh: int, read: int, write_5m: int, write_1h: int, output: int) -> float:
    row = _row(model)
    assert row is not None, f"the test data's model {model!r} has no row"
    w5 = row["cache_write_5m"] if row["cache_write_5m"] is not None else row["input"]
    w1 = row["cache_write_1h"] if row["cache_write_1h"] is not None else row["input"]
    return (fresh * row["input"] + read * row["cached_input"] + write_5m * w5 + write_1h * w1
            + output * row["output"]) / 1e6


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def claude_code_requests(path, *, line: str = "last") -> dict[str, tuple[str, dict, bool]]:
    """request id -> (model, usage, on a sidechain) from the raw lines; the last (or first) line per id."""
    out: dict[str, tuple[str, dict, bool]] = {}
    for entry in _lines(path):
        msg = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            continue
        if msg.get("model") == "<synthetic>":
            continue
        rid = entry.get("requestId") or msg.get("id")
        if line == "first" and rid in out:
            continue
        out[rid] = (msg["model"], msg["usage"], bool(entry.get("isSidechain")))
    return out


def claude_code_sum(requests) -> float:
    total = 0.0
    for model, u, _ in requests.values():
        split = u.get("cache_creation") or {}
        write_1h = split.get("ephemeral_1h_input_tokens") or 0
        write = u.get("cache_creation_input_tokens") or 0
        total += _dollars(model, u.get("input_tokens") or 0, u.get("cache_read_input_tokens") or 0, write - write_1h,
                          write_1h, u.get("output_tokens") or 0)
    return total


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(b), 1e-9)


@pytest.mark.parametrize("name", CLAUDE_CODE)
def test_claude_code_bill_equals_the_independent_sum(name):
    path = REAL_DATA / "claude-code" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    requests = claude_code_requests(path)
    b = bill(load_session(path))
    assert len(b.requests) == len(requests), name  # every unique request id with usage, subagents included
    assert {r.request_id for r in b.requests} == set(requests)
    expected = claude_code_sum(requests)
    assert _close(b.dollars, expected), (name, b.dollars, expected)
    assert b.unpriced_requests == 0
    on_sidechains = sum(1 for *_, side in requests.values() if side)
    subagent_requests = sum(v["requests"] for c, v in b.by_chain.items() if c != "main")
    if name != "codemie-subagent-a485154.jsonl":  # a subagent's own file: its chain is the main one
        assert subagent_requests == on_sidechains, name


def test_task_patterns_anchors_of_sources_md(real_data):
    path = real_data / "claude-code" / "task-patterns-998db3cd.jsonl"
    b = bill(load_session(path))
    assert (len(b.requests), b.by_chain["main"]["requests"]) == (217, 82)
    assert len(b.by_chain) == 4  # main + 3 subagent chains
    assert {m: v["requests"] for m, v in b.by_model.items()} == {"claude-opus-4-1-20250805": 69,
                                                                  "claude-sonnet-4-20250514": 148}
    # SOURCES.md's $19.54 ($16.46 on the main chain) is the sum over each request's FIRST line;
    # the bill takes the last line, as the money issue says (output grows line by line).
    first = claude_code_requests(path, line="first")
    assert round(claude_code_sum(first), 2) == 19.54
    assert round(claude_code_sum({k: v for k, v in first.items() if not v[2]}), 2) == 16.46
    last = claude_code_requests(path)
    assert _close(b.dollars, claude_code_sum(last))
    assert _close(b.by_chain["main"]["dollars"], claude_code_sum({k: v for k, v in last.items() if not v[2]}))
    assert b.dollars > claude_code_sum(first)
    text = "\n".join(b.lines())
    assert "main chain 82 requests" in text and "3 subagent chains, 135 requests" in text


def test_codex_bill_equals_the_independent_sum(real_data):
    path = real_data / "codex" / "codemie-rollout-2026-05-11.jsonl"
    model, previous, expected, count = None, None, 0.0, 0
    for entry in _lines(path):
        payload = entry.get("payload") or {}
        if entry.get("type") == "turn_context":
            model = payload.get("model") or model
        if entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            info = payload["info"]
            if info.get("total_token_usage") == previous:
                continue
            previous = info.get("total_token_usage")
            last = info["last_token_usage"]
            # output_tokens already includes reasoning_output_tokens: total = input + output in every event
            assert last["total_tokens"] == last["input_tokens"] + last["output_tokens"]
            assert last["reasoning_output_tokens"] <= last["output_tokens"]
            cached = last["cached_input_tokens"]
            expected += _dollars(model, last["input_tokens"] - cached, cached, 0, 0, last["output_tokens"])
            count += 1
    b = bill(load_session(path))
    assert len(b.requests) == count == 66
    assert _close(b.dollars, expected), (b.dollars, expected)
    assert {r.model for r in b.requests} == {"gpt-5.5"} and b.unpriced_requests == 0


def test_pi_bill_equals_the_independent_sum_and_the_recorded_cost(real_data):
    path = real_data / "pi" / "large-session.jsonl"
    expected = recorded = 0.0
    count = aborted = 0
    for entry in _lines(path):
        msg = entry.get("message") or {}
        if entry.get("type") != "message" or msg.get("role") != "assistant" or not isinstance(msg.get("usage"), dict):
            continue
        u = msg["usage"]
        count += 1
        recorded += u["cost"]["total"]
        if not any(u[k] for k in ("input", "output", "cacheRead", "cacheWrite")):
            aborted += 1
            continue
        expected += _dollars(msg["model"], u["input"], u["cacheRead"], u["cacheWrite"], 0, u["output"])
    b = bill(load_session(path))
    assert len(b.requests) == count and b.aborted == aborted
    assert _close(b.dollars, expected), (b.dollars, expected)
    assert b.billed_recorded_cost == pytest.approx(recorded)


# --- a made-up model is never priced ------------------------------------------------------------------------

_REAL = ["claude-sonnet-4-5", "gpt-5.5", "claude-opus-4-1", "gpt-5", "gemini-3-pro"]
# Made-up names hold "zz": free-standing, or a real name with more after it (a prefix match would price it).
_NAME = st.one_of(st.from_regex(r"zz[a-z0-9]{1,8}(-[a-z0-9]{1,6}){0,3}(-20[0-9]{6})?", fullmatch=True),
                  st.tuples(st.sampled_from(_REAL), st.from_regex(r"[.-]?zz[a-z0-9]{0,5}", fullmatch=True),
                            st.sampled_from(["", "-20250805"])).map("".join))
_COUNT = st.integers(min_value=0, max_value=5_000_000)


@given(st.lists(st.tuples(st.one_of(_NAME, st.sampled_from(_REAL)),
                          _COUNT, _COUNT, _COUNT, _COUNT), min_size=1, max_size=12))
def test_a_made_up_model_is_never_priced(requests):
    messages = [Message(id="u", role="user", content="go")]
    for k, (model, i, r, w, o) in enumerate(requests):
        messages.append(Message(id=f"a{k}", role="assistant", content="", metadata={
            "model": model, "request_id": f"r{k}",
            "usage": {"input": i, "cache_read": r, "cache_write": w, "output": o}}))
    b = bill(Session.of(messages))
    made_up = [(m, i, r, w, o) for m, i, r, w, o in requests if "zz" in m and i + r + w + o]
    assert b.unpriced_requests == len(made_up)
    assert b.unpriced_tokens == sum(i + r + w + o for _, i, r, w, o in made_up)
    known = sum(_dollars(m, i, r, w, 0, o) for m, i, r, w, o in requests if "zz" not in m)
    assert b.dollars == pytest.approx(known, rel=1e-9, abs=1e-12)
    assert all(not x.priced and x.dollars == 0 for x in b.requests if "zz" in x.model and x.tokens)
    assert set(b.unpriced_models) == {m for m, *_ in made_up}


def test_the_user_model_prices_only_requests_that_record_none():
    u = {"input": 1_000_000, "cache_read": 0, "cache_write": 0, "output": 0}
    s = Session.of([Message(id="u", role="user", content="go"),
                    Message(id="a", role="assistant", content="", metadata={"usage": u}),
                    Message(id="b", role="assistant", content="", metadata={"usage": u, "model": "zz-unknown"})])
    b = bill(s, model="claude-opus-4-1")
    assert [(r.model, r.priced, r.model_recorded) for r in b.requests] == [
        ("claude-opus-4-1", True, False), ("zz-unknown", False, True)]
    assert b.dollars == pytest.approx(15.0)


def test_the_1h_write_is_priced_at_its_own_rate():
    u = {"input": 0, "cache_read": 0, "cache_write": 1_000_000, "cache_write_1h": 400_000, "output": 0}
    s = Session.of([Message(id="u", role="user", content="go"),
                    Message(id="a", role="assistant", content="", metadata={"usage": u, "model": "claude-sonnet-4"})])
    assert bill(s).dollars == pytest.approx(0.6 * 3.75 + 0.4 * 6.0)


# --- the replay's calibration.billed is the same bill (branch money-engine, issue 19 "Done when") ----------

def _independent(name: str, path) -> tuple[float, int]:
    """This file's own sum of the raw lines (as the tests above compute it) and its request count."""
    if name.startswith("claude-code/"):
        requests = claude_code_requests(path)
        return claude_code_sum(requests), len(requests)
    if name.startswith("codex/"):
        model, previous, total, count = None, None, 0.0, 0
        for entry in _lines(path):
            payload = entry.get("payload") or {}
            if entry.get("type") == "turn_context":
                model = payload.get("model") or model
            if entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
                info = payload["info"]
                if info.get("total_token_usage") == previous:
                    continue
                previous = info.get("total_token_usage")
                last = info["last_token_usage"]
                cached = last["cached_input_tokens"]
                total += _dollars(model, last["input_tokens"] - cached, cached, 0, 0, last["output_tokens"])
                count += 1
        return total, count
    total, count = 0.0, 0
    for entry in _lines(path):
        msg = entry.get("message") or {}
        if entry.get("type") == "message" and msg.get("role") == "assistant" and isinstance(msg.get("usage"), dict):
            u = msg["usage"]
            if any(u[k] for k in ("input", "output", "cacheRead", "cacheWrite")):
                total += _dollars(msg["model"], u["input"], u["cacheRead"], u["cacheWrite"], 0, u["output"])
                count += 1
    return total, count


REAL_FILES = ["pi/large-session.jsonl", *[f"claude-code/{n}" for n in CLAUDE_CODE],
              "codex/codemie-rollout-2026-05-11.jsonl"]


@pytest.fixture(scope="module")
def calibrations():
    from pruner.bench.calibration_table import measure

    if not REAL_DATA.is_dir():
        pytest.skip(f"real transcripts not found at {REAL_DATA}")
    return {name: measure(REAL_DATA / name) for name in REAL_FILES if (REAL_DATA / name).is_file()}


@pytest.mark.parametrize("name", REAL_FILES)
def test_calibration_billed_equals_the_independent_sum(name, calibrations):
    if name not in calibrations:
        pytest.skip(f"{name} not found")
    expected, count = _independent(name, REAL_DATA / name)
    c = calibrations[name]
    assert _close(c["billed"], expected), (name, c["billed"], expected)
    assert c["requests"] == count, name  # every billed request, subagents included


def test_calibration_modelled_is_within_ten_percent_of_the_bill_on_at_least_80_percent(calibrations):
    errors = {name: abs(c["modelled"] - c["billed"]) / c["billed"] for name, c in calibrations.items() if c["billed"]}
    within = [name for name, e in errors.items() if e <= 0.10]
    assert len(errors) == len(REAL_FILES) and len(within) >= 0.8 * len(errors), errors


def test_the_committed_calibration_figures_are_what_the_code_gives(calibrations):
    from pruner.bench.calibration_table import OUT

    committed = {r["file"]: r for r in json.loads(OUT.read_text(encoding="utf-8"))["rows"]}
    for name, fresh in calibrations.items():
        assert committed[name] == {"file": name, **fresh}, f"{name}: rerun python -m pruner.bench.calibration_table"


def test_replay_json_carries_the_bill_and_the_contract_fields(tmp_path):
    import subprocess
    import sys
    from tests.support.paths import ROOT

    path = REAL_DATA / "claude-code" / "task-patterns-998db3cd.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--strategies", "as_recorded,full",
                        "--json", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["schema"] == "pruner.replay/2" and "ledger" in data
    c = data["calibration"]
    assert _close(c["billed"], claude_code_sum(claude_code_requests(path)))
    assert {"billed_recorded_cost", "modelled", "modelled_cache_only"} <= set(c)
    for run in data["strategies"].values():
        t = run["totals"]
        assert {"feasible", "infeasible_from", "by_model", "by_chain"} <= set(t)
        assert set(t["by_chain"]) == {"main", *{r["chain"] for r in run["requests"]}}
        assert t["by_model"].keys() == {"claude-opus-4-1-20250805", "claude-sonnet-4-20250514"}
