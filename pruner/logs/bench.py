"""``pruner bench-logs``: how fast ``pruner logs`` reads a folder shaped like a real machine's logs.

The corpus is generated under a scratch folder (never the repository): a
Claude Code projects folder of ``files`` sessions in 20 projects, each session
one of the shared real Claude Code files picked by a seeded draw, so the
sizes follow the real files' distribution (hard links where the file system
allows, else copies). Measured, each with the 1-minute load before and after:

* ``bill_ledger``: the bill and the cache ledger of every session (``--bill-only``), MB/s of log read
  (the bill-only reader, ``pruner.formats.claude_code_usage``: ``bill_only_sessions`` of the
  corpus's sessions are read by it, the rest in full);
* ``strategies``: every strategy replayed too, on the first ``strategy_files`` sessions;
* ``rerun``: the same command again with nothing changed, on a folder of ``rerun_files`` sessions
  (the smallest real file copied that many times: the command counts a file reached by several paths
  once, so hard links would be one session), in-process and as a whole ``pruner logs`` command;
* ``json``: parsing the corpus's lines with the standard library, orjson / msgspec when installed,
  and ``pruner logs``' own line reader (msgspec; the strict standard-library reader for any line
  msgspec refuses);
* peak memory (max RSS) of the run and of its worker processes, against the largest single file;
* for the two readings, the CPU time they took (this process and its workers) and the rate that makes
  on the workers' cores doing nothing else: the machine is shared, so the wall-clock rate depends on
  what else ran;
* ``readers``: each agent's bill-only reader (``Agent.read_usage``) on its shared real files, MB/s and
  MB per CPU second (``reader_speed``); Qwen Code's, Copilot CLI's and Amp's, which have none, on a file
  generated from their samples (``bench_agents``);
* ``flat_memory``: the peak memory of billing a generated Codex session of ``big_mb`` MB (and of one
  tenth of it), the reader alone and a whole ``pruner logs`` run, each in a fresh process
  (``pruner.logs.bench_memory.flat_memory``; issue 32);
* ``folder_memory``: the peak memory of a whole ``pruner logs`` run over a folder of ``folder_sessions``
  small sessions and over one of ten times as many (``pruner.logs.bench_memory.folder_memory``).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ..files import write_atomic
from .bench_memory import PROJECTS
from .discover import discover
from .found import LogSession
from .run import run_logs



def real_claude_files(real: Path) -> list[Path]:
    files = sorted(p for p in (real / "claude-code").glob("*.jsonl") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no Claude Code files under {real / 'claude-code'}")
    return files


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy, streamed
        with open(src, "rb") as source:
            write_atomic(dst, lambda fh: shutil.copyfileobj(source, fh))


def generate(home: Path, files: int, real: Path, *, seed: int = 0, only: Path | None = None,
             link: bool = True) -> int:
    """A ``home/.claude/projects`` of ``files`` sessions (hard links of the real files, or with
    ``link=False`` copies); returns their total size in bytes."""
    rng = random.Random(seed)
    sources = [only] if only else real_claude_files(real)
    root = home / ".claude" / "projects"
    total = 0
    for i in range(files):
        src = sources[rng.randrange(len(sources))]
        folder = root / f"-bench-project-{i % PROJECTS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        dst = folder / f"{i:06d}-{src.stem}.jsonl"
        if link:
            _link(src, dst)
        else:
            with open(src, "rb") as source:
                write_atomic(dst, lambda fh: shutil.copyfileobj(source, fh), follow_symlinks=False)
        total += src.stat().st_size
    return total


def _found(home: Path, limit: int | None = None) -> list[LogSession]:
    # Its sessions are hard links of a few real files (to save disk): each path is a session to measure.
    sessions = [s for loc in discover({"HOME": str(home)}, agents=("claude_code",), one_per_file=False)
                for s in loc.sessions]
    return sessions[:limit] if limit else sessions


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    load = _load()
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start, load


def _cpu_seconds() -> float:
    """CPU time used so far by this process and its finished worker processes (user + system)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _cpu_rate(mb: float, cpu: float, cpus: int) -> dict[str, float | None]:
    """What the run cost in CPU time, and the rate that makes on ``cpus`` cores doing nothing else: on a
    shared machine the wall-clock rate says how busy the others were; this one does not."""
    return {"cpu_seconds": round(cpu, 2), "mb_per_cpu_second": round(mb / cpu, 2) if cpu > 0 else None,
            "mb_per_s_if_idle": round(cpus * mb / cpu, 1) if cpu > 0 else None}


