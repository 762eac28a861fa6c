"""Regression tests for issue 23 (reliability round 3), the CLI, summariser and replay side: defects 2, 7, 9,
10, 11, 14, 18, 21, each named after the behaviour it pins (its defect in its docstring), and the two findings
of the replay fuzz suite (tests/unit/replay/test_fuzz_replay.py). The batch and Corpus side (defects 1, 3, 8,
12, 13, 15, 16, 17) is in tests/unit/batch/test_batch_and_corpus_regressions.py and
tests/unit/batch/test_batch_concurrency.py. Defects 4, 19, 20 (money engine) and 5, 6, 22, 23, 24 (importers)
are tested in their own branches.

Run against the old main (f2633c4, a scratch worktree): every test here failed there except
``test_the_carried_state_equals_the_state_rebuilt_from_the_context`` (a guard that the
linear bookkeeping equals the old rescan, so it passes on both) and
``test_replay_refuses_to_overwrite_its_input`` (a guard: the old writer refused too; it
failed only on its wording, which now names ``--json``).
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from pruner.errors import ConfigurationError
from tests.support.paths import SAMPLES
from tests.support.cli_run import finishes, run_cli

NATIVE = SAMPLES / "native_demo.jsonl"


# --- 2: replay --json/--csv replaced the target path itself -------------------------------------------------

def test_replay_outputs_follow_a_link_and_keep_the_mode(tmp_path, capsys):
    """Round 3, defect 02."""
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o644)
    link = tmp_path / "link.csv"
    os.symlink(real, link)
    report = tmp_path / "report.json"
    report.write_text("{}")
    report.chmod(0o640)
    code, _, err = run_cli(["replay", NATIVE, "--csv", link, "--json", report, "--strategies", "full"], capsys)
    assert code == 0, err
    assert os.path.islink(link) and real.read_text().startswith("strategy,request,")
    assert (real.stat().st_mode & 0o777, report.stat().st_mode & 0o777) == (0o644, 0o640)
    assert json.loads(report.read_text())["strategies"]["full"]["requests"]


def test_a_device_target_is_never_replaced(tmp_path, capsys):
    """A character device like /dev/full (made here, so nothing on the machine is at risk) stays a device.

    Round 3, defect 02."""
    import stat
    device = tmp_path / "full"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot make a device node here (needs root)")
    code, _, err = run_cli(["replay", NATIVE, "--csv", device, "--strategies", "full"], capsys)
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert code == 2 and "No space left on device" in err and err.count("\n") == 1


def test_replay_refuses_to_overwrite_its_input(tmp_path, capsys):
    """Round 3, defect 02."""
    copy = tmp_path / "in.jsonl"
    copy.write_bytes(NATIVE.read_bytes())
    code, _, err = run_cli(["replay", copy, "--json", copy, "--strategies", "full"], capsys)
    assert code == 2 and "refusing to overwrite the input file; choose another --json" in err
    assert copy.read_bytes() == NATIVE.read_bytes()


# --- 7: a folder as input was an internal error ---------------------------------------------------------------

@pytest.mark.parametrize("argv", [["inspect", "{dir}"], ["prune", "{dir}"], ["replay", "{dir}"],
                                  ["compact", "{dir}"], ["replay", str(NATIVE), "--prices", "{dir}"]])
def test_a_folder_as_input_is_one_line_saying_so(argv, tmp_path, capsys):
    """Round 3, defect 07."""
    code, _, err = run_cli([a.replace("{dir}", str(tmp_path)) for a in argv], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{tmp_path}: this is a folder, not a file; give the path of a" in err


def test_the_library_and_the_json_reader_say_folder_too(tmp_path):
    """Round 3, defect 07."""
    from pruner.errors import FormatError
    from pruner.formats import load_session
    from pruner.jsonio import load_json_file
    with pytest.raises(FormatError, match="this is a folder, not a file"):
        load_session(tmp_path)
    with pytest.raises(ConfigurationError, match="this is a folder, not a file"):
        load_json_file(tmp_path, error=ConfigurationError)


# --- 14: replay --json wrote U+2028 and U+009B raw ----------------------------------------------------------------

def test_replay_json_escapes_separators_and_c1_controls(tmp_path, capsys):
    """Round 3, defect 14."""
    lines = NATIVE.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["name"] = "demo\u2028line\x9bcsi\u2029"
    source = tmp_path / "odd.jsonl"
    source.write_text("\n".join([json.dumps(header, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    report = tmp_path / "r.json"
    code, _, err = run_cli(["replay", source, "--json", report, "--strategies", "full"], capsys)
    assert code == 0, err
    raw = report.read_text(encoding="utf-8")
    assert not {"\u2028", "\u2029", "\x9b"} & set(raw)
    assert "\\u2028" in raw and "\\u009b" in raw
    assert json.loads(raw)["meta"]["session"] == "demo\u2028line\x9bcsi\u2029"


# --- 18 / 9 / 10: the summariser ------------------------------------------------------------------------------------

def _compact_task():
    from pruner.compaction import CompactionSettings, compact
    from pruner.model import Message, Session
    session = Session.of([Message(id="u1", role="user", content="Rename the loader. " * 30),
                          Message(id="a1", role="assistant", content="Renamed it. " * 30),
                          Message(id="u2", role="user", content="thanks, that is all " * 10)], name="t")
    return session, CompactionSettings(keep_recent_tokens=40), compact


@pytest.mark.parametrize("key", ["k3y", "ab", "x"])
def test_a_short_key_is_redacted_too(key, openai_server, monkeypatch, capsys, tmp_path):
    """Round 3, defect 18."""
    server = openai_server("server_error")  # its error text quotes the key back
    monkeypatch.setenv("PRUNER_TEST_KEY", key)
    code, out, err = run_cli(["compact", NATIVE, "--summarizer", "openai", "--base-url", server.url,
                           "--api-key-env", "PRUNER_TEST_KEY", "--max-retries", "0", "--timeout", "5",
                           "--keep-recent-tokens", "40", "--force", "-o", tmp_path / "o.jsonl"], capsys)
    assert code == 2 and "server error (HTTP 500)" in err and "[redacted]" in err
    assert f"request by {key})" not in err and f"request by {key})" not in out
    assert server.requests and server.requests[0].headers["authorization"] == f"Bearer {key}"


class _DripServer:
    """An endpoint that answers 200 and then one byte of its body every ``every`` seconds."""

    def __init__(self, every: float = 0.3, length: int = 10_000):
        import socket
        self.every, self.length, self.stop = every, length, threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\n\r\n" % self.length)
                for _ in range(self.length):
                    if self.stop.wait(self.every):
                        return
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self):
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


@pytest.mark.slow
def test_the_timeout_bounds_the_whole_request_not_each_read():
    """Round 3, defect 09."""
    from pruner.compaction import OpenAISummarizer
    from pruner.errors import SummarizerError
    server = _DripServer()
    try:
        session, settings, compact = _compact_task()
        summarizer = OpenAISummarizer(base_url=server.url, model="m", api_key="sk-test-123456", timeout=1.5,
                                      max_retries=1, backoff_seconds=0.1)
        start = time.monotonic()

        def call():
            with pytest.raises(SummarizerError) as info:
                compact(session, settings, summarizer, force=True)
            return info.value

        error = finishes(call, 40)
        elapsed = time.monotonic() - start
    finally:
        server.close()
    assert "no complete answer within the 1.5 s timeout" in str(error) and "gave up after 2 attempts" in str(error)
    assert elapsed < summarizer.max_call_seconds + 3  # the bound the dashboard shows holds


def test_an_answer_over_max_output_tokens_is_refused_and_never_held(openai_server):
    """Round 3, defect 10."""
    from pruner.compaction import OpenAISummarizer
    from pruner.errors import SummarizerError
    from tests.support.openai_server import FULL_SUMMARY, Reply, completion
    huge = FULL_SUMMARY + "padding words here " * 300_000  # about 5.7 MB, some 1.2 M tokens
    server = openai_server(Reply(200, completion(huge)))
    session, settings, compact = _compact_task()
    summarizer = OpenAISummarizer(base_url=server.url, model="m", api_key="sk-test-123456", timeout=20,
                                  max_retries=0, max_output_tokens=2000)
    with pytest.raises(SummarizerError, match=r"more than 1,176,576 bytes, longer than max_output_tokens 2,000"):
        compact(session, settings, summarizer, force=True)


def test_an_answer_the_server_counts_over_the_bound_is_refused(openai_server):
    """Round 3, defect 10."""
    from pruner.compaction import OpenAISummarizer
    from pruner.errors import SummarizerError
    from tests.support.openai_server import FULL_SUMMARY, Reply, completion
    over = completion(FULL_SUMMARY + "more " * 3000)
    over["usage"]["completion_tokens"] = 3005
    session, settings, compact = _compact_task()
    for body, message in ((over, r"returned 3,005 output tokens \(its own count\), over max_output_tokens 500"),
                          (completion(FULL_SUMMARY + "more " * 3000), r"\(our count\), over max_output_tokens 500")):
        server = openai_server(Reply(200, body))
        summarizer = OpenAISummarizer(base_url=server.url, model="m", api_key="sk-test-123456", timeout=20,
                                      max_retries=0, max_output_tokens=500)
        with pytest.raises(SummarizerError, match=message):
            compact(session, settings, summarizer, force=True)
    fits = openai_server(Reply(200, completion(FULL_SUMMARY)))
    ok = OpenAISummarizer(base_url=fits.url, model="m", api_key="sk-test-123456", timeout=20, max_retries=0,
                          max_output_tokens=500)
    assert "## Goal" in compact(session, settings, ok, force=True).summary


# --- 21: the ambiguous-format advice was given twice ------------------------------------------------------------------

def test_the_ambiguous_format_advice_is_given_once(tmp_path, capsys):
    """Round 3, defect 21."""
    source = tmp_path / "a.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    code, _, err = run_cli(["inspect", source], capsys)
    assert code == 2 and "ambiguous format" in err
    assert err.count("choose the format") == 1 and "choose the format with --format NAME" in err


# --- 11: cache_aware_prune grew faster than the session -------------------------------------------------------------

def _paced(turns: int, gap: float):
    """A seeded tool_agent session; with ``gap``, its messages that many seconds apart (a cold cache)."""
    import dataclasses
    from pruner.bench.workloads import generate
    s = generate("tool_agent", turns=turns, seed=1)
    if gap:
        s = dataclasses.replace(s, messages=tuple(
            dataclasses.replace(m, metadata={**m.metadata, "timestamp": 1.7e9 + gap * i})
            for i, m in enumerate(s.messages)))
    return s


@pytest.mark.parametrize("gap", [0.0, 400.0])
def test_cache_aware_prune_scans_each_message_a_bounded_number_of_times(gap, monkeypatch):
    """Work, not time: the keys the policy reads (one scan of a message's keys per call of ``_keys``).
    At a human pace (cold cache, a switch at most requests) the old code rescanned the whole context at
    every switch: 64 scans per request at 100 turns, 248 at 400.

    Round 3, defect 11."""
    from pruner.replay import replay
    from pruner.replay.strategies.cache_aware_prune import CacheAwarePrune
    scans = {"n": 0}
    original = CacheAwarePrune._keys

    def counted(m):
        scans["n"] += 1
        return original(m)

    monkeypatch.setattr(CacheAwarePrune, "_keys", staticmethod(counted))
    per_request = {}
    for turns in (100, 400):
        session = _paced(turns, gap)
        scans["n"] = 0
        r = replay(session, ["cache_aware_prune"], snapshots=False)
        assert scans["n"] <= 2 * len(session.messages)  # each message: when sent, and when a switch changes it
        per_request[turns] = scans["n"] / len(r.requests)
    assert per_request[400] <= 1.2 * per_request[100]  # flat in the session's length


@pytest.mark.parametrize("gap", [0.0, 400.0])
def test_the_carried_state_equals_the_state_rebuilt_from_the_context(gap, monkeypatch):
    """After every request, what the policy carries (ids sent, keys defined, the token total it took from the
    pruner) is what a rescan of the context it sends gives.

    Round 3, defect 11."""
    from pruner.analysis.index import markers
    from pruner.replay import replay
    from pruner.replay.strategies.cache_aware_prune import CacheAwarePrune
    original, checked = CacheAwarePrune.step, {"n": 0}

    def step(self, request, new):
        result = original(self, request, new)
        sent = self.wire.messages
        assert self.ids == {m.id for m in sent}
        counts: dict[str, int] = {}
        for m in sent:
            for k in tuple(m.defines) + markers(m.content)[0]:
                counts[k] = counts.get(k, 0) + 1
        assert self.defined == counts
        book = self.env.book
        assert self.wire.tokens == book.total(sent) + sum(book.text(t) for t in self.wire.substitutes.values())
        checked["n"] += 1
        return result

    monkeypatch.setattr(CacheAwarePrune, "step", step)
    r = replay(_paced(150, gap), ["cache_aware_prune"], snapshots=False)
    assert checked["n"] == len(r.requests) and any(
        e.kind == "prune" for row in r.runs["cache_aware_prune"].rows for e in row.events)


# --- found by the replay fuzz suite (tests/unit/replay/test_fuzz_replay.py) ---------------------------

def test_fuzz_finding_a_pi_cost_of_400_digits_is_a_reported_repair_not_an_overflow():
    from pruner.formats import loads
    from pruner.formats import repair_messages
    rows = [{"type": "session", "version": 3, "id": "s", "cwd": "/w"},
            {"type": "message", "id": "q", "parentId": None, "message": {"role": "user", "content": "hi"}},
            {"type": "message", "id": "r", "parentId": "q", "message": {
                "role": "assistant", "content": [{"type": "text", "text": "ok"}],
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 10**400}}}}]
    text = "\n".join(json.dumps(r) for r in rows).replace(str(10**400), "9" * 400) + "\n"
    session = loads(text, format="pi", file="p.jsonl")  # raised OverflowError: int too large to convert to float
    assert "usage" not in session.messages[-1].metadata
    assert any("usage" in m for m in repair_messages(session))


def test_fuzz_finding_usage_of_1e308_tokens_in_native_metadata_is_no_recorded_usage_not_infinite_dollars():
    import math
    from pruner.formats import loads
    from pruner.replay import replay
    rows = [{"pruner_session": 1, "name": "n", "source_format": "native", "metadata": {}},
            {"id": "u", "role": "user", "content": "question"},
            {"id": "a", "role": "assistant", "content": "answer",
             "metadata": {"usage": {"input": 1, "output": 0, "cache_read": 0, "cache_write": 1e308}}}]
    session = loads("\n".join(json.dumps(r) for r in rows) + "\n", format="native", file="n.jsonl")
    r = replay(session, snapshots=False)
    assert r.requests[0].recorded is None
    assert all(math.isfinite(run.totals["dollars"]) for run in r.runs.values())  # was inf
