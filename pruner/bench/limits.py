"""What the worst inputs cost: time and peak memory per 10 MB, measured on whole CLI commands.

The size limits (``--max-bytes``, 200 MB by default; the dashboard's upload limit)
are only honest if nothing under them costs more than it should. These inputs are
the worst that can be built for this reader (``CASES``):

* ``no_whitespace``: one message whose text is a single run of random letters (the
  case that cost BPE minutes before token counting was bounded, see ``pruner.tokens``);
* ``deep_nesting``: messages whose metadata is nested 500 levels deep, the deepest
  the reader accepts with room to spare (a ``[`` becomes a Python list: the most
  memory one byte of JSON can ask for);
* ``tiny_messages``: as many messages as fit, a few bytes each (every message has
  a fixed cost: a Message, a decision, index entries);
* ``repeated_ids``: an agent log whose every line reuses one id and every call one
  call id, so each is renamed and matched (this must stay linear, not quadratic).

Each case is written at each size and read by a fresh ``python -m pruner`` process
(``inspect``, then ``prune -o`` to the null device), so the figures include start-up
and everything a user waits for. The child's peak resident memory and CPU time come
from ``os.wait4`` in a small launcher process that forks it (Linux keeps a process's peak across
``exec``, so a child forked from a large parent would report the parent's size);
wall-clock time is measured around it (noisy on a busy machine,
which the environment block records). One more row shows what happens above the
limit: a file one byte over it is refused before it is read, and 55 MB of deep nesting, charged
8 bytes per array and object (``pruner.formats.charged_size``), is refused before it is parsed.
"""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from typing import BinaryIO, Callable, TextIO

from ..files import write_atomic
from ..formats import DEFAULT_MAX_BYTES
from . import environment

MB = 1024 * 1024
SIZES_MB: tuple[int, ...] = (10, 50)
COMMANDS: tuple[str, ...] = ("inspect", "prune")
HEADER = '{"pruner_session": 1, "name": "worst case", "source_format": "native", "metadata": {}}\n'


def _no_whitespace(size: int, fh) -> None:
    head = '[{"role": "system", "content": "s"}, {"role": "user", "content": "'
    tail = '"}]'
    # Seeded random letters, not one letter repeated: BPE finds far more merges to try in them.
    # Written in chunks, so this process stays small: a child forked from it starts with its
    # peak memory, and ``wait4`` would report that instead of the child's own.
    rng, left = random.Random(0), max(size - len(head) - len(tail), 0)
    fh.write(head)
    while left:
        chunk = min(left, MB)
        fh.write("".join(rng.choices(string.ascii_lowercase, k=chunk)))
        left -= chunk
    fh.write(tail)


def _deep_nesting(size: int, fh) -> None:
    fh.write(HEADER)
    written, i, nest = len(HEADER), 0, "[" * 500 + "]" * 500
    while written < size:
        line = f'{{"id": "m{i}", "role": "user", "content": "hi", "metadata": {{"x": {nest}}}}}\n'
        fh.write(line)
        written, i = written + len(line), i + 1


def _tiny_messages(size: int, fh) -> None:
    fh.write(HEADER)
    written, i = len(HEADER), 0
    while written < size:
        line = f'{{"id": "m{i}", "role": "{"user" if i % 2 == 0 else "assistant"}", "content": "ok {i}"}}\n'
        fh.write(line)
        written, i = written + len(line), i + 1


