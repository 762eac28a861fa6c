"""``pruner logs`` reads OpenCode: its database (one row per session inside it) and its older JSON files.

The fixture HOME (``tests/data/agents/opencode``) is laid out as OpenCode lays out its data folder;
the dollars expected here are summed by this test from the raw database rows and files, each request
at the price row of its model read straight from ``pruner/replay/prices.json``. The bill-only reading
(msgspec, only the fields the bill needs) and the full one give the same row on every fixture session
and on generated databases (hypothesis).
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
from pruner.logs.agents.opencode import find, read_entry
from pruner.logs.money import usage_columns
from pruner.logs.row import damaged_lines, recorded_cwd
from pruner.logs.run import read_session
from pruner.logs.table import TABLE
from tests.support.opencode_store import write_db, write_files
from tests.support.profile import profile

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "data" / "agents" / "opencode" / "home"
DATA = FIXTURE / ".local" / "share" / "opencode"
PRICES = json.loads((ROOT / "pruner" / "replay" / "prices.json").read_text(encoding="utf-8"))["models"]
EXAMPLES = {"dev": 40, "ci": 150, "nightly": 3_000}[profile()]


def _row(model: str) -> dict | None:
    for row in PRICES:
        if model == row["model"] or model in row.get("aliases", []):
            return row
    return None


def _dollars(model: str, tokens: dict) -> float:
    p = _row(model)
    assert p is not None, model
    cache = tokens.get("cache") or {}
    write = p["cache_write_5m"] if p.get("cache_write_5m") is not None else p["input"]
    out = tokens.get("output", 0) + tokens.get("reasoning", 0)  # OpenCode prices reasoning as output
    return (tokens.get("input", 0) * p["input"] + cache.get("read", 0) * p["cached_input"]
            + cache.get("write", 0) * write + out * p["output"]) / 1e6


def _raw_requests(messages: list[tuple[dict, list[dict]]]) -> list[tuple[str, dict, float]]:
    """(model, tokens, recorded cost) of every request: each step-finish part, else the message's own."""
    out = []
    for info, parts in messages:
        if info.get("role") != "assistant":
            continue
        steps = [p for p in parts if p.get("type") == "step-finish"]
        for p in steps or [info]:
            out.append((info["modelID"], p["tokens"], p["cost"]))
    return out


def _raw_db(path: Path) -> dict[str, list[tuple[str, dict, float]]]:
    con = sqlite3.connect(path)
    try:
        out = {}
        for (sid,) in con.execute("SELECT id FROM session"):
            messages = []
            for mid, data in con.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                                         (sid,)):
                parts = [json.loads(d) for (d,) in con.execute("SELECT data FROM part WHERE message_id = ? ORDER BY id",
                                                               (mid,))]
                messages.append((json.loads(data), parts))
            out[sid] = _raw_requests(messages)
        return out
    finally:
        con.close()


def _raw_files(root: Path) -> dict[str, list[tuple[str, dict, float]]]:
    out = {}
    for session in sorted((root / "storage" / "session").glob("*/*.json")):
        messages = []
        for m in sorted((root / "storage" / "message" / session.stem).glob("*.json")):
            parts = [json.loads(p.read_text()) for p in sorted((root / "storage" / "part" / m.stem).glob("*.json"))]
            messages.append((json.loads(m.read_text()), parts))
        out[session.stem] = _raw_requests(messages)
    return out


RAW = {**_raw_db(DATA / "opencode.db"), **_raw_files(DATA)}


