"""Reading and writing the logs table starts no native thread (a CI run's CSV once began with
"terminate called without an active exception": Arrow's CPU and IO pools, started by a Parquet read
through a Python file object, outlived the interpreter and aborted it at exit; apache/arrow#34314).

Counted in a fresh interpreter from ``/proc/self/task`` (Linux), which sees native threads that
``threading`` does not; a pool started by any earlier test in this process cannot hide one here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import SAMPLES

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc/self/task (Linux)")

_SCRIPT = r"""
import json, os, shutil, sys
from pathlib import Path

def threads():
    return len(os.listdir("/proc/self/task"))

from pruner.logs import run_logs, discover
from pruner.logs.table import load_rows, save_rows, schema

home = Path(sys.argv[1]) / "home"
project = home / ".claude" / "projects" / "-p"
project.mkdir(parents=True)
shutil.copyfile(sys.argv[2], project / "a.jsonl")
out = str(Path(sys.argv[1]) / "out")
found = [s for loc in discover({"HOME": str(home)}, agents=("claude_code",)) for s in loc.sessions]
run_logs(found, out=out)
counts = {"before": threads()}
rows = load_rows(out)
counts["read"] = threads()
load_rows(out, sparse=True)
counts["sparse read"] = threads()
save_rows(out, rows, schema())
counts["write"] = threads()
counts["rows"] = len(rows)
print(json.dumps(counts))
"""


def test_the_logs_table_is_read_and_written_without_starting_a_thread(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path), str(SAMPLES / "claude_code.jsonl")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert counts["rows"] == 1  # the table holds the one session: the reads below read something
    assert counts["read"] == counts["sparse read"] == counts["write"] == counts["before"], counts
