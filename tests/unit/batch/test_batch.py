"""pruner batch on a Dask LocalCluster: equal to a serial loop, nothing lost, reruns skip what is done."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pruner import PruneConfig, prune
from pruner.batch import BatchSettings, expand_inputs, plan_partitions, run_batch
from pruner.batch.worker import Partition, run_partition
from pruner.cli import main
from pruner.errors import ConfigurationError
from pruner.formats import load_dialogues
from tests.support.paths import REAL_DATA, SAMPLES
from tests.support.batch import batch_results, read_tables, serial_results

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    """One LocalCluster run (2 worker processes) over the samples and, when present, the real transcripts."""
    inputs = [SAMPLES] + ([REAL_DATA] if REAL_DATA.is_dir() else [])
    out = tmp_path_factory.mktemp("batch") / "out"
    summary = run_batch([str(i) for i in inputs], out, workers=2)
    return inputs, out, summary


def test_local_cluster_equals_a_serial_loop(corpus_run):
    inputs, out, summary = corpus_run
    expected = serial_results(inputs, exclude=out)
    found = batch_results(out)
    assert found.keys() == expected.keys()
    for key in expected:
        if expected[key]["error"] is None:
            assert found[key] == expected[key], key
        else:
            assert found[key]["error"] == expected[key]["error"]
    assert summary.cluster == "LocalCluster" and summary.workers == 2
    assert summary.sessions == len(expected) and summary.failed == sum(1 for v in expected.values() if v["error"])
    assert summary.tokens_before == sum(v["tokens"][0] for v in expected.values() if v["error"] is None)


def test_real_data_is_in_the_batch(corpus_run, real_data):
    _, out, _ = corpus_run
    sessions, _ = read_tables(out)
    tau = sessions[sessions["source"] == str(real_data / "tau-bench" / "gpt-4o-airline.json")]
    assert sorted(tau["dialogue"].astype(int)) == list(range(200))
    assert (tau["dialogues"] == 200).all() and tau["error"].isna().all()
    # The 32 canonical repeats (docs/explanation/decisions.md), less those no longer than their placeholder,
    # which are kept since a removal must pay for itself: as a serial prune of each dialogue finds them.
    path = real_data / "tau-bench" / "gpt-4o-airline.json"
    expected = sum(d.rule == "superseded_call" for s in load_dialogues(path) for d in prune(s).decisions)
    assert int(tau["rule_superseded_call"].sum()) == expected and 0 < expected <= 32


def test_every_input_appears_once_with_one_decision_per_message(corpus_run):
    inputs, out, summary = corpus_run
    sessions, decisions = read_tables(out)
    files = {f.path for f in expand_inputs([str(i) for i in inputs], exclude=str(out)).files}
    assert set(sessions["source"]) == files
    assert not sessions.duplicated(["source", "dialogue"]).any()
    assert sessions["session_id"].is_unique
    ok = sessions[sessions["error"].isna()]
    per_session = decisions.groupby("session_id").size()
    assert per_session.reindex(ok["session_id"]).tolist() == ok["messages_before"].astype(int).tolist()
    assert not decisions.duplicated(["session_id", "position"]).any()
    assert set(decisions["session_id"]) <= set(ok["session_id"])
    assert summary.inputs == len(files) and summary.files == len(files) and summary.skipped == 0


def test_each_benchmark_results_file_is_one_error_row(corpus_run):
    _, out, summary = corpus_run
    sessions, _ = read_tables(out)
    failed = sessions[sessions["error"].notna()]
    results_files = sorted(str(p) for p in (SAMPLES / "bench").glob("*.json"))  # JSON, but not transcripts
    assert sorted(failed["source"]) == results_files and results_files
    assert failed["error"].str.contains("unknown format").all()
    assert failed["dialogue"].isna().all() and failed["tokens_before"].isna().all()
    reported = [source for source, _ in summary.errors]  # the first REPORTED_ERRORS (5) of the run
    assert set(reported) <= set(results_files) and len(reported) == min(len(results_files), 5)


def test_tables_read_back_with_pyarrow_as_one_dataset(corpus_run):
    _, out, _ = corpus_run
    import pyarrow.dataset as ds
    from pruner.batch import DECISIONS, SESSIONS
    assert ds.dataset(out / "sessions", format="parquet").schema.equals(SESSIONS)
    assert ds.dataset(out / "decisions", format="parquet").schema.equals(DECISIONS)
    manifest = json.loads((out / "_pruner_batch.json").read_text())
    assert manifest["last_run"]["sessions"] == ds.dataset(out / "sessions").count_rows()


def test_rerun_skips_what_is_done_and_replaces_changed_files(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for name in ("native_demo.jsonl", "openai_chat.json", "workload-tool_agent-50.jsonl"):
        shutil.copy(SAMPLES / name, src / name)
    out = tmp_path / "out"
    first = run_batch([str(src)], out, workers=1)
    assert (first.files, first.skipped, first.sessions) == (3, 0, 3)
    again = run_batch([str(src)], out, workers=1)
    assert (again.files, again.skipped, again.sessions, again.partitions) == (0, 3, 0, 0)
    # a changed file is done again and its old rows go; an added file is done; nothing appears twice
    shutil.copy(SAMPLES / "workload-rag_assistant-50.jsonl", src / "workload-tool_agent-50.jsonl")
    shutil.copy(SAMPLES / "claude_code.jsonl", src / "added.jsonl")
    third = run_batch([str(src)], out, workers=1)
    assert (third.files, third.skipped, third.replaced) == (2, 2, 1)
    found = batch_results(out)
    assert found == serial_results([src])


def test_a_broken_file_among_good_ones_is_one_error_row(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLES / "native_demo.jsonl", src / "good.jsonl")
    shutil.copy(SAMPLES / "pi_session.jsonl", src / "good-pi.jsonl")
    (src / "truncated.json").write_text('[{"role": "user", "content": "hi"', encoding="utf-8")
    (src / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 50)
    (src / "bad-role.jsonl").write_text('{"role": "wizard", "content": "x"}\n', encoding="utf-8")
    out = tmp_path / "out"
    summary = run_batch([str(src)], out, workers=1)
    sessions, _ = read_tables(out)
    assert len(sessions) == 5 and summary.failed == 3 and summary.processed == 2
    errors = sessions.set_index(sessions["source"].map(lambda p: Path(p).name))["error"]
    assert errors[["good.jsonl", "good-pi.jsonl"]].isna().all()
    assert "binary" in errors["binary.jsonl"]
    for name in ("truncated.json", "binary.jsonl", "bad-role.jsonl"):
        assert errors[name].startswith(str(src / name)), errors[name]  # names the file
    assert batch_results(out) == {k: (v if v["error"] is None else {"error": v["error"]})
                                  for k, v in serial_results([src]).items()}


def test_rerunning_a_partition_replaces_it(tmp_path):
    """What Dask does when a worker dies: the same task runs again; its files are replaced, not added."""
    out = tmp_path / "out"
    settings = BatchSettings()
    from pruner.batch import Folder
    Folder(str(out)).prepare(settings)
    files = (str(SAMPLES / "native_demo.jsonl"), str(SAMPLES / "openai_chat.json"))
    partition = Partition(key="k1", out=str(out), files=files, settings=settings)
    run_partition(partition)
    first = {p.name: p.read_bytes() for p in (out / "sessions").iterdir()}
    run_partition(partition)
    assert sorted(p.name for p in (out / "sessions").iterdir()) == sorted(first)
    assert len(pd.read_parquet(out / "sessions")) == 2
    assert len(pd.read_parquet(out / "decisions")) == sum(
        v["messages"][0] for v in serial_results([SAMPLES / "native_demo.jsonl", SAMPLES / "openai_chat.json"])
        .values())


def test_leftovers_of_an_interrupted_run_are_removed(tmp_path):
    """Regression: a worker killed between writing decisions and sessions left rows with no session."""
    out = tmp_path / "out"
    settings = BatchSettings()
    from pruner.batch import Folder
    Folder(str(out)).prepare(settings)
    partition = Partition(key="k1", out=str(out), files=(str(SAMPLES / "native_demo.jsonl"),), settings=settings)
    run_partition(partition)
    orphan = out / "decisions" / "part-0000orphan.parquet"
    shutil.copy(next((out / "decisions").iterdir()), orphan)
    (out / "sessions" / ".part-x.parquet.abc.tmp").write_bytes(b"partial")
    summary = run_batch([str(SAMPLES / "native_demo.jsonl")], out, workers=1)
    assert summary.skipped == 1
    assert not orphan.exists() and not list((out / "sessions").glob(".*"))
    assert len(pd.read_parquet(out / "decisions")) == 25


def test_limit_takes_the_first_files_in_path_order(tmp_path):
    summary = run_batch([str(SAMPLES)], tmp_path / "out", workers=1, limit=2)
    names = sorted(Path(p).name for p in pd.read_parquet(tmp_path / "out" / "sessions")["source"])
    all_files = [f.path for f in expand_inputs([str(SAMPLES)]).files]
    assert names == sorted(Path(p).name for p in all_files[:2])
    assert summary.not_taken == len(all_files) - 2


def test_folder_with_other_settings_or_other_files_is_refused(tmp_path):
    out = tmp_path / "out"
    run_batch([str(SAMPLES / "native_demo.jsonl")], out, workers=1)
    with pytest.raises(ConfigurationError, match="other settings"):
        run_batch([str(SAMPLES / "native_demo.jsonl")], out, BatchSettings(config=PruneConfig(restore=False)),
                  workers=1)
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(ConfigurationError, match="not a batch folder"):
        run_batch([str(SAMPLES / "native_demo.jsonl")], stranger, workers=1)
    assert (stranger / "notes.txt").read_text() == "mine"


def test_inputs_expand_folders_globs_and_refuse_what_names_nothing(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.jsonl").write_text("{}")
    (tmp_path / "a" / "LICENSE").write_text("MIT")
    (tmp_path / "a" / ".hidden.json").write_text("{}")
    (tmp_path / "b.json").write_text("{}")
    found = expand_inputs([str(tmp_path / "a"), str(tmp_path / "*.json"), str(tmp_path / "b.json")])
    assert [Path(f.path).name for f in found.files] == ["x.jsonl", "b.json"]
    assert found.passed_over == 2
    with pytest.raises(ConfigurationError, match="no such file"):
        expand_inputs([str(tmp_path / "missing.json")])
    with pytest.raises(ConfigurationError, match="matches no file"):
        expand_inputs([str(tmp_path / "*.traj")])


def test_partitions_cover_every_file_once_with_stable_keys(tmp_path):
    files = expand_inputs([str(SAMPLES)]).files
    settings = BatchSettings()
    one = plan_partitions(files, out=str(tmp_path), settings=settings, workers=2)
    two = plan_partitions(files, out=str(tmp_path), settings=settings, workers=2)
    assert one == two
    assert sorted(p for part in one for p in part.files) == sorted(f.path for f in files)
    assert len(one) > 1  # spread over the workers
    other = plan_partitions(files, out=str(tmp_path), settings=BatchSettings(config=PruneConfig(expire=False)),
                            workers=2)
    assert {p.key for p in one}.isdisjoint(p.key for p in other)
    elsewhere = plan_partitions(files, out=str(tmp_path / "b"), settings=settings, workers=2)
    assert {p.key for p in one}.isdisjoint(p.key for p in elsewhere)  # two runs on one cluster never share a task


def test_cli_prints_the_summary_and_json(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["batch", str(SAMPLES / "native_demo.jsonl"), str(SAMPLES / "swe_agent.traj"),
                 "--out", str(out), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "2 processed, 0 failed" in text and "LocalCluster, 1 worker(s)" in text
    assert main(["batch", str(SAMPLES / "native_demo.jsonl"), "--out", str(out), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["skipped"] == 1 and body["files"] == 0 and body["processed"] == 0


@pytest.mark.parametrize("argv, message", [
    (["batch", "missing.jsonl", "--out", "OUT"], "missing.jsonl: no such file or directory"),
    (["batch", "SAMPLE", "--out", "OUT", "--workers", "0"], "is not a positive whole number"),
    (["batch", "SAMPLE", "--out", "OUT", "--scheduler", "not an address"], "not a scheduler address"),
    (["batch", "SAMPLE", "--out", "OUT", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
     "not allowed with argument"),
    (["batch", "SAMPLE", "--out", "SAMPLE"], "a batch folder must be a folder (choose it with --out DIR)"),
])
def test_cli_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    sample = str(SAMPLES / "native_demo.jsonl")
    argv = [{"OUT": str(tmp_path / "out"), "SAMPLE": sample}.get(a, a) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    with pytest.raises(ConfigurationError, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        run_batch([str(SAMPLES / "native_demo.jsonl")], tmp_path / "out", scheduler=f"tcp://127.0.0.1:{port}",
                  connect_timeout_s=2)


def test_terminal_escapes_control_characters_in_paths_and_errors():
    from pruner.cli.batch import printable
    assert printable("evil\x1b[31mname\x07.json") == "evil\\x1b[31mname\\x07.json"
    assert os.sep in printable(str(SAMPLES))


def test_replay_totals_equal_a_serial_replay_per_session_and_strategy(tmp_path):
    from pruner.formats import load_dialogues
    from pruner.replay import ReplaySettings, replay
    files = [SAMPLES / "native_demo.jsonl", SAMPLES / "workload-tool_agent-50.jsonl", SAMPLES / "swe_agent.traj"]
    strategies = ("full", "prune_every_request", "cache_aware_prune")
    settings = BatchSettings(replay=strategies, replay_settings=ReplaySettings(provider="openai"))
    summary = run_batch([str(f) for f in files], tmp_path / "out", settings, workers=1)
    table = pd.read_parquet(tmp_path / "out" / "replay")
    sessions = pd.read_parquet(tmp_path / "out" / "sessions").set_index("session_id")
    assert len(table) == len(files) * len(strategies) and sessions["replay_error"].isna().all()
    for f in files:
        sid = sessions.index[sessions["source"] == str(f)][0]
        r = replay(load_dialogues(f)[0], strategies, settings=ReplaySettings(provider="openai"))
        for name in strategies:
            row = table[(table["session_id"] == sid) & (table["strategy"] == name)].iloc[0]
            t = r.runs[name].totals
            assert (row["dollars"], row["input_tokens"]) == (t["dollars"], t["fresh"] + t["cached"] + t["written"])
            assert row["prices"] == r.money_label and "USD per MTok" in row["prices"]
            # context recall per strategy (issue 20): the serial replay's counts, and the share they give
            assert (row["used_terms"], row["terms_missing"]) == (t["used_terms"], t["terms_missing"])
            assert row["context_recall"] == pytest.approx(1 - row["terms_missing"] / row["used_terms"]
                                                          if row["used_terms"] else 1.0)
    assert summary.replay["full"]["dollars"] == pytest.approx(table[table["strategy"] == "full"]["dollars"].sum())
    assert summary.prices == table["prices"].iloc[0]


def test_cli_replay_prints_dollars_per_strategy_and_the_prices(tmp_path, capsys):
    assert main(["batch", str(SAMPLES / "native_demo.jsonl"), "--out", str(tmp_path / "out"), "--workers", "1",
                 "--replay", "full,prune_every_request", "--provider", "openai"]) == 0
    out = capsys.readouterr().out
    assert "replay:   full $" in out and "prune_every_request $" in out and "USD per MTok" in out
    assert main(["batch", str(SAMPLES / "native_demo.jsonl"), "--out", str(tmp_path / "o2"),
                 "--replay", "nonsense"]) == 2
    assert "unknown strategy 'nonsense'" in capsys.readouterr().err


def test_batch_replay_says_which_strategies_could_not_have_run_and_every_price_set(tmp_path):
    """The batch summary compared every strategy with ``full`` and printed one session's prices label,
    although full sent requests over the window (its dollars stop there) and the sessions were priced at
    other models (gpt-5-codex beside Sonnet 4.5); the replay table had no feasibility column.

    QA 19, defect 5."""
    from pruner.cli.batch import summary_lines
    from pruner.formats import load_dialogues
    from pruner.replay import ReplaySettings, replay
    files = [SAMPLES / "workload-tool_agent-200.jsonl", SAMPLES / "codex_rollout.jsonl"]
    strategies = ("full", "compact", "clear_tool_uses")
    replay_settings = ReplaySettings(context_window=30_000, reserve_tokens=4_000)
    summary = run_batch([str(f) for f in files], tmp_path / "out",
                        BatchSettings(replay=strategies, replay_settings=replay_settings), workers=1)
    table = pd.read_parquet(tmp_path / "out" / "replay")
    sessions = pd.read_parquet(tmp_path / "out" / "sessions").set_index("session_id")
    labels = []
    for f in files:
        sid = sessions.index[sessions["source"] == str(f)][0]
        r = replay(load_dialogues(f)[0], strategies, settings=replay_settings)
        labels.append(r.money_label)
        for name in strategies:
            row = table[(table["session_id"] == sid) & (table["strategy"] == name)].iloc[0]
            t = r.runs[name].totals
            could = t["feasible"] and t["applicable"]
            assert bool(row["feasible"]) == could, (f.name, name)
            assert (None if pd.isna(row["infeasible_from"]) else int(row["infeasible_from"])) == t["infeasible_from"]
            assert bool(row["infeasible_reason"]) == (not could)
    assert not table[(table["strategy"] == "full")]["feasible"].all()  # the case this pins
    for name in strategies:
        assert summary.replay[name]["infeasible"] == int((~table[table["strategy"] == name]["feasible"]).sum())
    text = "\n".join(summary_lines(summary))
    assert "than full" not in text  # full could not have run on one session: nothing is compared with it
    assert "could not have run" in text and "full on 1" in text
    assert len(set(labels)) == 2 and all(label in summary.prices for label in labels)
