"""Issue 33's low frictions, each pinned: ``--json`` alone and ``--json -`` to stdout, one tie-break rule,
the sign of a change, a Claude Code file's bookkeeping lines counted rather than warned about, and
``--since`` / ``--until`` on the days a session records."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import ROOT

SAMPLE = "sample_sessions/claude_code.jsonl"


def _replay(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pruner", "replay", SAMPLE, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_replay_json_with_no_value_or_a_dash_prints_the_json_on_stdout():
    """``pruner replay FILE --json`` failed with "expected one argument"; ``--json -`` printed the JSON after
    the report, so stdout was no JSON. Both now give stdout the JSON alone and the report to stderr.

    Round 4, defect 33."""
    for args in (("--json",), ("--json", "-")):
        p = _replay(*args)
        assert p.returncode == 0, p.stderr
        data = json.loads(p.stdout)
        assert data["answer"]["modelled"] > 0 and all(line in p.stderr for line in data["verdict"]["lines"])
    both = _replay("--json", "-", "--csv", "-")
    assert both.returncode == 2 and "both write to standard output" in both.stderr


@given(st.lists(st.tuples(st.sampled_from(["full", "truncate", "compact", "cache_aware_prune"]),
                          st.sampled_from([1.0, 1.0000001, 2.0]), st.sampled_from([None, 0.98, 1.0])),
                min_size=1, max_size=4, unique_by=lambda t: t[0]))
def test_one_tie_break_rule_whatever_order_the_strategies_come_in(options):
    """The Corpus page and the Replay page named different bests on a tie ($16.66): one rule, independent
    of the order the candidates are listed in: fewest dollars, then higher recall, then the registry's order."""
    from pruner.replay.answer import rank_key
    from pruner.replay.strategy import strategy_names

    order = strategy_names()
    picks = {min(perm, key=lambda o: rank_key(o[0], o[1], o[2]))[0] for perm in (options, options[::-1])}
    assert len(picks) == 1
    (pick,) = picks
    d, r = next((d, r) for n, d, r in options if n == pick)
    for n, d2, r2 in options:  # nothing beats it: cheaper, or as cheap and keeping more, or as both and simpler
        assert (round(d, 6), -(r if r is not None else 1.0), order.index(pick)) <= \
            (round(d2, 6), -(r2 if r2 is not None else 1.0), order.index(n))


def test_a_change_is_signed_with_a_minus_sign_and_never_rounds_a_saving_to_plus_zero():
    from pruner.replay.answer import signed

    assert [signed(x) for x in (-31.8, 1.44, 0.0, -0.02, -0.004)] == ["−31.8", "+1.4", "+0.0", "−0.02", "−<0.01"]


def test_claude_code_bookkeeping_lines_are_counted_not_warned(real_data):
    """The Explorer warned "To open this file the reader skipped 116 entries of unknown type 'system'" on
    a normal Claude Code file: those are the agent's hook and system lines, a known type.

    Round 4, defect 33."""
    from dashboard.logic import explorer
    from pruner import load_session

    path = real_data / "claude-code/task-patterns-998db3cd.jsonl"
    system = sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and json.loads(line).get("type") == "system"
                 and json.loads(line).get("subtype") != "compact_boundary")
    session = load_session(path)
    notice = explorer.repairs_notice(session) or ""
    assert "unknown type" not in notice
    assert f"{system:,} 'system'" in (explorer.bookkeeping_note(session) or "")


def test_since_and_until_read_the_days_a_session_records_not_its_file_time(tmp_path):
    """``--since`` / ``--until`` compared a file's modification day: a session copied today counted as
    today's. The days it records decide now.

    Round 4, defect 33."""
    home = tmp_path / "home"
    folder = home / ".claude/projects/-work-x"
    folder.mkdir(parents=True)
    line = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2025-03-04T10:00:00.000Z",
            "message": {"role": "user", "content": "hi"}}
    (folder / "s.jsonl").write_text(json.dumps(line) + "\n")
    env = {**os.environ, "HOME": str(home)}

    def found(*args: str) -> int:
        p = subprocess.run([sys.executable, "-m", "pruner", "logs", "--list", "--agent", "claude_code", *args],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        return int(p.stdout.splitlines()[1].split()[1])

    assert found("--since", "2025-03-04", "--until", "2025-03-04") == 1
    assert found("--since", "2025-03-05") == 0  # the file was written today; the session is of March 2025


def test_an_infeasible_strategy_is_n_a_never_the_smallest_figure_of_its_column(real_data):
    """The Replay page showed an infeasible full's partial dollars as a plain figure, the column's smallest
    on some sessions; then bracketed, read as a negative amount (issue 42). On codemie-session-624a4a58 full
    runs over the window: "n/a", and the reason with the request and the dollars up to there.

    Round 4, defect 33."""
    from dashboard.logic import replay as page
    from pruner import load_session
    from pruner.money import money

    session = load_session(real_data / "claude-code/codemie-session-624a4a58.jsonl")
    r = page.run(session, page.choice_for(session, None))
    table = page.totals_frame(r).set_index("strategy")
    assert not r.runs["full"].totals["feasible"]
    assert table.loc["full (infeasible)", "dollars"] == "n/a"
    assert table.loc["full (infeasible)", "vs modelled"] == "-"
    rows = r.runs["full"].rows
    stop = next(x.request for x in rows if x.rejected and not x.aborted)
    up_to = sum(x.dollars for x in rows if x.request < stop)
    assert page.figures(r).na_of("full") == f"n/a: over the window from request {stop:,} ({money(up_to)} up to there)"
    plain = [v for v in table["dollars"] if v != "n/a"]
    assert plain and all(v.startswith("$") for v in plain)


def test_the_visibility_line_does_not_depend_on_the_strategies_asked_for():
    """``pruner replay FILE --strategies full`` printed "Visibility: not measurable (the session records
    no usage …)" on a Codex rollout that records usage on every request, because the share was read
    from the ``as_recorded`` run alone: the warning a redacted rollout needs vanished with a flag.

    Round 4, defect 33."""
    sample = str(ROOT / "sample_sessions" / "codex_rollout.jsonl")

    def visibility(*extra: str) -> str:
        p = subprocess.run([sys.executable, "-m", "pruner", "replay", sample, *extra], capture_output=True,
                           text=True, cwd=ROOT, check=True)
        return next(line for line in p.stdout.splitlines() if line.startswith("Visibility"))

    every = visibility()
    # The billed input tokens, summed here from the rollout's own token_count events (last_token_usage).
    billed = 0
    with open(sample, encoding="utf-8") as fh:
        for line in fh:
            event = json.loads(line)
            payload = event.get("payload") or {}
            if payload.get("type") == "token_count" and (payload.get("info") or {}).get("last_token_usage"):
                billed += payload["info"]["last_token_usage"]["input_tokens"]
    assert f"of the {billed:,} input tokens billed" in every
    for subset in ("full", "full,truncate", "compact"):
        assert visibility("--strategies", subset) == every, subset
