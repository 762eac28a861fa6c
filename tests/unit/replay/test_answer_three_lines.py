"""Issue 42, "One answer object" and "Three lines": one ``Answer`` type every surface renders; the printed
verdict is at most three lines, compares only strategies that could run, and never prints an infeasible
strategy's partial dollars as an amount (negative or bracketed); the bound is said once, worded by what is
proven; a run over 2 s shows a line that updates on a terminal's stderr and nothing in piped output.

Every figure checked here is computed by the test from the replay's rows or ``--json``'s totals."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pruner.cli import main
from pruner.money import money
from tests.support.paths import REAL_DATA, ROOT, SAMPLES

#: Every sample session (the bench folder holds results, not sessions).
SAMPLE_FILES = sorted(p for p in SAMPLES.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl", ".traj"))
#: Every shared real log (skipped when the folder is absent): each agent's transcripts, the licences left out.
REAL_FILES = sorted(p for p in REAL_DATA.glob("*/*") if p.is_file() and not p.name.startswith(("LICENSE", "SOURCES"))
                    and p.suffix in (".json", ".jsonl", ".traj")) if REAL_DATA.is_dir() else []

#: The surfaces that show the verdict: none may compose its sentences (they render ``Answer.lines``).
SURFACES = ("pruner/cli/replay.py", "pruner/cli/logs.py", "pruner/replay/report.py", "dashboard/app_pages/replay.py",
            "dashboard/logic/replay.py", "dashboard/logic/replay_bound.py", "dashboard/replay_answers.py",
            "dashboard/app_pages/corpus.py", "dashboard/logic/corpus_money.py", "dashboard/app_pages/explorer.py",
            "dashboard/logic/explorer_answer.py")
#: Fragments of the verdict's sentences: each is in the renderer (checked, so the list cannot go stale) and in
#: no surface.
FRAGMENTS = ("would have saved", "Nothing would have saved money", "No measurable saving", "least any schedule could",
             "would have lost", "keeps ≥", "at ≥ {", "Best possible in hindsight", "pruner's cache model puts",
             "against the modelled recording", "up to there")


def _replay(path: Path, *extra: str, capsys) -> tuple[dict, str]:
    """``pruner replay PATH --json`` in this process: (the JSON, the report it printed on stderr)."""
    capsys.readouterr()
    assert main(["replay", str(path), "--json", *extra]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def _check_printed(doc: dict, printed: str) -> None:
    said, runs = doc["verdict"], doc["strategies"]
    lines = said["lines"]
    assert 1 <= len(lines) <= 3, lines
    shown = printed.rstrip("\n").splitlines()
    assert shown[-len(lines):] == lines  # the verdict is the report's last lines, printed once
    could_run = {n for n, s in runs.items() if s["totals"]["feasible"] and s["totals"]["applicable"]}
    for line in lines[1:2]:  # the comparison: only strategies that could run are named
        named = {n for n in runs if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", line)}
        assert named <= could_run, (named - could_run, line)
    for name, s in runs.items():
        t = s["totals"]
        if t["feasible"] or not t["applicable"]:
            continue
        # the test's own reading of the partial figure: the requests before the first refused one
        stop = min(r["request"] for r in s["requests"] if r["rejected"] and not r["aborted"])
        partial = sum(r["dollars"] for r in s["requests"] if r["request"] < stop)
        assert t["infeasible_from"] == stop
        for amount in {money(partial), money(t["dollars"])}:
            assert f"−{amount}" not in printed and f"-{amount}" not in printed and f"({amount})" not in printed
        assert f"{name}: n/a: over the window from request {stop:,} ({money(partial)} up to there)" in printed
        row = next(x for x in printed.splitlines() if x.startswith(name + " "))
        assert row.split()[6] == "n/a", row  # the table's dollars column
    assert printed.count("least any schedule could cost") <= 1 and "Best possible" not in printed


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[p.name for p in SAMPLE_FILES])
def test_every_sample_prints_at_most_three_lines_comparing_only_strategies_that_could_run(path, capsys):
    if path.name in LUMP_SAMPLES:  # refused in one line (issue 41): the answer has nothing to compare there
        assert main(["replay", str(path)]) == 2
        assert "not per request" in capsys.readouterr().err
        return
    doc, printed = _replay(path, capsys=capsys)
    _check_printed(doc, printed)


def _records_lump_usage(path: Path) -> bool:
    """Whether a sample's usage is one shutdown total per run (Copilot CLI), read from its raw lines here."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return False
        if isinstance(record, dict) and record.get("type") == "session.shutdown":
            return True
    return False


