"""``pruner bench-logs``' memory part (issue 32: flat memory): a 1 GB session, and a folder N vs 10 N.

Each figure is the peak RSS of a fresh process (its own high-water mark, ``VmHWM`` in
``/proc/self/status``; ``ru_maxrss`` is not: Linux carries the parent's over ``exec``), so what one
measurement loaded does not count in the next:

* ``flat_memory``: a generated Codex session of ``mb`` MB (``big_codex_file``) and one of a tenth of
  it, billed by the bill-only reader alone and by a whole ``pruner logs`` run over a folder holding it;
* ``folder_memory``: a whole ``pruner logs --bill-only`` run (one process) over a Claude Code folder of
  N small sessions and of 10 N: what a run holds per session (its row) against what it holds once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..files import write_atomic

#: The projects a generated folder's sessions are spread over (``pruner.logs.bench`` spreads its corpus so too).
PROJECTS = 20


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _copies(home: Path, count: int, source: Path) -> int:
    """``home/.claude/projects`` holding ``count`` copies of ``source`` (copies, not links: the command
    counts a file reached by several paths once); returns their total size in bytes."""
    for i in range(count):
        folder = home / ".claude" / "projects" / f"-bench-project-{i % PROJECTS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        with open(source, "rb") as fh:
            write_atomic(folder / f"{i:06d}-{source.stem}.jsonl", lambda out: shutil.copyfileobj(fh, out),
                         follow_symlinks=False)
    return count * source.stat().st_size

__all__ = ["big_codex_file", "flat_memory", "folder_memory"]


def big_codex_file(path: Path, real: Path, mb: int) -> int:
    """A Codex rollout of about ``mb`` MB: the shared real rollout's lines after its ``session_meta``, over
    and over, each copy an hour later (so no line repeats another exactly); returns its size."""
    import re
    from datetime import datetime, timedelta, timezone

    source = sorted(p for p in (real / "codex").glob("*.jsonl") if p.is_file())[0]
    head, *body = source.read_bytes().rstrip(b"\n").split(b"\n")
    stamp = re.compile(rb'^\{"timestamp":"([^"]+)"')
    pieces = []
    for line in body:
        m = stamp.match(line)
        if m is None:
            raise ValueError(f"{source}: a line without a leading timestamp")
        when = datetime.fromisoformat(m.group(1).decode().replace("Z", "+00:00"))
        pieces.append((when, line[m.end(1):]))
    size = 0

    def write(fh: Any) -> None:
        nonlocal size
        fh.write(head + b"\n")
        size = len(head) + 1
        copy = 0
        while size < mb * 1_000_000:
            shift = timedelta(hours=copy)
            for when, rest in pieces:
                t = (when + shift).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                line = b'{"timestamp":"' + t.encode() + rest + b"\n"
                fh.write(line)
                size += len(line)
            copy += 1

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, write)
    return size


_PEAK = """
import json, resource, sys, time
def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime
def peak():
    # VmHWM: this process's own high-water mark. ru_maxrss is not: Linux carries the parent's over exec.
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = cpu()
if sys.argv[1] == "read":
    from pruner.formats.codex_usage import read_usage
    from pruner.logs.money import usage_columns
    skeleton, _ = read_usage(sys.argv[2])
    after_read = peak()
    billed = usage_columns(skeleton)[0]["billed"]
else:
    from pruner.logs.discover import discover
    from pruner.logs.run import run_logs
    agent = sys.argv[4] if len(sys.argv) > 4 else "codex"
    found = [s for loc in discover({"HOME": sys.argv[2]}, agents=(agent,)) for s in loc.sessions]
    summary = run_logs(found, sys.argv[3])
    after_read = 0.0
    billed = [summary.read, summary.errors]
print(json.dumps({"peak_rss_mb": round(peak(), 1),
                  "peak_rss_after_read_mb": round(after_read, 1),
                  "seconds": round(cpu() - start, 2), "value": billed}))
"""


def _peak(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"the memory run failed: {done.stderr.strip().splitlines()[-1:]}")
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def flat_memory(scratch: Path, real: Path, *, mb: int = 1000) -> dict[str, Any]:
    """Peak RSS of billing one ``mb`` MB Codex session (the bill-only reader alone, and a whole ``pruner
    logs`` run over a folder holding it), each in a fresh process; and of a run over a folder of one
    tenth of that size, to compare (the file is generated under ``scratch``, removed after)."""
    figures: dict[str, Any] = {}
    for label, size_mb in (("small", max(1, mb // 10)), ("big", mb)):
        home, out = scratch / f"home-{label}", scratch / f"out-{label}"
        shutil.rmtree(out, ignore_errors=True)  # a table of an earlier run would hold the session: nothing read
        path = home / ".codex" / "sessions" / "2026" / "05" / "11" / f"rollout-bench-{label}.jsonl"
        size = big_codex_file(path, real, size_mb)
        load = _load()
        reader = _peak("read", str(path))  # its seconds are CPU seconds (user + system)
        run = _peak("run", str(home), str(out))
        cpu = reader["seconds"]
        figures[label] = {"mb": round(size / 1e6, 1), "load_before": load, "load_after": _load(),
                          "reader_peak_rss_mb": reader["peak_rss_mb"], "reader_cpu_seconds": cpu,
                          "reader_mb_per_cpu_second": round(size / 1e6 / cpu, 1) if cpu else None,
                          "reader_peak_rss_after_read_mb": reader["peak_rss_after_read_mb"],
                          "billed": reader["value"], "run_peak_rss_mb": run["peak_rss_mb"],
                          "run_read": run["value"][0], "run_errors": run["value"][1]}
        shutil.rmtree(home)
        shutil.rmtree(out)
    return figures


def folder_memory(scratch: Path, real: Path, *, sessions: int = 300) -> dict[str, Any]:
    """Peak RSS of a whole ``pruner logs --bill-only`` run (one process, in a fresh one) over a Claude Code
    folder of ``sessions`` small sessions and over one of ten times as many (copies of the smallest shared
    real file: the command counts a file reached by several paths once), each into a new logs folder; the
    folders are generated under ``scratch``, removed after (issue 32: a run's peak independent of the
    folder's size)."""
    files = sorted(p for p in (real / "claude-code").glob("*.jsonl") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no Claude Code files under {real / 'claude-code'}")
    smallest = min(files, key=lambda p: p.stat().st_size)
    figures: dict[str, Any] = {}
    for label, count in (("n", sessions), ("10n", 10 * sessions)):
        home, out = scratch / f"home-{label}", scratch / f"out-{label}"
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        size = _copies(home, count, smallest)
        load = _load()
        run = _peak("run", str(home), str(out), "claude_code")
        figures[label] = {"sessions": count, "mb": round(size / 1e6, 1), "load_before": load, "load_after": _load(),
                          "run_peak_rss_mb": run["peak_rss_mb"], "run_cpu_seconds": run["seconds"],
                          "run_read": run["value"][0], "run_errors": run["value"][1]}
        shutil.rmtree(home)
        shutil.rmtree(out)
    return figures
