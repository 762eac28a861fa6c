"""Done when (issue 30): ``pruner replay --json`` has a ``limit`` for each family and combined, each at
most the dollars of every feasible strategy of its family that meets the recall bar, on every sample,
every shared real log and generated sessions. The comparison reads the JSON rows the command wrote
(each strategy's ``totals``), never the library's function."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hsettings

from pruner.cli import main
from pruner.formats.native import dumps
from tests.support.paths import ROOT
from tests.unit.replay.test_replay_limit import cases

KEYS = {"dollars", "saving_vs_recorded", "schedule", "min_recall", "recall", "exact", "approximation", "feasible",
        "lower_bound"}
#: The registered strategies each family's schedules include (pruner.replay.limit.family.Family.members).
MEMBERS = {"prune": ("full", "prune_every_request"), "compaction": ("full", "compact"),
           "clearing": ("full", "clear_tool_uses"),
           "combined": ("full", "prune_every_request", "compact", "prune_then_compact")}
#: Every sample a replay answers: one whose usage is one total per run (Copilot CLI's session.shutdown) is
#: refused by pruner replay (issue 41; tests/unit/replay/test_replay.py checks that refusal).
SAMPLES = sorted(p for p in (ROOT / "sample_sessions").iterdir()
                 if p.is_file() and b'"session.shutdown"' not in p.read_bytes())
REAL = ROOT.parent / "shared" / "data" / "real"
REAL_LOGS = sorted(p for p in REAL.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".traj")
                   and p.name != "SOURCES.md") if REAL.is_dir() else []
#: What CI can afford on 2 cores: every real log (tau-bench's first dialogue; all fifteen with the bound
#: took 79 CPU s, the eight over 500 kB 61 of them) and samples under 200 kB. Larger samples run nightly.
CI_SAMPLE_BYTES = 200_000


def _replay_json(path: Path, tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / (path.name + ".replay.json")
    # no --limit: on sessions of at most hindsight.DEFAULT_BOUND_MAX_REQUESTS requests the bound is the default
    assert main(["replay", str(path), "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def _check(doc: dict) -> None:
    limit = doc["limit"]
    strategies = doc["strategies"]
    for family, members in MEMBERS.items():
        entry = limit[family]
        assert KEYS <= set(entry), family
        if family == "clearing":
            assert "parameters" in entry
        bar = entry["min_recall"]
        if not entry["applicable"]:  # clear_tool_uses off Anthropic: the family does not exist
            assert entry["dollars"] is None
            assert all(not strategies[n]["totals"]["applicable"] for n in members[1:] if n in strategies)
            continue
        for name in members:
            if name not in strategies:
                continue
            t = strategies[name]["totals"]
            rows = strategies[name]["requests"]
            # The strategy's figures from its rows: dollars summed request by request, recall from the
            # terms counts (rounded as the verdict reads it); an unpriced or rejected row rules it out.
            if not t["applicable"] or any(r["rejected"] or not r["priced"] for r in rows):
                continue
            recall = round(1 - t["terms_missing"] / t["used_terms"], 6) if t["used_terms"] else 1.0
            if recall < bar:
                continue
            dollars = sum(r["dollars"] for r in rows)
            assert entry["feasible"] and entry["dollars"] is not None, (family, name)
            assert entry["dollars"] <= dollars + 1e-6, (family, name, entry["dollars"], dollars)
            # the proven lower bound is one on every schedule of the family, the member's among them
            assert entry["lower_bound"] is not None and entry["lower_bound"] <= dollars + 1e-6, (family, name)
        if entry["dollars"] is not None:
            assert entry["recall"] >= bar
            assert entry["lower_bound"] <= entry["dollars"] + 1e-6, family
            if entry["exact"]:
                assert entry["lower_bound"] == pytest.approx(entry["dollars"], abs=1e-6), family
            combined = limit["combined"]
            if family in ("prune", "compaction"):  # its schedules are combined's
                assert combined["dollars"] is not None and combined["dollars"] <= entry["dollars"] + 1e-6
    for run in strategies.values():
        t = run["totals"]
        if t["regret"] is not None:
            assert t["regret"] == pytest.approx(t["dollars"] - limit["combined"]["dollars"], abs=2e-6)


@pytest.mark.parametrize("path", [p for p in SAMPLES if p.stat().st_size < 20_000], ids=lambda p: p.name)
def test_small_samples_have_a_limit_at_most_every_member_strategy(path, tmp_path):
    _check(_replay_json(path, tmp_path))


@pytest.mark.parametrize("path", [p for p in SAMPLES if 20_000 <= p.stat().st_size < CI_SAMPLE_BYTES],
                         ids=lambda p: p.name)
def test_workload_samples_have_a_limit_at_most_every_member_strategy(path, tmp_path):
    _check(_replay_json(path, tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in SAMPLES if p.stat().st_size >= CI_SAMPLE_BYTES], ids=lambda p: p.name)
def test_large_workload_samples_have_a_limit_at_most_every_member_strategy(path, tmp_path):
    _check(_replay_json(path, tmp_path))


def _real(path: Path, tmp_path: Path) -> None:
    # A tau-bench file holds many dialogues: the first is replayed, as the batch and the docs do.
    _check(_replay_json(path, tmp_path, *(["--dialogue", "0"] if path.parent.name == "tau-bench" else [])))


#: Real logs over this size take more than a few seconds each (the fast lane leaves them out; CI runs them).
SLOW_BYTES = 500_000


@pytest.mark.parametrize("path", [p if p.stat().st_size < SLOW_BYTES else pytest.param(p, marks=pytest.mark.slow)
                                  for p in REAL_LOGS], ids=lambda p: p.name)
def test_real_logs_have_a_limit_at_most_every_member_strategy(path, tmp_path):
    _real(path, tmp_path)


@hsettings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases(max_requests=8))
def test_generated_sessions_have_a_limit_at_most_every_member_strategy(case, tmp_path_factory):
    session, settings, min_recall = case
    tmp = tmp_path_factory.mktemp("limit")
    path = tmp / "s.jsonl"
    path.write_text(dumps(session))
    extra = ["--min-recall", str(min_recall), "--keep-recent-tokens", str(settings.keep_recent_tokens),
             "--reserve-tokens", str(settings.reserve_tokens)]
    if settings.context_window:
        extra += ["--context-window", str(settings.context_window)]
    _check(_replay_json(path, tmp, *extra))


def test_no_limit_leaves_it_out(tmp_path):
    out = tmp_path / "r.json"
    assert main(["replay", str(ROOT / "sample_sessions" / "pi_session.jsonl"), "--json", str(out), "--no-limit"]) == 0
    doc = json.loads(out.read_text())
    assert "limit" not in doc and "regret" not in doc["strategies"]["full"]["totals"]


def test_a_session_longer_than_the_default_says_its_bound_was_not_computed_and_limit_computes_it(
        tmp_path, monkeypatch, capsys):
    from pruner.replay import hindsight

    sample = ROOT / "sample_sessions" / "pi_session.jsonl"  # 7 requests
    monkeypatch.setattr(hindsight, "DEFAULT_BOUND_MAX_REQUESTS", 3)
    out = tmp_path / "r.json"
    assert main(["replay", str(sample), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["limit"]["computed"] is False and "7 requests, above the 3" in doc["limit"]["note"]
    assert "regret" not in doc["strategies"]["full"]["totals"]
    said = f"the least any schedule could cost at ≥ 99 % recall was not computed ({doc['limit']['note']})."
    assert printed.count(said) == 1 and printed.rstrip().endswith(said)  # once: the verdict's last line
    assert main(["replay", str(sample), "--json", str(out), "--limit"]) == 0
    _check(json.loads(out.read_text()))


_ = replace  # dataclasses.replace is used by the shared case builder
