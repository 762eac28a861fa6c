"""``pruner logs`` reads Goose: its database ``sessions.db``, one row per session inside it.

The fixture HOME (``tests/data/agents/goose``) is laid out as Goose lays out its data folder; the
dollars expected here are recomputed from the raw ``sessions`` rows (Goose records usage per session:
its accumulated tokens, else its latest request's), at the price row of its model read straight from
``pruner/replay/prices.json``. The bill-only and the full readings give the same row on every
fixture session and on generated databases (hypothesis).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.cli import main
from pruner.logs import discover
from pruner.logs.agents.goose import find, read_entry
from pruner.logs.money import usage_columns
from pruner.logs.row import damaged_lines, recorded_cwd
from pruner.logs.run import read_session
from pruner.logs.table import TABLE
from tests.support.goose_store import write_db
from tests.support.profile import profile

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "data" / "agents" / "goose" / "home"
SESSIONS_DIR = FIXTURE / ".local" / "share" / "goose" / "sessions"
PRICES = json.loads((ROOT / "pruner" / "replay" / "prices.json").read_text(encoding="utf-8"))["models"]
EXAMPLES = {"dev": 40, "ci": 150, "nightly": 3_000}[profile()]


def _price(model: str) -> dict:
    (row,) = [r for r in PRICES if model == r["model"] or model in r.get("aliases", [])]
    return row


def _raw() -> dict[str, float]:
    """Session id -> dollars, from the raw rows: accumulated tokens (else the latest request's) at list price."""
    con = sqlite3.connect(SESSIONS_DIR / "sessions.db")
    con.row_factory = sqlite3.Row
    try:
        out = {}
        for r in con.execute("SELECT * FROM sessions"):
            acc = r["accumulated_input_tokens"] is not None or r["accumulated_output_tokens"] is not None
            inp = r["accumulated_input_tokens" if acc else "input_tokens"] or 0
            outp = r["accumulated_output_tokens" if acc else "output_tokens"] or 0
            p = _price(json.loads(r["model_config_json"])["model_name"])
            out[r["id"]] = (inp * p["input"] + outp * p["output"]) / 1e6
        return out
    finally:
        con.close()


RAW = _raw()


@pytest.fixture
def home(tmp_path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(FIXTURE, copy)
    return copy


def test_every_session_of_the_database_is_found_where_goose_keeps_it(home, tmp_path):
    (location,) = [loc for loc in discover({"HOME": str(home)}) if loc.agent == "goose"]
    assert location.folder == str(home / ".local" / "share" / "goose" / "sessions") and location.how == "default"
    assert sorted(s.entry for s in location.sessions) == sorted(RAW)
    assert {s.project for s in location.sessions} == {"/work/docs", "/work/api"}
    root = tmp_path / "root"
    shutil.copytree(home / ".local" / "share" / "goose" / "sessions", root / "data" / "sessions")
    (moved,) = [loc for loc in discover({"HOME": "/nowhere", "GOOSE_PATH_ROOT": str(root)}) if loc.agent == "goose"]
    assert moved.how == "$GOOSE_PATH_ROOT" and moved.folder == str(root / "data" / "sessions")
    assert len(moved.sessions) == len(RAW)


def test_pruner_logs_bills_each_sessions_recorded_tokens_at_its_models_price(home, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["logs", "--out", str(out), "--agent", "goose", "--goose-dir",
                 str(home / ".local" / "share" / "goose" / "sessions")]) == 0
    rows = {r["session_key"].rsplit("#", 1)[1]: r for r in pq.read_table(out / TABLE).to_pylist()}
    assert sorted(rows) == sorted(RAW) and not any(r["error"] for r in rows.values())
    for sid, dollars in RAW.items():
        assert rows[sid]["billed"] == pytest.approx(dollars, rel=1e-9)
        assert rows[sid]["billed_recorded_cost"] is None  # Goose records no cost
    assert f"Billed ${sum(RAW.values()):,.4f}" in capsys.readouterr().out


def test_the_conversation_keeps_goose_tool_calls_and_their_results():
    (found,) = [s for s in find(str(SESSIONS_DIR)) if s.entry == "20260102_1"]
    full = read_entry(found, False)
    assert full is not None
    session = full[0]
    calls = {c.id: c.name for m in session.messages for c in m.tool_calls}
    assert calls == {"toolu_1": "developer__text_editor", "toolu_2": "developer__shell"}
    results = {m.tool_call_id: m for m in session.messages if m.role == "tool"}
    assert results["toolu_2"].metadata["is_error"] and not results["toolu_1"].metadata["is_error"]
    assert [m.metadata.get("usage_scope") for m in session.messages if "usage" in m.metadata] == ["session"]


def test_list_shows_goose_with_its_folder_sessions_and_bytes(home, capsys):
    folder = home / ".local" / "share" / "goose" / "sessions"
    assert main(["logs", "--list", "--goose-dir", str(folder)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("goose"))
    assert f" {len(RAW)} " in line and str(folder) in line and "not found" not in line


def test_a_damaged_row_is_an_error_row_naming_the_database_the_row_and_the_column(home):
    db = home / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    con = sqlite3.connect(db)
    try:
        con.execute("UPDATE messages SET content_json = '[{\"type\": \"text\", ' WHERE message_id = 'msg_u2'")
        con.commit()
    finally:
        con.close()
    rows = {s.entry: read_session(s) for s in find(str(db.parent))}
    error = rows["20260102_1"]["error"]
    assert error.startswith(f"{db}: messages row ") and "content_json" in error and "not JSON" in error
    assert "\n" not in error and rows["20260102_2"].get("error") is None


def _same_row(found) -> str:
    full = read_entry(found, False)
    fast = read_entry(found, True)
    assert full is not None
    if fast is None:
        return "fallback"
    assert fast[1] == full[1]
    a, b = fast[0], full[0]
    assert usage_columns(a) == usage_columns(b)
    assert (a.name, recorded_cwd(a), damaged_lines(a)) == (b.name, recorded_cwd(b), damaged_lines(b))
    return "fast"


def test_fast_and_full_readings_agree_on_every_fixture_session():
    sessions = find(str(SESSIONS_DIR))
    assert sessions and all(_same_row(s) == "fast" for s in sessions)


_TEXT = st.sampled_from(["", "ok", "a longer answer"])


@st.composite
def _item(draw, calls: list[str], role: str) -> dict:
    """One content item; a tool response answers a call made before it (mostly: one in ten answers none)."""
    kind = draw(st.sampled_from(["text", "text", "thinking", "toolRequest", "toolResponse", "image",
                                 "systemNotification", "hologram"]))
    cid = f"c{len(calls)}"
    if kind == "toolResponse" and not calls:
        kind = "text"
    elif kind == "toolResponse" and draw(st.sampled_from([True] * 9 + [False])):
        cid = calls.pop(0)
    if kind == "toolRequest":
        call = draw(st.sampled_from([
            {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": "ls"}}},
            {"status": "success", "value": {"name": "read", "arguments": None}},
            {"status": "error", "error": "-32602: bad arguments"}]))
        if role == "assistant" and call["status"] == "success":  # a call Goose made: a response may answer it
            calls.append(cid)
        return {"type": kind, "id": cid, "toolCall": call}
    if kind == "toolResponse":
        items = draw(st.lists(st.sampled_from([{"type": "text", "text": ""}, {"type": "text", "text": "out"},
                                               {"type": "image", "data": "AA", "mimeType": "image/png"}]),
                              max_size=3))
        result = draw(st.sampled_from([{"status": "success", "value": {"content": items, "isError": False}},
                                       {"status": "success", "value": items},
                                       {"status": "error", "error": "failed"}]))
        return {"type": kind, "id": cid, "toolResult": result}
    if kind == "thinking":
        return {"type": kind, "thinking": draw(_TEXT), "signature": "s"}
    if kind == "image":
        return {"type": kind, "data": "AA", "mimeType": "image/png"}
    return {"type": kind, "text": draw(_TEXT)}


@st.composite
def _session(draw) -> dict:
    messages = []
    calls: list[str] = []
    for k in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["user", "assistant"]))
        content: object = [draw(_item(calls, role)) for _ in range(draw(st.integers(0, 3)))]
        if draw(st.sampled_from([False] * 29 + [True])):
            content = '[{"type": '  # damage: not JSON
        messages.append({"role": role, "created": 1767312000 + k, "content": content})
    tokens = draw(st.sampled_from([{}, {"input_tokens": 100, "output_tokens": 5},
                                   {"accumulated_input_tokens": 9000, "accumulated_output_tokens": 300},
                                   {"accumulated_input_tokens": -4, "accumulated_output_tokens": 1}]))
    return {"id": "20260102_9", "name": draw(st.sampled_from(["", "named"])), "working_dir": "/w",
            "updated_at": "2026-01-02 00:00:00", "provider": "anthropic",
            "model": draw(st.sampled_from(["claude-sonnet-4-5", "made-up"])), "tokens": tokens, "messages": messages}


def test_generated_databases_give_the_same_row_fast_and_full(tmp_path_factory, capsys):
    seen: Counter = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_session())
    def check(session):
        folder = tmp_path_factory.mktemp("goose")
        write_db(folder / "sessions.db", [session])
        (found,) = find(str(folder))
        seen["examples"] += 1
        try:
            seen[_same_row(found)] += 1
        except Exception as exc:  # the full reading refuses it: the fast one leaves it, or refuses it alike
            if not hasattr(exc, "file"):
                raise
            try:
                fast = read_entry(found, True)
            except Exception as other:
                assert str(other) == str(exc)
            else:
                assert fast is None
            seen["refused"] += 1

    check()
    with capsys.disabled():
        print(f"\ngoose fast == full: {dict(sorted(seen.items()))}")
    assert seen["fast"] > 0


def test_goose_cache_share_is_unknown_not_zero_when_goose_records_no_cache(home, tmp_path, capsys):
    """Goose records no cache reads or writes: its rows' cache cells are null (unknown), so the report's
    cache-read share is "-", not the "0.0 %" a 0 would print; its fresh input and output stay counted.

    Regression."""
    out = tmp_path / "out"
    assert main(["logs", "--bill-only", "--out", str(out), "--agent", "goose", "--goose-dir",
                 str(home / ".local" / "share" / "goose" / "sessions")]) == 0
    rows = pq.read_table(out / TABLE).to_pylist()
    assert rows and all(r["cache_read_tokens"] is None and r["cache_write_tokens"] is None for r in rows)
    assert sum(r["input_tokens"] for r in rows) > 0
    capsys.readouterr()
    assert main(["logs", "report", "--out", str(out), "--by", "agent", "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert [(g["group"], g["cache_read_share"]) for g in groups] == [("goose", None)]


# -- safe on hostile folders (issue 41): one bad database is one error row, never a failed run --

def _sql(db: Path, statement: str, *args) -> None:
    con = sqlite3.connect(db)
    try:
        con.execute(statement, args)
        con.commit()
    finally:
        con.close()


def test_a_content_nested_100000_deep_is_an_error_row_in_words_naming_the_row_and_column(home):
    db = home / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    _sql(db, "UPDATE messages SET content_json = ? WHERE message_id = 'msg_u2'",
         "[" + "[" * 100_000 + "]" * 100_000 + "]")
    rows = {s.entry: read_session(s) for s in find(str(db.parent))}
    error = rows["20260102_1"]["error"]
    assert error.startswith(f"{db}: messages row ") and "content_json" in error and "nested too deeply" in error
    assert "RecursionError" not in error and "maximum recursion" not in error
    assert rows["20260102_2"].get("error") is None


def test_a_message_dated_past_year_9999_is_a_damaged_field_not_a_failed_run(home, tmp_path, capsys):
    db = home / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    _sql(db, f"UPDATE messages SET created_timestamp = {2**63 - 1} WHERE message_id = 'msg_u2'")
    out = tmp_path / "out"
    assert main(["logs", "--bill-only", "--out", str(out), "--agent", "goose", "--goose-dir", str(db.parent)]) == 0
    rows = pq.read_table(out / TABLE).to_pylist()
    assert len(rows) == len(RAW) and not any(r["error"] for r in rows)
    assert {r["session_key"].split("#")[1]: r["billed"] for r in rows} == pytest.approx(RAW, rel=1e-9)


def test_a_database_session_is_held_to_a_files_limits_on_size_and_nesting(home, monkeypatch):
    import pruner.formats

    monkeypatch.setattr(pruner.formats._limits, "DEFAULT_MAX_BYTES", 1_000_000)
    db = home / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    nested = '[{"type": "text", "text": "hi", "x": [' + ",".join(["[]"] * 200_000) + "]}]"
    assert len(nested) < 1_000_000 < 8 * nested.count("[")
    _sql(db, "UPDATE messages SET content_json = ? WHERE message_id = 'msg_u2'", nested)
    rows = {s.entry: read_session(s) for s in find(str(db.parent))}
    error = rows["20260102_1"]["error"]
    assert error and "content_json" in error and "1,000,000-byte limit" in error
    assert rows["20260102_2"].get("error") is None
