"""The committed default results (and so the benchmark tables of docs/explanation/benchmarks.md) are
what the code gives today.

A fresh run of the same workloads, sizes and seeds must reproduce every figure in
``sample_sessions/bench/results.json`` except the timings, which belong to the run
that was committed (its machine, load and date are recorded in the file).
After changing the passes or the generator: ``pruner bench`` then
``python -m pruner.readme``.

Every run regenerates the smallest size of every workload (``SMALL_SIZES``: three configurations, their
baselines and bounds) and compares it with the committed rows; the whole run (every size up to 2,000 turns,
161 s of the serial run of 2026-12-07) is regenerated and compared under ``PRUNER_NIGHTLY=1``.
"""

from __future__ import annotations

import json

import pytest

from pruner import prune
from pruner.bench.baselines import oracle
from pruner.bench.run import TIMING_RUNS, config_dict, run_benchmark
from pruner.bench.workloads import SIZES, WORKLOADS, generate
from pruner.engine.prune import PruneConfig, message_tokens
from pruner.tokens import get_counter
from tests.support.paths import SAMPLES
from tests.support.profile import profile

pytestmark = pytest.mark.slow  # CONTRIBUTING.md, "Running the tests": out of the fast lane

RESULTS = SAMPLES / "bench" / "results.json"
TIMING_KEYS = {"prune_ms", "prune_ms_min", "prune_ms_max", "ms_per_1000_messages", "timing_runs", "replay_s",
               "replay_s_by_strategy", "recall_cost",
               "seconds"}  # the hindsight bound's search time (pruner.bench.regret)


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


#: The sizes every run regenerates (the smallest of the committed run's).
SMALL_SIZES = [50]


def _fresh(committed: dict, sizes: list[int]) -> dict:
    """``pruner bench`` again with the committed run's settings, on ``sizes``."""
    meta = committed["meta"]
    config = meta["config"]
    assert config["file_tools"] == "default", "the committed run used custom file tools"
    fresh = run_benchmark(workloads=list(meta["workloads"]), sizes=sizes, seeds=meta["seeds"],
                          config=PruneConfig(**{k: v for k, v in config.items() if k != "file_tools"}
                                             | {"disabled_rules": frozenset(config["disabled_rules"])}),
                          timing_runs=1, bound_turns=meta["bound_turns"])  # as far as the committed bounds go
    return json.loads(fresh.to_json())


@pytest.fixture(scope="module")
def committed():
    return json.loads(RESULTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def committed_and_fresh(committed):
    """The whole committed run regenerated: nightly only (``PRUNER_NIGHTLY=1``)."""
    if profile() != "nightly":
        pytest.skip("nightly (PRUNER_NIGHTLY=1) regenerates the whole run; every run compares SMALL_SIZES")
    return committed, _fresh(committed, committed["meta"]["sizes"])


def test_the_committed_rows_of_the_smallest_size_are_reproduced(committed):
    assert set(SMALL_SIZES) < set(committed["meta"]["sizes"])
    fresh = _fresh(committed, SMALL_SIZES)
    for key in ("rows", "baselines"):
        old_rows = [r for r in committed[key] if r["turns"] in SMALL_SIZES]
        assert old_rows and len(fresh[key]) == len(old_rows), key
        for new, old in zip(_without_timings(fresh[key]), _without_timings(old_rows)):
            assert new == old, f"{key}: {old.get('workload')} {old.get('turns')} differs; rerun `pruner bench`"
    meta_keys = ("counter", "encoding", "generator", "config", "workloads", "seeds")
    assert {k: fresh["meta"][k] for k in meta_keys} == {k: committed["meta"][k] for k in meta_keys}


def test_the_committed_run_is_the_default_run(committed):
    meta = committed["meta"]
    assert meta["environment"]["command"] == "pruner bench"
    assert meta["config"] == config_dict(PruneConfig())
    assert (list(meta["workloads"]), meta["sizes"], meta["seeds"], meta["timing_runs"]) == (
        list(WORKLOADS), list(SIZES), [0], TIMING_RUNS)


def test_every_committed_figure_except_timings_is_reproduced(committed_and_fresh):
    committed, fresh = committed_and_fresh
    for key in ("rows", "baselines"):
        assert len(fresh[key]) == len(committed[key])
        for new, old in zip(_without_timings(fresh[key]), _without_timings(committed[key])):
            assert new == old, f"{key}: {old.get('workload')} {old.get('turns')} differs; rerun `pruner bench`"
    assert _without_timings(fresh["summary"]) == _without_timings(committed["summary"])
    meta_keys = ("counter", "encoding", "generator", "config", "workloads", "sizes", "seeds")
    assert {k: fresh["meta"][k] for k in meta_keys} == {k: committed["meta"][k] for k in meta_keys}


def test_the_committed_timings_are_measured_not_typed(committed):
    for r in committed["rows"]:
        assert r["prune_ms_min"] <= r["prune_ms"] <= r["prune_ms_max"]
        assert r["ms_per_1000_messages"] == pytest.approx(1000 * r["prune_ms"] / r["messages_before"], abs=0.01)


@pytest.mark.parametrize("turns", [200, 500, 2000])
def test_plain_chat_gap_to_the_oracle_is_placeholders_and_restored_superseded_results(turns):
    """The README explains plain_chat's share of the oracle by exactly two causes; nothing else."""
    session = generate("plain_chat", turns=turns, seed=0)
    counter = get_counter("o200k_base")
    result = prune(session)
    orc = oracle(session, counter)
    kept, oracle_kept = {m.id for m in result.kept.messages}, set(orc.kept_ids)
    assert oracle_kept <= kept
    extra = [m for m in session.messages if m.id in kept - oracle_kept]
    for m in extra:
        d = result.decision(m.id)
        assert (m.tool_name, d.status, d.rule) == ("faq_lookup", "restored", "dependency")
        assert "removed by superseded_call" in d.reason
    placeholders = result.stats.tokens_after - sum(message_tokens(m, counter) for m in result.kept.messages)
    assert placeholders == result.stats.placeholder_tokens > 0
    assert result.stats.tokens_after - orc.tokens_after == placeholders + sum(message_tokens(m, counter)
                                                                              for m in extra)
