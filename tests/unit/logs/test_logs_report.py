"""``pruner logs report`` (issue 32, "Roll-ups a person reads"): every grouping's groups sum to the table's
total, and that total is what the raw files cost, summed here from the files themselves."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.cli import main
from pruner.logs import discover, run_logs
from pruner.logs.answer import folder_answer
from pruner.logs.groupings import GROUPINGS, NO_VALUE, THIS_MACHINE, group_keys
from pruner.logs.report import as_csv, report, text
from pruner.logs.table import TABLE
from pruner.money import money
from pruner.replay import strategy_names

#: (agent folder inside HOME, real file under the shared data, name it gets there): two agents, three projects
LAYOUT = (
    (".claude/projects/-work-demo", "claude-code/task-patterns-998db3cd.jsonl", "998db3cd.jsonl"),
    (".claude/projects/-work-demo", "claude-code/cctrace-phase0-main.jsonl", "phase0.jsonl"),
    (".claude/projects/-work-viewer", "claude-code/ccviewer-fe5e1c67.jsonl", "fe5e1c67.jsonl"),
    (".codex/sessions/2026/05/11", "codex/codemie-rollout-2026-05-11.jsonl", "rollout-2026-05-11T11-26-55-a.jsonl"),
)


@pytest.fixture
def logs(real_data, tmp_path) -> tuple[Path, Path]:
    """HOME laid out as the agents lay it out, and the logs folder ``pruner logs --bill-only`` wrote from it."""
    home, out = tmp_path / "home", tmp_path / "out"
    for folder, source, name in LAYOUT:
        (home / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_data / source, home / folder / name)
    found = [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]
    run_logs(found, str(out))
    return home, out


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / TABLE).to_pylist()


def _claude_tokens(path: Path) -> tuple[int, int]:
    """(cache-read tokens, all input tokens) of a Claude Code file, straight from its lines: one request per
    requestId (else message id), the copy with the most output, as Anthropic bills a streamed reply once."""
    best: dict[str, tuple[int, dict]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        d = json.loads(line) if line.strip() else {}
        m = d.get("message") if d.get("type") == "assistant" else None
        if not isinstance(m, dict) or not isinstance(m.get("usage"), dict) or m.get("model") == "<synthetic>":
            continue
        key = d.get("requestId") or m.get("id") or str(n)
        out = m["usage"].get("output_tokens") or 0
        if key not in best or out >= best[key][0]:
            best[key] = (out, m["usage"])
    read = sum(u.get("cache_read_input_tokens") or 0 for _, u in best.values())
    every = read + sum((u.get("input_tokens") or 0) + (u.get("cache_creation_input_tokens") or 0)
                       for _, u in best.values())
    return read, every


def test_done_when_every_grouping_sums_to_what_the_raw_files_cost(logs):
    """Done when (issue 32): the totals of every grouping are the table's, and the table's is the raw files'
    own sum (tests/support/raw_bill.py: usage x price from the JSONL, not pruner's reader); the agent and
    project groups are each their files' raw sums, and the Claude Code cache-read share is the raw tokens'."""
    from tests.support.raw_bill import session_dollars

    home, out = logs
    agents = {".claude": "claude_code", ".codex": "codex"}
    raw: dict[tuple[str, str], float] = {}  # (agent, project folder) -> dollars
    for folder, _, name in LAYOUT:
        agent = agents[folder.split("/")[0]]
        project = folder.split("/")[-1] if agent == "claude_code" else None
        key = (agent, project or "")
        raw[key] = raw.get(key, 0.0) + session_dollars(agent, [home / folder / name])
    total = sum(raw.values())
    rows = _rows(out)
    assert len(rows) == len(LAYOUT) and total > 1.0
    for by in GROUPINGS:
        rolled = report(rows, by)
        assert rolled.total.answer.billed == pytest.approx(total, abs=1e-5), by
        assert sum(g.answer.billed for g in rolled.groups) == pytest.approx(total, abs=1e-5), by
        assert sum(g.answer.sessions for g in rolled.groups) == len(LAYOUT), by
        assert sum(g.requests for g in rolled.groups) == rolled.total.requests > 0, by
    by_agent = {g.key: g.answer.billed for g in report(rows, "agent").groups}
    assert by_agent == pytest.approx({a: sum(v for (x, _), v in raw.items() if x == a) for a in set(agents.values())},
                                     abs=1e-5)
    by_project = {g.key: g.answer.billed for g in report(rows, "project").groups}
    for (agent, project), dollars in raw.items():
        if agent == "claude_code":
            assert by_project[project] == pytest.approx(dollars, abs=1e-5)
    claude = [home / f / n for f, _, n in LAYOUT if f.startswith(".claude")]
    read, every = (sum(t) for t in zip(*(_claude_tokens(p) for p in claude)))
    group = next(g for g in report(rows, "agent").groups if g.key == "claude_code")
    assert (group.cache_read_tokens, group.input_tokens) == (read, every)
    assert group.cache_read_share == pytest.approx(read / every)


def test_cli_report_prints_json_csv_and_text_and_keeps_options_typed_before_report(logs, capsys):
    _, out = logs
    rows = _rows(out)
    billed = sum(r["billed"] for r in rows)
    assert main(["logs", "report", "--by", "week", "--json", "--out", str(out)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["by"] == "week" and body["total"]["billed"] == pytest.approx(billed, abs=1e-5)
    assert sum(g["billed"] for g in body["groups"]) == pytest.approx(billed, abs=1e-5)
    assert body["prices"] and all(g["group"] <= "9" for g in body["groups"])  # Monday dates, time order
    for g in body["groups"]:
        assert datetime.fromisoformat(g["group"]).weekday() == 0
    assert main(["logs", "--out", str(out), "report", "--csv", "--by", "project"]) == 0  # --out before report
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("group,sessions,billed,requests") and lines[-1].startswith("total,")
    assert len(lines) == 1 + len({r["project"] for r in rows}) + 1
    assert main(["logs", "report", "--by", "block", "--out", str(out), "--since", "2026-01-01"]) == 0
    shown = capsys.readouterr().out.splitlines()
    kept = [r for r in rows if r["start"][:10] >= "2026-01-01"]
    total = next(line.split() for line in shown if line.startswith("total "))
    assert total[1:4] == [str(len(kept)), f"{sum(r['requests_main'] + r['requests_subagent'] for r in kept):,}",
                          money(round(sum(r["billed"] for r in kept), 6))]
    assert 0 < len(kept) < len(rows)


def test_report_on_a_folder_without_a_table_is_one_line_naming_it(tmp_path, capsys):
    assert main(["logs", "report", "--out", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no logs table here" in err[0] and "none" in err[0]
    assert main(["logs", "report", "--out", str(tmp_path), "--since", "2026-02-01", "--until", "2026-01-01"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--since 2026-02-01 is after --until 2026-01-01" in err[0]
    assert main(["logs", "report", "--by", "hour"]) == 2  # not a grouping: argparse's one line
    assert "invalid choice: 'hour'" in capsys.readouterr().err


def test_rows_of_a_table_without_the_token_columns_are_read_again_once(logs):
    """A table written before the bill's token columns (no ``bill_version``) is read again by the next run,
    once: the cache-read share is then there, with no re-read afterwards."""
    home, out = logs
    table = pq.read_table(out / TABLE)
    old = table.drop_columns(["bill_version", "input_tokens", "cache_read_tokens", "cache_write_tokens",
                              "output_tokens"])
    pq.write_table(old, out / TABLE)
    assert report(_rows(out), "agent").total.cache_read_share is None
    found = [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]
    assert run_logs(found, str(out)).read == len(LAYOUT)
    assert report(_rows(out), "agent").total.cache_read_share is not None
    assert run_logs(found, str(out)).read == 0


def test_plain_pruner_logs_invocations_still_parse():
    from pruner.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["logs", "--bill-only", "--out", "x", "--since", "2026-01-01"])
    assert args.bill_only and args.out == "x" and args.logs_command is None
    assert args._run.__module__ == "pruner.cli.logs"
    args = parser.parse_args(["logs", "report", "--by", "model"])
    assert args.logs_command == "report" and args.report_by == "model"
    assert args._run.__module__ == "pruner.cli.logs_report"


# -- properties over random tables --

_STRATEGIES = strategy_names()
_T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


@st.composite
def _row(draw, n: int) -> dict:
    minutes = draw(st.integers(0, 60 * 24 * 70))
    start = _T0 + timedelta(minutes=minutes)
    models = draw(st.dictionaries(st.sampled_from(["a-1", "b-2", "c-3"]), st.integers(1, 9), max_size=3))
    row = {"session_key": f"k{n:04d}", "agent": draw(st.sampled_from(["claude_code", "codex", "pi"])),
           "project": draw(st.sampled_from(["p", "q", "=r"])),
           "start": None if draw(st.integers(0, 9)) == 0 else start.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "error": "unreadable" if draw(st.integers(0, 14)) == 0 else None,
           "billed": draw(st.floats(0, 50, allow_nan=False)), "prices": "pruner prices",
           "billed_by_model": json.dumps({m: {"requests": c, "dollars": 0.1 * c, "priced": True}
                                          for m, c in models.items()}),
           "models": json.dumps(models), "requests_main": draw(st.integers(0, 40)),
           "requests_subagent": draw(st.integers(0, 5)),
           "input_tokens": draw(st.integers(0, 10**6)), "cache_read_tokens": draw(st.integers(0, 10**7)),
           "cache_write_tokens": draw(st.integers(0, 10**6)), "removed": draw(st.booleans())}
    if draw(st.booleans()):
        row["modelled"] = row["billed"] * draw(st.floats(0.9, 1.1))
        for s in _STRATEGIES:
            row[f"{s}_dollars"] = draw(st.none() | st.floats(0, 60, allow_nan=False))
            row[f"{s}_feasible"] = draw(st.booleans())
            row[f"{s}_applicable"] = draw(st.booleans())
            row[f"{s}_recall"] = draw(st.none() | st.floats(0, 1))
    return row


_TABLES = st.integers(0, 25).flatmap(lambda n: st.tuples(*(_row(i) for i in range(n))).map(list))


@given(_TABLES)
def test_every_grouping_partitions_the_table_so_its_groups_sum_to_the_total(rows):
    for by in GROUPINGS:
        rolled = report(rows, by)
        groups = rolled.groups
        assert len({g.key for g in groups}) == len(groups)
        read = [r for r in rows if not r["error"]]
        assert sum(g.answer.sessions for g in groups) == rolled.total.answer.sessions == len(read)
        assert sum(g.answer.billed for g in groups) == pytest.approx(sum(r["billed"] for r in read), abs=1e-4)
        assert sum(g.requests for g in groups) == sum(r["requests_main"] + r["requests_subagent"] for r in read)
        assert sum(g.cache_read_tokens or 0 for g in groups) == sum(r["cache_read_tokens"] for r in read)
        for s in rolled.strategies:
            cells = [next((x for x in g.answer.sums if x.strategy == s), None) for g in groups]
            whole = next((x for x in rolled.total.answer.sums if x.strategy == s), None)
            assert sum(c.sessions for c in cells if c) == (whole.sessions if whole else 0)
            assert sum(c.dollars for c in cells if c) == pytest.approx(whole.dollars if whole else 0.0, abs=1e-4)


@given(_TABLES)
def test_each_groups_best_is_the_strategy_its_own_folder_verdict_names(rows):
    for by in ("week", "agent"):
        rolled = report(rows, by)
        for g in (*rolled.groups, rolled.total):
            sentence = g.answer.verdict()
            if g.best is None:
                assert not any(sentence.startswith(f"{s} would have saved ") for s in _STRATEGIES)
            else:
                assert sentence.startswith(f"{g.best} would have saved ")


def _ccusage_blocks(times: list[datetime]) -> list[datetime]:
    """The test's own reading of ccusage's rule (rust/crates/ccusage/src/blocks.rs, identify_session_blocks):
    per entry in time order, the start of its block."""
    out, start, last = [], None, None
    for t in sorted(times):
        hour = t.replace(minute=0, second=0, microsecond=0)
        if start is None or (t - start).total_seconds() > 5 * 3600 or (t - last).total_seconds() > 5 * 3600:
            start = hour
        last = t
        out.append(start)
    return out


@given(st.lists(st.integers(0, 60 * 24 * 6), max_size=30))
def test_block_is_ccusages_five_hour_window_over_the_sessions_starts(minutes):
    times = [_T0 + timedelta(minutes=m) for m in minutes]
    rows = [{"start": t.strftime("%Y-%m-%dT%H:%M:%SZ")} for t in times]
    keys = group_keys("block", rows)
    expected = dict(zip(sorted(times), _ccusage_blocks(times)))
    for t, key in zip(times, keys):
        start = datetime.strptime(key, "%Y-%m-%dT%H:%MZ").replace(tzinfo=timezone.utc)
        assert start == expected[t]
        assert start <= t <= start + timedelta(hours=5)


def test_a_row_without_the_field_is_in_the_none_group_not_dropped():
    rows = [{"session_key": "a", "billed": 1.0}, {"session_key": "b", "billed": 2.0, "start": "2026-03-02T10:00:00Z",
                                                  "agent": "pi", "project": "p", "models": '{"m": 3}'}]
    for by in GROUPINGS:
        rolled = report(rows, by)
        if by == "person":  # no person is this machine's own folder (a run without --homes), not unknown
            assert [(g.key, g.answer.billed) for g in rolled.groups] == [(THIS_MACHINE, 3.0)]
            continue
        assert [g.answer.billed for g in rolled.groups if g.key == NO_VALUE] == [1.0], by
        assert rolled.groups[-1].key == NO_VALUE  # last, after the real groups


def test_csv_cells_a_spreadsheet_would_run_are_quoted_as_text():
    rows = [{"session_key": "a", "billed": 1.0, "project": "=HYPERLINK(\"x\")", "start": "2026-03-02T10:00:00Z"}]
    body = as_csv(report(rows, "project"))
    assert "'=HYPERLINK" in body and "\n=HYPERLINK" not in body


def test_text_names_the_prices_and_a_bill_only_table_says_it_has_no_strategies():
    rows = [{"session_key": "a", "billed": 1.5, "prices": "pruner prices, retrieved 2026-11-30",
             "start": "2026-03-02T10:00:00Z", "agent": "pi"}]
    lines = text(report(rows, "agent"))
    assert lines[-1] == "Prices: pruner prices, retrieved 2026-11-30."
    assert lines[-2].startswith("A session counts whole in the group of its start (UTC)")
    assert any("No strategy was replayed" in x for x in lines)
    assert folder_answer(rows, _STRATEGIES).billed == 1.5


def test_groups_add_up_to_the_total_to_the_millionth_as_printed():
    """Each group and the total were rounded apart: 30 days of $0.0030024 printed 30 x $0.003002 = $0.090060
    against a total of $0.090072. The groups are now apportioned from the unrounded sums."""
    rows = [{"session_key": f"k{n:02d}", "agent": "codex", "project": "p", "error": None, "billed": 0.0030024,
             "start": (_T0 + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ"), "requests_main": 1}
            for n in range(30)]
    for by in ("day", "agent"):
        rolled = json.loads(as_json_report(rows, by))
        groups = [round(g["billed"] * 1e6) for g in rolled["groups"]]
        assert sum(groups) == round(rolled["total"]["billed"] * 1e6) == 90_072, by
        assert all(abs(g - 3002.4 * len(rows) / len(groups)) < 1 for g in groups)


def as_json_report(rows: list[dict], by: str) -> str:
    from pruner.logs.report import as_json

    return as_json(report(rows, by))