#: Samples whose usage is one total per run: ``pruner replay`` refuses their counterfactuals.
LUMP_SAMPLES = {p.name for p in SAMPLE_FILES if _records_lump_usage(p)}


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_FILES, ids=[p.name for p in REAL_FILES])
def test_every_shared_real_log_prints_at_most_three_lines_comparing_only_strategies_that_could_run(path, capsys):
    # a file of many dialogues (tau-bench) is replayed one at a time: its first, as the recall report does
    doc, printed = _replay(path, *(("--dialogue", "0") if path.parent.name == "tau-bench" else ()), capsys=capsys)
    _check_printed(doc, printed)


@pytest.fixture(scope="module")
def small_window(tmp_path_factory) -> Path:
    """A generated agent session replayed under an 8,000-token window: full (and the recording, which sends
    everything it recorded) run over the window; compaction does not."""
    from pruner.bench.workloads import generate
    from pruner.formats.native import dumps

    path = tmp_path_factory.mktemp("window") / "agent.jsonl"
    path.write_text(dumps(generate("tool_agent", turns=30, seed=1)), encoding="utf-8")
    return path


WINDOW = ("--context-window=8000", "--reserve-tokens=1000", "--keep-recent-tokens=2000")


def test_an_infeasible_strategy_is_n_a_from_its_request_never_an_amount(small_window, capsys):
    doc, printed = _replay(small_window, *WINDOW, capsys=capsys)
    infeasible = [n for n, s in doc["strategies"].items() if not s["totals"]["feasible"]]
    assert "full" in infeasible, "the case is real: full runs over an 8,000-token window"
    _check_printed(doc, printed)
    excluded = {x["strategy"]: x for x in doc["verdict"]["excluded"]}
    for name in infeasible:
        if name in excluded:
            assert excluded[name]["from_request"] == doc["strategies"][name]["totals"]["infeasible_from"]


def test_an_infeasible_recording_is_not_what_savings_are_measured_against(small_window, capsys):
    """The 2,000-turn sample said "+248.5 % against the modelled recording" when the recording was itself over
    the window: no saving is measured against a figure that stops part-way."""
    doc, printed = _replay(small_window, *WINDOW, capsys=capsys)
    ref = doc["answer"]["reference"]
    t = doc["strategies"][ref]["totals"]
    assert not t["feasible"], "the case is real: the recording runs over the window"
    said = doc["verdict"]
    assert said["outcome"] == "no_reference" and not said["reference_feasible"]
    assert "against the modelled recording" not in " ".join(said["lines"])
    assert all(s["saving"] is None for s in doc["answer"]["strategies"].values())
    assert f"runs over the window from request {t['infeasible_from']:,}" in said["lines"][0]
    partial = sum(r["dollars"] for r in doc["strategies"][ref]["requests"] if r["request"] < t["infeasible_from"])
    assert money(partial) not in said["lines"][0]  # its partial dollars are no amount of the session's
    cheapest = min((s["totals"]["dollars"], n) for n, s in doc["strategies"].items()
                   if s["totals"]["feasible"] and s["totals"]["applicable"]
                   and (s["totals"]["context_recall"] >= 0.99))
    assert f"{cheapest[1]}, {money(cheapest[0])}" in said["lines"][1]


def test_the_bound_is_worded_by_what_is_proven(small_window, capsys):
    doc, printed = _replay(small_window, *WINDOW, "--limit", capsys=capsys)
    c = doc["limit"]["combined"]
    line = doc["verdict"]["lines"][-1]
    if c["dollars"] is None:
        assert "could cost at ≥" not in line
    elif c["exact"]:
        assert line.endswith(f"the least any schedule could cost at ≥ 99 % recall: {money(c['dollars'])} (exact).")
    else:
        assert line.endswith(f"between {money(c['lower_bound'])} and {money(c['dollars'])}.")
    assert "best possible" not in printed.lower()


def test_a_recorded_summary_left_out_is_not_pruning_s_loss():
    """A session that compacted: ``full`` (the recorded summary left out) lacks the terms only the summary
    held; the verdict says they were the summary's, and the count is recomputed here from the recall's losses."""
    from pruner.model import Message, Session
    from pruner.replay import replay, verdict

    s = Session.of([
        Message(id="u1", role="user", content="Start the migration for the billing service."),
        Message(id="a1", role="assistant", content="Working on it."),
        Message(id="s1", role="summary", content="Summary: the migration flag is ZEPHYR_77 in deploy.toml."),
        Message(id="u2", role="user", content="Go on."),
        Message(id="a2", role="assistant", content="Setting ZEPHYR_77 in deploy.toml now."),
    ])
    r = replay(s, ["as_recorded", "full"], snapshots=False)
    a = verdict(r)
    losses = r.recall.strategies["full"].losses
    from_summary = {x.term for x in losses if x.source is not None and s.messages[x.source].role == "summary"
                    and x.left_at is None}
    assert a.strategy == "full" and losses, "the case is real: full lacks what only the summary held"
    assert a.lost_summary == a.lost_terms == len(from_summary) > 0
    text = a.lines()[-1]
    assert "all held by the recorded compaction summary it does not send" in text and "pruned" not in text