@pytest.fixture
def home(tmp_path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(FIXTURE, copy)
    return copy


def test_every_session_of_the_database_and_the_older_files_is_found_once(home):
    (location,) = [loc for loc in discover({"HOME": str(home)}) if loc.agent == "opencode"]
    assert location.folder == str(home / ".local" / "share" / "opencode") and location.how == "default"
    entries = sorted(s.entry or Path(s.main.path).stem for s in location.sessions)
    assert entries == sorted(RAW)
    assert {s.project for s in location.sessions} == {"/work/app", "/work/old"}
    moved = [loc for loc in discover({"HOME": "/nowhere", "XDG_DATA_HOME": str(home / ".local" / "share")})
             if loc.agent == "opencode"][0]
    assert moved.how == "$XDG_DATA_HOME" and len(moved.sessions) == len(RAW)


def test_a_session_in_both_the_database_and_the_older_files_is_read_from_the_database_only(home):
    data = home / ".local" / "share" / "opencode"
    write_files(data, [{"id": "ses_01JAPP0001", "title": "copy", "directory": "/work/app", "messages": []}])
    keys = [s.key for s in find(str(data))]
    assert sum("ses_01JAPP0001" in k for k in keys) == 1 and all(".json" not in k or "OLD" in k for k in keys)


def test_pruner_logs_bills_each_step_at_its_models_price_and_keeps_opencodes_own_cost(home, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["logs", "--out", str(out), "--agent", "opencode", "--opencode-dir",
                 str(home / ".local" / "share" / "opencode")]) == 0
    rows = {r["session_key"]: r for r in pq.read_table(out / TABLE).to_pylist()}
    assert len(rows) == len(RAW) and not any(r["error"] for r in rows.values())
    for sid, requests in RAW.items():
        (row,) = [r for k, r in rows.items() if sid in k]
        assert row["billed"] == pytest.approx(sum(_dollars(m, t) for m, t, _ in requests), rel=1e-9)
        assert row["billed_recorded_cost"] == pytest.approx(sum(c for _, _, c in requests), rel=1e-9)
        # OpenCode's own cost is its list price of the same tokens: the modelled bill matches it
        assert row["billed"] == pytest.approx(row["billed_recorded_cost"], rel=1e-6)
        assert sum(json.loads(row["models"]).values()) == len(requests)
    total = sum(_dollars(m, t) for reqs in RAW.values() for m, t, _ in reqs)
    assert f"Billed ${total:,.4f}" in capsys.readouterr().out


def test_a_multi_step_turn_is_billed_for_every_step_not_its_last_steps_tokens():
    """OpenCode overwrites a turn's ``tokens`` with each step's (``processor.ts``): billing the
    message's tokens, as ccusage does, bills the last request of the turn and misses the others.

    Regression."""
    con = sqlite3.connect(DATA / "opencode.db")
    try:
        data = json.loads(con.execute("SELECT data FROM message WHERE id = 'msg_01JAPP0001A1'").fetchone()[0])
    finally:
        con.close()
    model = data["modelID"]
    steps = [t for m, t, _ in RAW["ses_01JAPP0001"] if m == model][:3]
    assert data["tokens"] == steps[-1] and len(steps) == 3
    (found,) = [s for s in find(str(DATA)) if s.entry == "ses_01JAPP0001"]
    row = read_session(found)
    assert row["billed"] > _dollars(model, data["tokens"]) + _dollars(model, RAW["ses_01JAPP0001"][3][1])


def test_list_shows_opencode_with_its_folder_sessions_and_bytes(home, capsys):
    assert main(["logs", "--list", "--opencode-dir", str(home / ".local" / "share" / "opencode")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("opencode"))
    sessions = find(str(home / ".local" / "share" / "opencode"))
    size = sum(s.size for s in sessions)
    assert f" {len(RAW)} " in line and str(home / ".local" / "share" / "opencode") in line
    assert f"{size / 1e6:.1f} MB" in line and size > 0
    assert main(["logs", "--list", "--opencode-dir", str(home / "absent")]) == 0
    assert "not found" in next(x for x in capsys.readouterr().out.splitlines() if x.startswith("opencode"))


def test_a_rerun_reads_nothing_and_a_grown_session_alone_is_read_again(home, tmp_path, capsys):
    data = home / ".local" / "share" / "opencode"
    out = tmp_path / "out"
    args = ["logs", "--out", str(out), "--agent", "opencode", "--opencode-dir", str(data), "--json"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["read"] == 0
    con = sqlite3.connect(data / "opencode.db")
    try:
        con.execute("INSERT INTO message VALUES ('msg_01JAPP0002U2', 'ses_01JAPP0002', 1767312099000, 1767312099000, "
                    "'{\"role\":\"user\",\"time\":{\"created\":1767312099000}}')")
        con.commit()
    finally:
        con.close()
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["read"], summary["changed"], summary["unchanged"]) == (1, 1, len(RAW) - 1)


def test_a_damaged_row_is_an_error_row_naming_the_database_the_row_and_the_field(home):
    data = home / ".local" / "share" / "opencode"
    con = sqlite3.connect(data / "opencode.db")
    try:
        con.execute("UPDATE message SET data = '{\"role\": \"user\", \"time\": ' WHERE id = 'msg_01JAPP0001U2'")
        con.execute("UPDATE part SET data = json_set(data, '$.state.status', 'exploded') "
                    "WHERE id = 'prt_01JAPP0002A1_0b0'")
        con.commit()
    finally:
        con.close()
    rows = {s.entry: read_session(s) for s in find(str(data)) if s.entry}
    first, second = rows["ses_01JAPP0001"]["error"], rows["ses_01JAPP0002"]["error"]
    assert first.startswith(str(data / "opencode.db")) and "message msg_01JAPP0001U2" in first and "\n" not in first
    assert "not JSON" in first
    assert "part prt_01JAPP0002A1_0b0.state.status" in second and "'exploded'" in second


def _same_row(found) -> str:
    """'fast' when the bill-only reading gave the full one's row, 'fallback' when it left the session to it."""
    full = read_entry(found, False)
    fast = read_entry(found, True)
    assert full is not None
    if fast is None:
        return "fallback"
    assert fast[1] == full[1]
    for a, b in ((fast[0], full[0]),):
        assert usage_columns(a) == usage_columns(b)
        assert (a.name, recorded_cwd(a), damaged_lines(a), a.source_format) == \
            (b.name, recorded_cwd(b), damaged_lines(b), b.source_format)
    return "fast"


def test_fast_and_full_readings_agree_on_every_fixture_session():
    sessions = [s for s in find(str(DATA)) if s.entry]
    assert sessions and all(_same_row(s) == "fast" for s in sessions)


# -- generated databases -------------------------------------------------------------------------------

_N = st.integers(0, 5000)
_TOKENS = st.fixed_dictionaries({"input": _N, "output": _N, "reasoning": st.integers(0, 300),
                                 "cache": st.fixed_dictionaries({"read": _N, "write": _N})})
_BAD = st.sampled_from([-1, "12", 1.5, None, 10**13, {"x": 1}, [], True])


@st.composite
def _part(draw, k: int, j: int) -> dict:
    kind = draw(st.sampled_from(["step-start", "text", "reasoning", "tool", "step-finish", "patch", "mystery"]))
    data: dict = {"type": kind}
    if kind in ("text", "reasoning"):
        data["text"] = draw(st.sampled_from(["", "ok", "a longer line of text"]))
    elif kind == "tool":
        status = draw(st.sampled_from(["completed", "error", "running", "pending"]))
        data.update(callID=f"call_{k}_{j}", tool=draw(st.sampled_from(["read", "bash"])),
                    state={"status": status, "input": draw(st.sampled_from([{}, {"path": "a"}, "[1]"])),
                           "output": draw(st.sampled_from(["", "out"])), "error": "boom",
                           "time": {"start": 1767312000000, "end": 1767312000000 + j}})
    elif kind == "step-finish":
        data.update(reason="stop", tokens=draw(_TOKENS), cost=draw(st.floats(0, 1)))
        if draw(st.integers(1, 10)) == 10:
            data["tokens"]["input"] = draw(_BAD)
        if draw(st.integers(1, 10)) == 10:
            data["cost"] = draw(_BAD)
    return {"id": f"prt_{k:02d}_{j:02d}", "data": data}


@st.composite
def _session(draw) -> dict:
    messages = []
    for k in range(draw(st.integers(0, 5))):
        role = draw(st.sampled_from(["user", "assistant", "assistant"]))
        time = 1767312000000 + k * 1000
        data: dict = {"role": role, "time": {"created": time}}
        if role == "assistant":
            data.update(modelID=draw(st.sampled_from(["claude-sonnet-4-5", "gpt-5", "made-up-model"])),
                        providerID="anthropic", tokens=draw(_TOKENS), cost=draw(st.floats(0, 1)),
                        path={"cwd": "/w", "root": "/w"})
        parts = [draw(_part(k, j)) for j in range(draw(st.integers(0, 6)))]
        raw = draw(st.sampled_from([False] * 29 + [True]))  # damage: the row is not JSON
        messages.append({"id": f"msg_{k:02d}", "time": time, "data": '{"role": ' if raw else data, "parts": parts})
    return {"id": "ses_gen", "title": draw(st.sampled_from(["", "a title"])),
            "directory": draw(st.sampled_from(["", "/w"])), "messages": messages}


def test_generated_databases_give_the_same_row_fast_and_full(tmp_path_factory, capsys):
    seen: Counter = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_session())
    def check(session):
        folder = tmp_path_factory.mktemp("oc")
        write_db(folder / "opencode.db", [session])
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
        print(f"\nopencode fast == full: {dict(sorted(seen.items()))}")
    assert seen["fast"] > 0



def _unpriced_session(sid: str, model: str, requests: list[tuple[int, int, float]], t0: int) -> dict:
    """A session of ``model`` (no list price): one assistant message per (input, output, recorded cost)."""
    messages = []
    for k, (inp, out, cost) in enumerate(requests):
        t = t0 + 10_000 * k
        messages.append({"id": f"msg_{sid}_U{k}", "time": t, "parts": [{"id": f"prt_{sid}_U{k}", "data": {
            "type": "text", "text": "go on"}}], "data": {"role": "user", "time": {"created": t}, "agent": "build",
                                                         "model": {"providerID": "moonshot", "modelID": model}}})
        messages.append({"id": f"msg_{sid}_A{k}", "time": t + 1, "parts": [{"id": f"prt_{sid}_A{k}", "data": {
            "type": "text", "text": "done"}}], "data": {
            "role": "assistant", "time": {"created": t + 1, "completed": t + 2}, "parentID": f"msg_{sid}_U{k}",
            "modelID": model, "providerID": "moonshot", "mode": "build", "agent": "build",
            "path": {"cwd": "/work/app", "root": "/work/app"}, "cost": cost,
            "tokens": {"total": inp + out, "input": inp, "output": out, "reasoning": 0,
                       "cache": {"read": 0, "write": 0}}, "finish": "stop"}})
    return {"id": sid, "title": sid, "directory": "/work/app", "messages": messages}


def test_a_folder_whose_requests_have_no_list_price_names_them_and_bills_opencodes_own_cost(tmp_path, capsys):
    """Issue 41: kimi-k2.6 and deepseek-v4-flash have no list price, so the list-price bill is $0; the
    headline said "Billed $0.00 ... (what the providers charged)". It names the unpriced requests and
    their models, and gives OpenCode's recorded cost as the bill, saying so."""
    sessions = [_unpriced_session("ses_K1", "kimi-k2.6", [(1200, 300, 0.0021), (1800, 250, 0.0033)], 1767312000000),
                _unpriced_session("ses_D1", "deepseek-v4-flash", [(900, 100, 0.0004)], 1767313000000)]
    data = tmp_path / "data" / "opencode"
    write_db(data / "opencode.db", sessions)
    assert all(_row(m) is None for m in ("kimi-k2.6", "deepseek-v4-flash"))  # no price row: unpriced
    assert main(["logs", "--out", str(tmp_path / "out"), "--agent", "opencode", "--opencode-dir", str(data),
                 "--bill-only"]) == 0
    out = capsys.readouterr().out
    requests = [m for s in sessions for m in s["messages"] if m["data"]["role"] == "assistant"]
    recorded = sum(m["data"]["cost"] for m in requests)
    assert "Billed $0.00" not in out
    assert f"No list price for any request over 2 sessions: {len(requests)} requests unpriced: kimi-k2.6, " \
           "deepseek-v4-flash have no list price" in out, out
    assert f"billed ${recorded:,.4f} as the agents recorded it" in out, out
# -- safe on hostile folders (issue 41): one bad database is one error row, never a failed run --

def _logs(data: Path, out: Path, capsys) -> dict:
    """One bill-only run over the folder (what ``pruner logs --bill-only`` runs), and the table after it."""
    from pruner.logs.run import run_logs

    run_logs(find(str(data)), str(out))
    return {r["session_key"]: r for r in pq.read_table(out / TABLE).to_pylist()}


def _sql(path: Path, *statements: str) -> None:
    con = sqlite3.connect(path)
    try:
        for statement in statements:
            con.execute(statement)
        con.commit()
    finally:
        con.close()


def test_a_record_nested_100000_deep_is_an_error_row_in_words_naming_the_record(home):
    data = home / ".local" / "share" / "opencode"
    deep = '{"role": "user", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    con = sqlite3.connect(data / "opencode.db")
    try:
        con.execute("UPDATE message SET data = ? WHERE id = 'msg_01JAPP0001U2'", (deep,))
        con.commit()
    finally:
        con.close()
    rows = {s.entry: read_session(s) for s in find(str(data)) if s.entry}
    error = rows["ses_01JAPP0001"]["error"]
    assert error.startswith(str(data / "opencode.db")) and "message msg_01JAPP0001U2" in error
    assert "nested too deeply" in error and "RecursionError" not in error and "maximum recursion" not in error
    assert rows["ses_01JAPP0002"].get("error") is None


def test_a_database_session_is_held_to_a_files_limits_on_size_and_nesting(home, monkeypatch):
    """The same bytes in a file are refused (``charged_size``): a database row is charged alike."""
    import pruner.formats

    monkeypatch.setattr(pruner.formats._limits, "DEFAULT_MAX_BYTES", 1_000_000)
    data = home / ".local" / "share" / "opencode"
    nested = '{"role": "user", "time": {"created": 1767312060000}, "x": [' + ",".join(["[]"] * 200_000) + "]}"
    assert len(nested) < 1_000_000 < 8 * nested.count("[")  # under the limit by length, over it by nesting
    _sql(data / "opencode.db")
    con = sqlite3.connect(data / "opencode.db")
    try:
        con.execute("UPDATE message SET data = ? WHERE id = 'msg_01JAPP0001U2'", (nested,))
        con.commit()
    finally:
        con.close()
    rows = {s.entry: read_session(s) for s in find(str(data)) if s.entry}
    error = rows["ses_01JAPP0001"]["error"]
    assert error and "message msg_01JAPP0001U2" in error and "1,000,000-byte limit" in error
    assert rows["ses_01JAPP0002"].get("error") is None


def test_a_text_time_updated_is_a_damaged_field_not_a_failed_run(home, tmp_path, capsys):
    data = home / ".local" / "share" / "opencode"
    _sql(data / "opencode.db", "UPDATE message SET time_updated = 'yesterday' WHERE id = 'msg_01JAPP0001U2'",
         f"UPDATE part SET time_updated = {2**63 - 1} WHERE message_id = 'msg_01JAPP0001A2'")
    rows = _logs(data, tmp_path / "out", capsys)
    assert len(rows) == len(RAW) and not any(r["error"] for r in rows.values())


def test_a_locked_database_keeps_its_rows_marked_stale_and_is_read_again_next_run(home, tmp_path, capsys):
    """A database that cannot be read for one run (here write-locked) deleted every row billed from it, and
    its "database is locked" error row then stayed for good."""
    data = home / ".local" / "share" / "opencode"
    out = tmp_path / "out"
    before = _logs(data, out, capsys)
    billed = {k: r["billed"] for k, r in before.items() if "#" in k}
    assert billed and not any(r["stale"] for r in before.values())
    lock = sqlite3.connect(data / "opencode.db")
    try:
        lock.execute("BEGIN EXCLUSIVE")  # the agent writing: every reader is refused ("database is locked")
        during = _logs(data, out, capsys)
    finally:
        lock.rollback()
        lock.close()
    assert {k: r["billed"] for k, r in during.items() if k in billed} == billed
    assert all(during[k]["stale"] for k in billed)
    after = _logs(data, out, capsys)
    assert {k: r["billed"] for k, r in after.items()} == {**billed, **{k: r["billed"] for k, r in before.items()}}
    assert not any(r["error"] or r["stale"] for r in after.values())


def test_a_renamed_column_keeps_the_rows_marked_stale_until_the_database_reads_again(home, tmp_path, capsys):
    data = home / ".local" / "share" / "opencode"
    out = tmp_path / "out"
    before = _logs(data, out, capsys)
    _sql(data / "opencode.db", "ALTER TABLE message RENAME COLUMN data TO body")
    during = _logs(data, out, capsys)
    kept = {k: r for k, r in during.items() if "#" in k}
    assert {k: r["billed"] for k, r in kept.items()} == {k: r["billed"] for k, r in before.items() if "#" in k}
    assert all(r["stale"] and not r["error"] for r in kept.values())
    errors = [r["error"] for r in during.values() if r["error"]]
    assert len(errors) == 1 and "cannot read the OpenCode database" in errors[0]
    _sql(data / "opencode.db", "ALTER TABLE message RENAME COLUMN body TO data")
    after = _logs(data, out, capsys)
    assert after.keys() == before.keys() and not any(r["error"] or r["stale"] for r in after.values())


def _wal(path: Path) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode=WAL")
    finally:
        con.close()


def test_a_wal_database_is_read_with_nothing_created_beside_it(home, tmp_path, capsys):
    data = home / ".local" / "share" / "opencode"
    _wal(data / "opencode.db")
    listing = sorted(p.name for p in data.iterdir())
    assert "opencode.db-wal" not in listing  # closed cleanly: every change is in the database file
    rows = _logs(data, tmp_path / "out", capsys)
    assert len(rows) == len(RAW) and not any(r["error"] for r in rows.values())
    assert sorted(p.name for p in data.iterdir()) == listing


def test_a_wal_files_content_is_read_without_its_shm_and_nothing_is_created(home, tmp_path, capsys):
    """A folder copied, or an agent that crashed, leaves a -wal without its -shm: the -wal's records are
    read, and no -shm is created beside them (a read-only folder could not hold one)."""
    live = home / ".local" / "share" / "opencode" / "opencode.db"
    _wal(live)
    writer = sqlite3.connect(live)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO message VALUES ('msg_01JAPP0002U9', 'ses_01JAPP0002', 1767312099000, "
                       "1767312099000, '{\"role\":\"user\",\"time\":{\"created\":1767312099000}}')")
        writer.commit()
        copy = tmp_path / "copied"
        copy.mkdir()
        shutil.copyfile(live, copy / "opencode.db")
        shutil.copyfile(str(live) + "-wal", copy / "opencode.db-wal")
    finally:
        writer.close()
    (found,) = [s for s in find(str(copy)) if s.entry == "ses_01JAPP0002"]
    session, _ = read_entry(found, False)
    assert "msg_01JAPP0002U9" in {m.id for m in session.messages}
    assert sorted(p.name for p in copy.iterdir()) == ["opencode.db", "opencode.db-wal"]


def con_count(db: Path, query: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute(query).fetchone()[0]
    finally:
        con.close()


def test_a_step_written_between_the_messages_and_the_parts_read_is_not_an_error(home):
    """The messages and the parts of a session are read in one snapshot: OpenCode writing a step (a message
    and its part) meanwhile turned a live session into "part ... belongs to message ..."."""
    from pruner.logs.agents.opencode import rows as opencode_rows

    db = home / ".local" / "share" / "opencode" / "opencode.db"
    _wal(db)
    writer = sqlite3.connect(db)
    try:
        (found,) = [s for s in find(str(db.parent)) if s.entry == "ses_01JAPP0002"]
        records: list = []
        held = con_count(db, "SELECT count(*) FROM message WHERE session_id = 'ses_01JAPP0002'")
        for record in opencode_rows(found):
            records.append(record)
            if record[0] == "message" and sum(r[0] == "message" for r in records) == held:  # before the parts
                writer.execute("INSERT INTO message VALUES ('msg_01JAPP0002A9', 'ses_01JAPP0002', 1767312099000, "
                               "1767312099000, '{\"role\":\"user\",\"time\":{\"created\":1767312099000}}')")
                writer.execute("INSERT INTO part VALUES ('prt_01JAPP0002A9_0', 'msg_01JAPP0002A9', 'ses_01JAPP0002', "
                               "1767312099000, 1767312099000, '{\"type\":\"text\",\"text\":\"hi\"}')")
                writer.commit()
    finally:
        writer.close()
    assert "msg_01JAPP0002A9" not in {r[2] for r in records}  # written after the read began: next run's
    # one snapshot: every part read belongs to a message read (what the reader's "part ... belongs to message"
    # check refused)
    assert {r[1] for r in records if r[0] == "part"} <= {r[2] for r in records if r[0] == "message"}
