"""Every file pruner or the dashboard writes goes through ``pruner.files.write_atomic`` (issue 24).

``write_atomic`` writes a temporary file beside the target, syncs it and renames it into place,
so a failure leaves the previous file as it was; a hand-written copy of that logic (five existed)
drifts from it (a fixed ``.tmp`` name two runs share, no sync, a link followed). This walks the
syntax tree of every module of ``pruner/`` and ``dashboard/`` and fails on any other way of
writing a file.
"""

from __future__ import annotations

import ast
from tests.support.paths import ROOT

THE_HELPER = "pruner/files.py"

#: Writes that are not "a file's new content" and why; (module, enclosing function, call).
ALLOWED = {
    ("pruner/batch/lock.py", "_write_temp", "os.open"):
        "the batch lock is taken with link(2) of a temporary file (fails when the lock exists), which a "
        "rename cannot do: the temporary file is created exclusively and synced here",
    ("pruner/batch/lock.py", "_write_temp", "os.fdopen"): "the same temporary lock file",
    ("pruner/batch/lock.py", "_acquire", "os.replace"):
        "a stale lock (its process gone) is replaced by this run's temporary lock file in one rename",
}

_RENAMES_AND_COPIES = {"os.replace", "os.rename", "os.renames", "shutil.copy", "shutil.copy2", "shutil.copyfile",
                       "shutil.copytree", "shutil.move", "tempfile.mkstemp", "tempfile.NamedTemporaryFile",
                       "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile"}
_WRITE_METHODS = {"write_text", "write_bytes", "savefig", "write_image"}
_FRAME_WRITERS = {"to_parquet", "to_csv", "to_json", "to_excel", "to_pickle", "to_feather"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _mode(call: ast.Call, position: int) -> str | None:
    arg = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _writes(call: ast.Call) -> str | None:
    """The name of the write ``call`` makes, or None when it writes no file."""
    name = _dotted(call.func)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if name in ("open", "io.open", "os.fdopen"):
        mode = _mode(call, 1)
        return name if mode is not None and set(mode) & set("wax+") else None
    if method == "open" and name not in ("os.open", "tarfile.open", "zipfile.open"):  # Path.open(mode)
        mode = _mode(call, 0)
        return "Path.open" if mode is not None and set(mode) & set("wax+") else None
    if name == "os.open":
        flags = {n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)
                 for a in call.args[1:] for n in ast.walk(a)}
        return name if flags & _WRITE_FLAGS else None
    if name in _RENAMES_AND_COPIES:
        return name
    if method in _WRITE_METHODS:
        return method
    if method in _FRAME_WRITERS and (call.args or any(k.arg in ("path", "path_or_buf") for k in call.keywords)):
        return method  # with a path: a file written; without one it returns the text
    return None


def file_writes(source: str) -> list[tuple[int, str, str]]:
    """``(line, enclosing function, write)`` of every file write in ``source``."""
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call):
                kind = _writes(child)
                if kind:
                    found.append((child.lineno, function, kind))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_the_scan_finds_every_kind_of_write():
    source = '''
def f(path, fd, frame):
    open(path, "w")
    open(path, mode="ab")
    open(path)
    path.open("x")
    os.fdopen(fd, "wb")
    os.open(path, os.O_WRONLY | os.O_CREAT)
    os.open(path, os.O_RDONLY)
    path.write_text("x")
    os.replace(path, path)
    shutil.copyfile(path, path)
    frame.to_csv(path)
    frame.to_csv(index=False)
    write_atomic(path, "fine")
'''
    assert [(line, kind) for line, _, kind in file_writes(source)] == [
        (3, "open"), (4, "open"), (6, "Path.open"), (7, "os.fdopen"), (8, "os.open"), (10, "write_text"),
        (11, "os.replace"), (12, "shutil.copyfile"), (13, "to_csv")]
    assert {function for _, function, _ in file_writes(source)} == {"f"}


def test_no_file_is_written_outside_write_atomic():
    modules = sorted([*(ROOT / "pruner").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")])
    assert len(modules) > 100
    seen, bad = set(), []
    for path in modules:
        rel = path.relative_to(ROOT).as_posix()
        if rel == THE_HELPER:
            continue
        for line, function, kind in file_writes(path.read_text(encoding="utf-8")):
            if (rel, function, kind) in ALLOWED:
                seen.add((rel, function, kind))
            else:
                bad.append(f"{rel}:{line} ({function}): {kind}")
    assert not bad, "files written without pruner.files.write_atomic:\n" + "\n".join(bad)
    assert seen == set(ALLOWED), f"allowed writes that no longer exist (remove them): {set(ALLOWED) - seen}"


# --- write_atomic's three kinds of content ---------------------------------------------------------

def test_write_atomic_writes_text_bytes_and_a_streaming_writer(tmp_path):
    from pruner.files import write_atomic

    target = tmp_path / "out.bin"
    write_atomic(target, "é\n")
    assert target.read_bytes() == "é\n".encode("utf-8")
    write_atomic(target, b"\x00\xff")
    assert target.read_bytes() == b"\x00\xff"
    write_atomic(target, lambda fh: [fh.write(bytes([k]) * 1000) for k in range(3)])
    assert target.read_bytes() == b"\x00" * 1000 + b"\x01" * 1000 + b"\x02" * 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]  # no temporary file left


def test_a_streaming_writer_that_fails_leaves_the_previous_file_and_no_temporary(tmp_path):
    from pruner.files import write_atomic

    target = tmp_path / "table.parquet"
    target.write_bytes(b"previous")

    def half_then_fail(fh):
        fh.write(b"half a table")
        raise RuntimeError("the writer broke")

    try:
        write_atomic(target, half_then_fail)
    except RuntimeError as exc:
        assert str(exc) == "the writer broke"
    else:
        raise AssertionError("the writer's error was swallowed")
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.parquet"]


def test_a_streaming_writer_reaches_a_device_written_in_place():
    from pruner.files import write_atomic

    calls = []
    write_atomic("/dev/null", lambda fh: calls.append(fh.write(b"x" * 10)))
    assert calls == [10]


def test_a_parquet_table_written_by_the_batch_reads_back(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pruner.batch.worker import write_atomically

    table = pa.table({"session_id": ["a", "b"], "tokens": [3, 4]})
    path = tmp_path / "part-0.parquet"
    (tmp_path / "elsewhere").write_bytes(b"keep")
    path.symlink_to(tmp_path / "elsewhere")  # a planted link is replaced, never written through
    write_atomically(table, str(path))
    assert not path.is_symlink() and (tmp_path / "elsewhere").read_bytes() == b"keep"
    assert pq.read_table(path).to_pylist() == [{"session_id": "a", "tokens": 3}, {"session_id": "b", "tokens": 4}]