def _strings(path: Path) -> str:
    """Every string a module's code builds (its docstrings left out: they may name what the renderer says), the
    pieces of an f-string joined with "{" where a value goes."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{" for v in n.values))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            out.append(n.value)
    return "\n".join(out)


def test_no_surface_composes_a_verdict_sentence_of_its_own():
    """Every surface renders the one ``Answer`` (``lines()``, ``explain()``, ``to_json()``) or the folder's
    (``FolderAnswer.lines``); the sentences live in their renderers alone."""
    renderer = (ROOT / "pruner/replay/verdict.py").read_text(encoding="utf-8") + \
        (ROOT / "pruner/replay/answer.py").read_text(encoding="utf-8")
    for fragment in FRAGMENTS:
        if fragment != "Best possible in hindsight":  # the old wording: gone everywhere
            assert fragment in renderer, fragment
    for surface in SURFACES:
        text = _strings(ROOT / surface)
        found = [f for f in FRAGMENTS if f in text]
        assert not found, (surface, found)
    calls = {"pruner/cli/replay.py": "said.lines()", "dashboard/app_pages/replay.py": "said.lines()",
             "pruner/cli/logs.py": "folder.lines(", "dashboard/logic/corpus_money.py": ".lines(min_recall)",
             "pruner/replay/report.py": "said.to_json()", "dashboard/logic/explorer_answer.py": "said.lines()"}
    for surface, call in calls.items():
        assert call in (ROOT / surface).read_text(encoding="utf-8"), (surface, call)
    cli = (ROOT / "pruner/cli/replay.py").read_text(encoding="utf-8")
    assert 'data["verdict"]' not in cli  # the JSON's verdict is generated from the type, never patched after


def test_the_json_verdict_is_the_answer_type_rendered():
    from dataclasses import fields

    from pruner.bench.workloads import generate
    from pruner.replay import Answer, replay, verdict
    from pruner.replay.report import to_json

    r = replay(generate("tool_agent", turns=12, seed=0), snapshots=False)
    a = verdict(r)
    doc = to_json(r)
    assert doc["verdict"] == json.loads(json.dumps(a.to_json()))
    assert doc["verdict"]["lines"] == list(a.lines()) and doc["verdict"]["sentence"] == " ".join(a.lines())
    names = {f.name for f in fields(Answer)} - {"figures", "unpriced_requests", "lost_terms"}
    assert names <= set(doc["verdict"]), names - set(doc["verdict"])


def test_explain_holds_the_method_and_the_default_report_does_not(capsys):
    sample = SAMPLES / "pi_session.jsonl"
    capsys.readouterr()
    assert main(["replay", str(sample)]) == 0
    plain = capsys.readouterr().out
    assert main(["replay", str(sample), "--explain"]) == 0
    explained = capsys.readouterr().out
    assert "calibration against the recorded usage" not in plain and "calibration against the recorded usage" in \
        explained
    assert "docs/explanation/hindsight-bound.md" in explained
    assert "(method, calibration and caveats: --explain)" in plain
    assert plain.splitlines()[-3:] == explained.splitlines()[-3:]  # the same three lines end both


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_run_over_the_delay_shows_a_line_that_updates_on_a_terminal_and_nothing_in_a_pipe(monkeypatch, capsys):
    from pruner.cli import ticker

    terminal = _Terminal()
    monkeypatch.setattr(ticker, "DELAY", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["replay", str(SAMPLES / "workload-tool_agent-50.jsonl"), "--no-limit"]) == 0
    drawn = terminal.getvalue()
    assert drawn.startswith("\r") and "… " in drawn and drawn.endswith("\r")  # drawn in place, then erased
    assert "\r" not in capsys.readouterr().out  # the report itself holds none

    piped = subprocess.run([sys.executable, "-m", "pruner", "replay", str(SAMPLES / "pi_session.jsonl"), "--json"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert piped.returncode == 0 and "\r" not in piped.stderr and "\r" not in piped.stdout
    json.loads(piped.stdout)


def test_the_ticker_waits_for_its_delay():
    from pruner.cli.ticker import Ticker

    out = _Terminal()
    with Ticker(out, delay=30.0) as t:
        t.stage("replaying")
    assert out.getvalue() == ""  # a command that answers within the delay prints nothing of it
