"""What a ``pruner logs`` run holds while it reads (issue 32: flat memory), checked functionally.

No timing and no RSS here (they would flake on a shared machine): the figures are ``pruner bench-logs``'
(``pruner.logs.bench_memory``), quoted in docs/own-logs.md. These tests pin the behaviour the figures rest
on: a new folder's table written after the first session, not before it (a table write loads pyarrow's
Parquet writer and pandas, ~50 MB, under the largest session's peak otherwise); a rerun reading the plan's
few columns only when nothing changed, and holding rows without their null cells when something did;
the table written column by column with the cells a row-by-row table holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, strategies as st

from pruner.logs import discover, run_logs
from pruner.logs import run as run_module
from pruner.logs import table as table_module
from pruner.logs.money import COLUMNS as MONEY_COLUMNS
from pruner.logs.names import printable
from pruner.logs.table import TABLE, load_rows, save_rows, schema
from tests.support.paths import SAMPLES

CLAUDE = SAMPLES / "claude_code.jsonl"


def _home(tmp_path: Path, *names: str) -> Path:
    project = tmp_path / "home" / ".claude" / "projects" / "-p"
    project.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(CLAUDE, project / name)
    return tmp_path / "home"


def _found(home: Path):
    return [s for loc in discover({"HOME": str(home)}, agents=("claude_code",)) for s in loc.sessions]


def _spy_saves(monkeypatch) -> list[int]:
    """The number of rows of each table write the run makes."""
    saved: list[int] = []
    real = run_module.save_rows

    def save(out, rows, table_schema):
        saved.append(len(rows))
        real(out, rows, table_schema)

    monkeypatch.setattr(run_module, "save_rows", save)
    monkeypatch.setattr(run_module, "COMMIT_SECONDS", 1e9)  # no timed commit: the writes are the run's own
    return saved


def test_a_new_folders_table_is_written_after_its_first_sessions_not_before_them(tmp_path, monkeypatch):
    saved = _spy_saves(monkeypatch)
    home, out = _home(tmp_path, "a.jsonl", "b.jsonl"), tmp_path / "out"
    summary = run_logs(_found(home), str(out))
    assert summary.read == 2
    assert saved == [2]  # one write, with both rows: no empty table written before reading
    assert len(pq.read_table(out / TABLE)) == 2


def test_a_new_folder_with_nothing_to_read_still_gets_its_empty_table(tmp_path, monkeypatch):
    saved = _spy_saves(monkeypatch)
    out = tmp_path / "out"
    run_logs([], str(out))
    assert saved == [0]
    held = pq.read_table(out / TABLE)
    assert held.num_rows == 0 and "billed" in held.column_names


def test_a_new_folder_interrupted_before_its_first_session_still_gets_its_table(tmp_path, monkeypatch):
    saved = _spy_saves(monkeypatch)
    home, out = _home(tmp_path, "a.jsonl"), tmp_path / "out"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
        yield  # a generator, as the run's own reader

    summary = run_logs(_found(home), str(out), reader=interrupted)
    assert summary.interrupted and summary.read == 0
    assert saved == [0] and pq.read_table(out / TABLE).num_rows == 0


def test_a_rerun_with_nothing_changed_reads_only_the_plans_columns(tmp_path, monkeypatch):
    home, out = _home(tmp_path, "a.jsonl", "b.jsonl"), tmp_path / "out"
    run_logs(_found(home), str(out))
    asked: list[tuple] = []
    real = run_module.load_rows

    def load(folder, columns=None, **kw):
        asked.append((columns, kw))
        return real(folder, columns, **kw)

    monkeypatch.setattr(run_module, "load_rows", load)
    assert run_logs(_found(home), str(out)).read == 0
    assert asked == [(run_module.PLAN_COLUMNS, {})]
    assert len(run_module.PLAN_COLUMNS) < len(pq.read_schema(out / TABLE).names) // 5


def test_a_rerun_that_reads_holds_the_rows_without_their_null_cells_and_writes_them_unchanged(tmp_path, monkeypatch):
    home, out = _home(tmp_path, "a.jsonl", "b.jsonl"), tmp_path / "out"
    run_logs(_found(home), str(out))
    before = pq.read_table(out / TABLE).to_pylist()
    assert any(v is None for r in before for v in r.values())  # a bill-only row has null cells to leave out
    held: list[dict] = []
    real = run_module.save_rows

    def save(folder, rows, table_schema):
        held.extend(rows.values())
        real(folder, rows, table_schema)

    monkeypatch.setattr(run_module, "save_rows", save)
    _home(tmp_path, "c.jsonl")  # a new session: the rerun reads it, and holds the two rows it had
    assert run_logs(_found(home), str(out)).read == 1
    old = [r for r in held if r["session_key"] in {b["session_key"] for b in before}]
    assert len(old) == 2 and all(v is not None for r in old for v in r.values())
    after = {r["session_key"]: r for r in pq.read_table(out / TABLE).to_pylist()}
    assert len(after) == 3
    for r in before:
        assert after[r["session_key"]] == r  # every cell, nulls included, as the first run wrote it


def test_a_sparse_load_is_the_full_load_without_its_nulls(tmp_path):
    home, out = _home(tmp_path, "a.jsonl", "b.jsonl"), tmp_path / "out"
    run_logs(_found(home), str(out))
    full, sparse = load_rows(str(out)), load_rows(str(out), sparse=True)
    assert full.keys() == sparse.keys()
    for key, row in full.items():
        assert sparse[key] == {k: v for k, v in row.items() if v is not None}
        assert all(sparse[key].get(k) == v for k, v in row.items())


_KINDS = {"string": st.one_of(st.none(), st.text(max_size=8)),
          "double": st.one_of(st.none(), st.floats(allow_nan=False)),
          "int64": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), "bool": st.one_of(st.none(), st.booleans())}
_TABLE_SCHEMA = schema(MONEY_COLUMNS)


@st.composite
def _rows(draw):
    """Rows of the logs table: a key, the required cells, and some of the other columns (the rest absent)."""
    out = {}
    for n in range(draw(st.integers(0, 4))):
        key = f"k{draw(st.integers(0, 99)):02d}-{n}"
        row = {"session_key": key, "source": draw(st.text(max_size=6)), "files": "[]", "removed": False}
        for field in draw(st.lists(st.sampled_from(_TABLE_SCHEMA.names), max_size=12)):
            if field not in row:
                row[field] = draw(_KINDS[str(_TABLE_SCHEMA.field(field).type)])
        out[key] = row
    return out


@given(rows=_rows())
def test_the_table_written_column_by_column_holds_what_a_row_by_row_table_holds(tmp_path_factory, rows):
    out = tmp_path_factory.mktemp("table")
    save_rows(str(out), rows, _TABLE_SCHEMA)
    # the test's own construction: a dict per row of every column, in key order, text made printable
    expected = pa.Table.from_pylist(
        [{name: printable(v) if isinstance(v := r.get(name), str) else v for name in _TABLE_SCHEMA.names}
         for _, r in sorted(rows.items())], schema=_TABLE_SCHEMA)
    assert pq.read_table(out / TABLE).equals(expected)
    assert table_module.TABLE == TABLE


_PANDAS_PROBE = """
import json, sys
from pruner.logs import discover, run_logs
from pruner.logs.table import TABLE
import pyarrow.parquet as pq
found = [s for loc in discover({"HOME": sys.argv[1]}, agents=("claude_code",)) for s in loc.sessions]
summary = run_logs(found, sys.argv[2])
imported = "pandas" in sys.modules
frame = pq.read_table(sys.argv[2] + "/" + TABLE).to_pandas()  # pandas still works in this process
import pyarrow as pa
import pandas as pd
series = pa.array(pd.Series([1, None]))  # and pyarrow still sees a pandas object as one
print(json.dumps({"read": summary.read, "pandas_during_run": imported, "frame_rows": len(frame),
                  "series": [str(series.type), series.null_count]}))
"""


def test_a_run_writes_its_table_without_importing_pandas_and_pandas_works_after(tmp_path):
    import json
    import subprocess
    import sys

    home, out = _home(tmp_path, "a.jsonl", "b.jsonl"), tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", _PANDAS_PROBE, str(home), str(out)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    # a Series of [1, None] is float64 with NaN; read as a pandas object its NaN is a null (as a plain
    # sequence of floats it would stay NaN, null_count 0)
    assert got == {"read": 2, "pandas_during_run": False, "frame_rows": 2, "series": ["double", 1]}