def _repeated_ids(size: int, fh) -> None:
    written, i = 0, 0
    while written < size:
        call = {"type": "assistant", "uuid": "same", "sessionId": "s", "message": {
            "id": f"r{i}", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}}
        result = {"type": "user", "uuid": "same", "sessionId": "s", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": f"r {i}"}]}}
        line = json.dumps(call) + "\n" + json.dumps(result) + "\n"
        fh.write(line)
        written, i = written + len(line), i + 1


#: name -> (what it is, writer(size in bytes, text file))
CASES: dict[str, tuple[str, Callable]] = {
    "no_whitespace": ("one message of letters without a space (OpenAI Chat JSON)", _no_whitespace),
    "deep_nesting": ("messages whose metadata nests 500 levels deep (native JSONL)", _deep_nesting),
    "tiny_messages": ("two-word messages, as many as fit (native JSONL)", _tiny_messages),
    "repeated_ids": ("every line reuses one uuid, every call one call id (Claude Code JSONL)", _repeated_ids),
}


@dataclass(frozen=True)
class Row:
    case: str
    size_mb: int
    bytes: int
    command: str
    exit_code: int
    wall_s: float
    cpu_s: float
    peak_mb: float


# Runs in a small interpreter of its own, which forks the measured command: Linux keeps a
# process's peak across ``exec``, so a command forked straight from a large parent (a test
# run holding a gigabyte) would report the parent's size as its own.
_LAUNCHER = """
import json, os, resource, subprocess, sys, time
limit = int(sys.argv[1])
def cpu_budget():
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        preexec_fn=cpu_budget if limit else None)
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), time.perf_counter() - start,
                  usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024]))
"""


def measure_command(args: list[str], *, cpu_limit_s: int | None = None) -> tuple[int, float, float, float]:
    """``(exit code, wall s, CPU s, peak resident MB)`` of ``python -m pruner *args`` in a fresh process.

    ``cpu_limit_s``: the kernel stops the process after that much CPU time (``RLIMIT_CPU``).
    The peak is the command's own, whatever the size of the process calling this.
    """
    launcher = subprocess.run([sys.executable, "-c", _LAUNCHER, str(cpu_limit_s or 0), sys.executable, "-m",
                               "pruner", *args], capture_output=True, text=True, check=True)
    code, wall, cpu, peak_mb = json.loads(launcher.stdout)
    return code, wall, cpu, peak_mb


def _as_text(write: Callable[[int, TextIO], None], size: int) -> Callable[[BinaryIO], None]:
    """``write(size, fh)`` as the streaming writer ``write_atomic`` takes: the case's text, UTF-8, in chunks."""
    def fill(binary: BinaryIO) -> None:
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        write(size, text)
        text.flush()
        text.detach()  # the binary file stays open: write_atomic syncs and renames it
    return fill


def _args(command: str, path: str) -> list[str]:
    return ["inspect", path] if command == "inspect" else ["prune", path, "-o", os.devnull]


def run_limits(sizes_mb=SIZES_MB, *, cases=tuple(CASES), progress: Callable[[str], None] | None = None) -> dict:
    """Measure every case at every size; the results file's content (``meta`` and ``rows``)."""
    env = environment.start(f"pruner bench-limits --sizes {','.join(map(str, sizes_mb))}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="pruner-limits-") as folder:
        for case in cases:
            for size_mb in sizes_mb:
                path = os.path.join(folder, f"{case}-{size_mb}mb.json")
                write_atomic(path, _as_text(CASES[case][1], size_mb * MB), follow_symlinks=False)
                for command in COMMANDS:
                    if progress:
                        progress(f"{case}, {size_mb} MB: {command}")
                    code, wall, cpu, peak = measure_command(_args(command, path))
                    rows.append(Row(case, size_mb, os.path.getsize(path), command, code, round(wall, 2),
                                    round(cpu, 2), round(peak, 1)))
                os.unlink(path)
        over = os.path.join(folder, "over-the-limit.json")
        write_atomic(over, lambda fh: fh.truncate(DEFAULT_MAX_BYTES + 1),  # sparse: refused from its size, never read
                     follow_symlinks=False)
        if progress:
            progress("a file one byte over the limit: inspect")
        code, wall, cpu, peak = measure_command(["inspect", over])
        rows.append(Row("over_the_limit", DEFAULT_MAX_BYTES // MB, DEFAULT_MAX_BYTES + 1, "inspect", code,
                        round(wall, 2), round(cpu, 2), round(peak, 1)))
        # Deep nesting is charged CONTAINER_BYTES per array and object: 55 MB of it is over the limit.
        deep = os.path.join(folder, "deep-over-the-limit.jsonl")
        write_atomic(deep, _as_text(_deep_nesting, 55 * MB), follow_symlinks=False)
        if progress:
            progress("deep nesting charged over the limit: inspect")
        code, wall, cpu, peak = measure_command(["inspect", deep])
        rows.append(Row("deep_over_the_limit", 55, os.path.getsize(deep), "inspect", code, round(wall, 2),
                        round(cpu, 2), round(peak, 1)))
    return {"schema": "pruner-limits/1",
            "meta": {"environment": environment.finish(env), "sizes_mb": list(sizes_mb),
                     "default_max_bytes": DEFAULT_MAX_BYTES,
                     "cases": {name: what for name, (what, _) in CASES.items()}},
            "rows": [asdict(r) for r in rows]}


def per_10mb(results: dict) -> list[dict]:
    """For each case and command: the cost of 10 MB more input (from the smallest to the largest
    size), and the figures at the largest size; what the README's table shows."""
    rows = [r for r in results["rows"] if r["case"] in results["meta"]["cases"]]
    out = []
    for case in results["meta"]["cases"]:
        for command in COMMANDS:
            mine = sorted((r for r in rows if r["case"] == case and r["command"] == command),
                          key=lambda r: r["size_mb"])
            if not mine:
                continue
            lo, hi = mine[0], mine[-1]
            span = (hi["size_mb"] - lo["size_mb"]) / 10 or 1
            out.append({"case": case, "command": command, "size_mb": hi["size_mb"], "exit_code": hi["exit_code"],
                        "wall_s": hi["wall_s"], "cpu_s": hi["cpu_s"], "peak_mb": hi["peak_mb"],
                        "cpu_s_per_10mb": round((hi["cpu_s"] - lo["cpu_s"]) / span, 2),
                        "peak_mb_per_10mb": round((hi["peak_mb"] - lo["peak_mb"]) / span, 1),
                        "at_small": lo})
    return out


def to_json(results: dict) -> str:
    return json.dumps(results, indent=1) + "\n"