def _maxrss_mb() -> dict[str, float]:
    return {"self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "workers_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def _bill_only(found: list[LogSession]) -> int:
    """How many of the sessions the bill-only reader takes (each distinct file asked once)."""
    from ..formats.claude_code_usage import read_usage

    taken: dict[tuple[int, int], bool] = {}
    for s in found:
        st = os.stat(s.main.path)
        key = (st.st_dev, st.st_ino)  # the corpus links a few real files many times
        if key not in taken:
            taken[key] = not s.subagents and read_usage(s.main.path) is not None
    return sum(taken[(os.stat(s.main.path).st_dev, os.stat(s.main.path).st_ino)] for s in found)


def _json_speed(paths: list[Path], budget_bytes: int) -> dict[str, float]:
    lines, size = [], 0
    for p in paths:
        for line in p.read_bytes().splitlines():
            lines.append(line)
            size += len(line)
        if size >= budget_bytes:
            break
    parsers: dict[str, Callable[[bytes], Any]] = {}
    from ..jsonio import loads_json
    parsers["stdlib json (pruner.jsonio, strict)"] = lambda b: loads_json(b.decode("utf-8"))
    try:
        import orjson
        parsers["orjson"] = orjson.loads
    except ImportError:
        pass
    try:
        import msgspec
        parsers["msgspec"] = msgspec.json.decode
    except ImportError:
        pass
    from ..formats.claude_code_usage import loads_line
    parsers["pruner logs (msgspec, the strict reader deciding what it refuses)"] = loads_line
    out = {}
    for name, parse in parsers.items():
        start = time.perf_counter()
        for line in lines:
            parse(line)
        out[name] = round(size / 1e6 / (time.perf_counter() - start), 1)
    return out


def run_bench(scratch: Path, real: Path, *, files: int, strategy_files: int, rerun_files: int, workers: int,
              seed: int = 0, say: Callable[[str], None] = print, reader_mb: float = 200.0,
              big_mb: int = 1000, folder_sessions: int = 300) -> dict[str, Any]:
    """Generate the corpora under ``scratch`` (removed first), measure, and return the figures."""
    from ..replay import strategy_names

    if scratch.exists():
        shutil.rmtree(scratch)
    home, small_home = scratch / "home", scratch / "home-rerun"
    size = generate(home, files, real, seed=seed)
    sources = real_claude_files(real)
    largest = max(p.stat().st_size for p in sources)
    say(f"corpus: {files:,} sessions, {size / 1e6:,.0f} MB (largest file {largest / 1e6:.1f} MB)")
    found = _found(home)

    cpu = _cpu_seconds()
    summary, seconds, load = _timed(lambda: run_logs(found, str(scratch / "out-bill"), workers=workers))
    cpu = _cpu_seconds() - cpu
    cores = min(workers, os.cpu_count() or 1)
    bill = {**_cpu_rate(size / 1e6, cpu, cores),
            "files": files, "mb": round(size / 1e6, 1), "seconds": round(seconds, 2),
            "mb_per_s": round(size / 1e6 / seconds, 1), "load_before": load, "load_after": _load(),
            "errors": summary.errors, **_maxrss_mb()}
    bill["bill_only_sessions"] = _bill_only(found)
    say(f"bill + ledger: {bill['mb_per_s']} MB/s ({seconds:.1f} s, load {load}); "
        f"{bill['bill_only_sessions']:,} of {files:,} sessions by the bill-only reader")

    unchanged, seconds_again, load = _timed(lambda: run_logs(_found(home), str(scratch / "out-bill"), workers=workers))
    bill_rerun = {"files": files, "seconds": round(seconds_again, 3), "read": unchanged.read, "load_before": load}

    subset = found[:strategy_files]
    sub_size = sum(s.size for s in subset)
    names = tuple(strategy_names())
    cpu = _cpu_seconds()
    summary, seconds, load = _timed(lambda: run_logs(subset, str(scratch / "out-all"), strategies=names,
                                                     workers=workers))
    cpu = _cpu_seconds() - cpu
    strategies = {**_cpu_rate(sub_size / 1e6, cpu, cores),
                  "files": len(subset), "mb": round(sub_size / 1e6, 1), "seconds": round(seconds, 2),
                  "mb_per_s": round(sub_size / 1e6 / seconds, 2), "strategies": list(names), "load_before": load,
                  "load_after": _load(), "errors": summary.errors}
    say(f"every strategy: {strategies['mb_per_s']} MB/s ({seconds:.1f} s on {len(subset)} sessions, load {load})")

    smallest = min(sources, key=lambda p: p.stat().st_size)
    generate(small_home, rerun_files, real, only=smallest, link=False)
    out = scratch / "out-rerun"
    first, first_s, _ = _timed(lambda: run_logs(_found(small_home), str(out), workers=workers))
    again, in_process, load = _timed(lambda: run_logs(_found(small_home), str(out), workers=workers))
    env = {**os.environ, "HOME": str(small_home)}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME"):
        env.pop(var, None)
    start = time.perf_counter()
    cli = subprocess.run([sys.executable, "-m", "pruner", "logs", "--bill-only", "--agent", "claude_code", "--out",
                          str(out), "--json"], env=env, capture_output=True, text=True, timeout=600)
    command_s = time.perf_counter() - start
    read_by_cli = json.loads(cli.stdout)["read"] if cli.returncode == 0 else None
    rerun = {"files": rerun_files, "first_run_s": round(first_s, 1), "in_process_s": round(in_process, 3),
             "command_s": round(command_s, 3), "read": again.read, "read_by_command": read_by_cli, "load_before": load}
    say(f"rerun, nothing changed, {rerun_files:,} files: {in_process:.2f} s in process, {command_s:.2f} s as a command")

    parse = _json_speed(sources, 20_000_000)
    say("JSON parsing, MB/s: " + ", ".join(f"{k} {v}" for k, v in parse.items()))
    readers = reader_speed(real, budget_mb=reader_mb)
    from .bench_agents import generated_files
    samples = Path(__file__).resolve().parents[2] / "sample_sessions"
    for agent, path, size in generated_files(scratch / "agents", samples):
        timed = time_reader(agent, [str(path)], budget_mb=reader_mb)
        readers[agent] = {"generated_mb": round(size / 1e6, 1),
                          **(timed if timed is not None else {"note": "left to the full reader"})}
        path.unlink()
    for agent, r in readers.items():
        say(f"bill-only reader, {agent}: {r['note']}" if "note" in r else
            f"bill-only reader, {agent}: {r['mb_per_s']} MB/s ({r['mb_per_cpu_second']} MB per CPU second; "
            f"load {r['load_before']} -> {r['load_after']})")
    from .bench_memory import flat_memory, folder_memory

    memory = flat_memory(scratch / "flat", real, mb=big_mb) if big_mb else {}
    for m in memory.values():
        say(f"{m['mb']:,} MB Codex session: peak RSS {m['reader_peak_rss_mb']} MB reading it, "
            f"{m['run_peak_rss_mb']} MB for the whole run (load {m['load_before']} -> {m['load_after']})")
    folder = folder_memory(scratch / "folder", real, sessions=folder_sessions) if folder_sessions else {}
    for f in folder.values():
        say(f"a folder of {f['sessions']:,} small sessions ({f['mb']:,} MB): peak RSS {f['run_peak_rss_mb']} MB for "
            f"the whole run (load {f['load_before']} -> {f['load_after']})")
    return {"readers": readers, "flat_memory": memory, "folder_memory": folder, "workers": workers,
            "cpus": os.cpu_count(),
            "largest_file_mb": round(largest / 1e6, 2),
            "real_files": [p.name for p in sources], "bill_ledger": bill, "bill_ledger_rerun": bill_rerun,
            "strategies": strategies, "rerun": rerun, "json_mb_per_s": parse}


# -- every agent's bill-only reader, and a 1 GB session in flat memory (issue 32) ----------------------------

#: agent -> the shared real files its bill-only reader is timed on
AGENT_FILES = {"claude_code": "claude-code/*.jsonl", "codex": "codex/*.jsonl", "pi": "pi/*.jsonl",
               "gemini_cli": "gemini-cli/*.json"}


def reader_speed(real: Path, *, budget_mb: float = 200.0) -> dict[str, dict[str, Any]]:
    """MB/s of each agent's bill-only reader (``Agent.read_usage``) on its shared real files, each file
    read over and over (file cache) until ``budget_mb`` of it was read; with the load before and after."""
    out: dict[str, dict[str, Any]] = {}
    for agent, pattern in AGENT_FILES.items():
        files = sorted(str(p) for p in real.glob(pattern) if p.is_file() and not p.name.startswith("LICENSE"))
        timed = time_reader(agent, files, budget_mb=budget_mb)
        if timed is not None:
            out[agent] = timed
    return out


def time_reader(agent: str, files: list[str], *, budget_mb: float) -> dict[str, Any] | None:
    """``agent``'s bill-only reader timed on those of ``files`` it takes (None when it takes none)."""
    from .agents import AGENTS

    read = AGENTS[agent].read_usage
    taken = [f for f in files if read is not None and read(f) is not None]
    if read is None or not taken:
        return None
    size = sum(os.path.getsize(f) for f in taken)
    rounds = max(1, int(budget_mb * 1e6 // size))
    load, cpu = _load(), _cpu_seconds()
    start = time.perf_counter()
    for _ in range(rounds):
        for f in taken:
            read(f)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    mb = rounds * size / 1e6
    return {"files": len(taken), "of_files": len(files), "mb": round(mb, 1), "seconds": round(seconds, 2),
            "mb_per_s": round(mb / seconds, 1), "load_before": load, "load_after": _load(), **_cpu_rate(mb, cpu, 1)}
