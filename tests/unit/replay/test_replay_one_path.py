"""One answer for one call (issue 34): ``pruner.replay_session(session)`` gives the totals
``pruner replay --json`` gives, on every shipped sample and every shared real log.

The library's ``replay`` chooses the provider and model (``pruner.replay.detect.resolve_settings``);
the CLI, the dashboard and ``pruner logs`` no longer choose them themselves. The CLI runs here as a
subprocess, so nothing it does in-process can make the two agree by accident.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pruner import ReplaySettings, load_session, replay_session
from pruner.jsonio import dumps_json
from tests.support.paths import REAL_DATA, ROOT, SAMPLES

#: A file this large takes seconds to replay under every strategy (twice here): the slow lane's.
SLOW_BYTES = 200_000
_REAL_SUFFIXES = (".json", ".jsonl", ".traj")
#: The wall-clock time a strategy took: the one total that differs between two runs of the same replay.
TIMING = "seconds"


def _cases() -> list:
    files = sorted(p for p in SAMPLES.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl", ".traj"))
    if REAL_DATA.is_dir():
        files += sorted(p for p in REAL_DATA.rglob("*") if p.is_file() and p.suffix in _REAL_SUFFIXES)
    cases = []
    for path in files:
        dialogue = 0 if path.name == "gpt-4o-airline.json" else None  # 200 dialogues: the CLI needs one named
        marks = [pytest.mark.slow] if path.stat().st_size > SLOW_BYTES else []
        label = str(path.relative_to(ROOT.parent if REAL_DATA in path.parents else ROOT))
        cases.append(pytest.param(path, dialogue, id=label, marks=marks))
    return cases


def _cli_json(path: Path, dialogue: int | None, out: Path) -> dict:
    # --no-limit: the strategies' totals are compared here; the bound's regret columns are the bound's
    # (the same line on every surface: tests/unit/dashboard/test_replay_bound_dashboard.py,
    # tests/unit/replay/test_one_answer.py)
    args = [sys.executable, "-m", "pruner", "replay", str(path), "--json", str(out), "--no-limit"]
    if dialogue is not None:
        args += ["--dialogue", str(dialogue)]
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("path", "dialogue"), _cases())
def test_replay_session_gives_the_cli_totals(path: Path, dialogue: int | None, tmp_path: Path):
    from pruner.formats.copilot_cli import lump_usage

    lump = lump_usage(load_session(path, dialogue=dialogue))
    if lump is not None:
        # usage recorded as one total per run (Copilot CLI's session.shutdown): the CLI refuses to replay
        # it, in one line that names why (issue 41); there are no per-request totals to compare
        done = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--json",
                               str(tmp_path / "replay.json"), "--no-limit"],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert done.returncode == 2 and lump in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "replay.json").exists()
        return
    cli = _cli_json(path, dialogue, tmp_path / "replay.json")
    r = replay_session(load_session(path, dialogue=dialogue))
    assert sorted(r.runs) == sorted(cli["strategies"])
    for name, run in r.runs.items():
        # the JSON the CLI wrote against the Python totals written the same way (tuples as lists, floats as JSON)
        ours = {k: v for k, v in json.loads(dumps_json(run.totals)).items() if k != TIMING}
        theirs = {k: v for k, v in cli["strategies"][name]["totals"].items() if k != TIMING}
        assert ours == theirs, name
    assert r.money_label == cli["meta"]["prices"]


def test_the_python_call_prices_the_codex_sample_as_the_cli_does():
    """``replay_session`` on the Codex sample priced the 3 requests that record no model at
    claude-sonnet-4-5 (``ReplaySettings()`` defaulted to Anthropic): full $0.0663 from Python against
    $0.0111 from the CLI. Every request is now OpenAI's, at the model the session records.

    Issue 34."""
    r = replay_session(load_session(SAMPLES / "codex_rollout.jsonl"))
    assert r.settings.provider == "openai" and r.settings.model == "gpt-5-codex"
    assert r.model_choice == "the session records model 'gpt-5-codex'"
    assert {(q.price.provider, q.price.model) for q in r.requests if q.price is not None} == {("openai", "gpt-5-codex")}
    # full at the gpt-5-codex row, summed here from every request's own cache split
    price = r.requests[0].price
    assert price is not None
    rows = r.runs["full"].rows
    expected = sum(row.fresh * price.input + row.cached * price.cached_input + row.written * price.write_price("5m")
                   + row.output * price.output for row in rows) / 1_000_000
    assert r.runs["full"].totals["dollars"] == pytest.approx(expected, abs=1e-6)
    assert r.runs["full"].totals["dollars"] < 0.02  # not the $0.0663 of the Claude prices


def test_named_settings_win_over_the_session():
    session = load_session(SAMPLES / "codex_rollout.jsonl")
    anthropic = replay_session(session, ["full"], settings=ReplaySettings(provider="anthropic"))
    assert anthropic.model_choice is None
    # a request that records no model is priced at the named provider's default; a recorded one at its own
    unrecorded = {q.price.model for q in anthropic.requests if q.model is None and q.price is not None}
    assert unrecorded == {"claude-sonnet-4-5-20250929"}
    by_model = replay_session(session, ["full"], settings=ReplaySettings(model="gpt-5.1"))
    assert by_model.settings.provider == "openai" and by_model.model_choice is None
    assert {q.price.model for q in by_model.requests if q.model is None and q.price is not None} == {"gpt-5.1"}
