"""What one Dask task does: load and prune a partition's files, and write its Parquet files.

A task runs on a worker and writes its own partition (the rows never travel
through the scheduler); it returns only a small ``PartitionResult``. Loading
and pruning use nothing but the public API (``pruner.formats.loads_all`` and
``pruner.prune``), so a batch gives exactly what a loop over the files would.

Writes are idempotent: the file names depend only on the partition's key, each
file is written to a hidden temporary name and renamed into place, and the
``sessions`` file is written last. A task that Dask re-runs after its worker
died therefore replaces, never adds; a ``decisions`` file without its
``sessions`` file is an unfinished partition that the next run removes.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ..engine.prune import collector_paused, prune
from ..errors import PrunerError
from ..files import read_limited, write_atomic
from ..formats import decode_bytes, loads_all
from ..model import STATUSES
from ..replay import ReplaySettings, replay
from .lock import holds
from .schema import DECISIONS, OTHER_RULE_COLUMN, REPLAY, RULE_COLUMNS, SESSIONS
from .settings import BatchSettings

#: How many error messages a partition reports back for the summary (all are in the table).
REPORTED_ERRORS = 5


@dataclass(frozen=True)
class Partition:
    key: str
    out: str  # the batch folder, as the workers see it
    files: tuple[str, ...]  # absolute paths
    settings: BatchSettings
    lock_token: str = ""  # the run's lock (pruner.batch.lock); empty: not checked (a task run by hand)


@dataclass(frozen=True)
class PartitionResult:
    key: str
    files: int
    sessions: int  # rows, error rows included
    failed: int  # error rows
    tokens_before: int
    tokens_after: int
    by_rule: tuple[tuple[str, int], ...]
    counters: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]  # (source, error), at most REPORTED_ERRORS
    prune_ms: float
    replay: tuple[tuple[str, float, int, int], ...] = ()  # (strategy, dollars, input tokens, sessions it could
    # not have run on) summed
    prices: tuple[str, ...] = ()  # which prices the replay's dollars use: each distinct label, in order
    replay_failed: int = 0


def partition_file(out: str, table: str, key: str) -> str:
    return os.path.join(out, table, f"part-{key}.parquet")


def write_atomically(table: pa.Table, path: str) -> None:
    """Write the Parquet ``table`` to ``path`` through ``files.write_atomic``: streamed into a hidden,
    exclusively created temporary file beside it (readers skip names starting with a dot), then
    renamed into place; a link planted at ``path`` is replaced, never followed."""
    write_atomic(path, lambda fh: pq.write_table(table, fh), follow_symlinks=False)


class FolderTakenOver(PrunerError):
    """The run that submitted a task no longer holds the batch folder: the task commits nothing."""


def _check_lock(partition: Partition) -> None:
    if partition.lock_token and not holds(partition.out, partition.lock_token):
        raise FolderTakenOver(f"{partition.out}: the batch that started this task no longer holds the folder "
                              "(it was stopped and another run took the folder over); nothing was written")


def file_identity(path: str, digest: str) -> str:
    return hashlib.sha256(f"{path}\0{digest}".encode()).hexdigest()[:16]


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, PrunerError):
        return str(exc)
    return f"unexpected {type(exc).__name__}: {exc}"


def _read(path: str, max_bytes: int) -> bytes:
    """The bounded regular-file reader: a file replaced by a pipe or a device since it was listed
    is that file's error row, never a wait."""
    return read_limited(path, max_bytes)[1]


def _empty_row(base: dict[str, Any]) -> dict[str, Any]:
    row = {name: None for name in SESSIONS.names}
    row.update(base)
    return row


def _session_row(base: dict[str, Any], session, result, prune_ms: float) -> dict[str, Any]:
    s = result.stats
    row = _empty_row(base)
    row.update(name=session.name, format=session.source_format, messages_before=s.messages_before,
               messages_after=s.messages_after, tokens_before=s.tokens_before, tokens_after=s.tokens_after,
               placeholder_tokens=s.placeholder_tokens, reduction=s.reduction, rounds=s.rounds,
               counter=s.counter, prune_ms=prune_ms, skipped_lines=int(session.metadata.get("skipped_bad_lines", 0)))
    for status in STATUSES:
        row[status] = int(s.by_status.get(status, 0))
    for column in RULE_COLUMNS.values():
        row[column] = 0
    row[OTHER_RULE_COLUMN] = 0
    for rule, count in s.by_rule.items():
        row[RULE_COLUMNS.get(rule, OTHER_RULE_COLUMN)] += count
    return row


def _replay_rows(session_id: str, session, settings: BatchSettings, replays: list[dict]) -> str | None:
    """Append one ``replay`` row per strategy; the error text when the replay fails (the prune row stays)."""
    try:
        r = replay(session, settings.replay, settings=settings.replay_settings or ReplaySettings())
    except Exception as exc:  # the pruning result is still good; say why the replay is missing
        return _error_text(exc)
    for name in settings.replay:
        t = r.runs[name].totals
        replays.append({"session_id": session_id, "strategy": name, "requests": t["requests"],
                        "input_tokens": t["fresh"] + t["cached"] + t["written"], "cached_tokens": t["cached"],
                        "written_tokens": t["written"], "fresh_tokens": t["fresh"], "output_tokens": t["output"],
                        "dollars": t["dollars"], "peak_context": t["peak_context"], "rejected": t["rejected"],
                        "feasible": bool(t["feasible"] and t["applicable"]), "infeasible_from": t["infeasible_from"],
                        "infeasible_reason": t["infeasible_reason"] or t["not_applicable_reason"],
                        "prices": r.money_label, "context_recall": t["context_recall"],
                        "used_terms": t["used_terms"], "terms_missing": t["terms_missing"]})
    return None


def process_file(path: str, settings: BatchSettings, partition: str,
                 decisions: dict[str, list] | None = None, replays: list[dict] | None = None) -> list[dict]:
    """The ``sessions`` rows of one file (one per dialogue, or one error row); its decisions are
    appended to the ``decisions`` columns (one list per column of ``DECISIONS``), and with
    ``settings.replay`` its replay rows to ``replays``."""
    if decisions is None:
        decisions = {name: [] for name in DECISIONS.names}
    if replays is None:
        replays = []
    digest = ""
    start = time.perf_counter()
    failure: str | None
    try:
        data = _read(path, settings.max_bytes)
        digest = hashlib.sha256(data).hexdigest()
        sessions = loads_all(decode_bytes(data, file=path), file=path, format=settings.format,
                             skip_bad_lines=settings.skip_bad_lines,
                             retrieval_tools=settings.retrieval_tools or None)
    except OSError as exc:
        sessions, failure = [], f"{path}: cannot read the file ({exc.strerror or exc})"
    except Exception as exc:  # any failure of one file is that file's error row
        sessions, failure = [], _error_text(exc)
    else:
        failure = None
    load_ms = (time.perf_counter() - start) * 1000
    identity = file_identity(path, digest)
    base = {"source": path, "digest": digest, "load_ms": load_ms, "partition": partition}
    if failure is not None or not sessions:
        return [_empty_row({**base, "session_id": f"{identity}/-",
                            "error": failure or f"{path}: the file holds no dialogue"})]
    rows = []
    for number, session in enumerate(sessions):
        session_id = f"{identity}/{number}"
        here = {**base, "session_id": session_id, "dialogue": number, "dialogues": len(sessions)}
        start = time.perf_counter()
        try:
            result = prune(session, settings.config)
        except Exception as exc:  # one broken dialogue is one error row
            row = _empty_row({**here, "name": session.name, "format": session.source_format,
                              "error": _error_text(exc)})
            rows.append(row)
            continue
        rows.append(_session_row(here, session, result, (time.perf_counter() - start) * 1000))
        if settings.replay:
            rows[-1]["replay_error"] = _replay_rows(session_id, session, settings, replays)
        n = len(result.decisions)
        decisions["session_id"].extend([session_id] * n)
        decisions["position"].extend(range(n))
        decisions["message_id"].extend(d.id for d in result.decisions)
        decisions["status"].extend(d.status for d in result.decisions)
        decisions["rule"].extend(d.rule for d in result.decisions)
        decisions["related"].extend(d.related for d in result.decisions)
    return rows


def run_partition(partition: Partition) -> PartitionResult:
    """Process every file of ``partition`` and write its ``decisions`` then its ``sessions`` file."""
    rows: list[dict] = []
    decisions: dict[str, list] = {name: [] for name in DECISIONS.names}
    replays: list[dict] = []
    # The rows gathered here are acyclic; with the collector on, every collection would walk
    # all of them again (a quarter of a partition's time on tau-bench dialogues).
    with collector_paused():
        for path in partition.files:
            rows.extend(process_file(path, partition.settings, partition.key, decisions, replays))
    _check_lock(partition)
    write_atomically(pa.Table.from_pydict(decisions, schema=DECISIONS),
                     partition_file(partition.out, "decisions", partition.key))
    if partition.settings.replay:
        write_atomically(pa.Table.from_pylist(replays, schema=REPLAY),
                         partition_file(partition.out, "replay", partition.key))
    _check_lock(partition)  # the sessions file commits the partition: only while this run holds the folder
    write_atomically(pa.Table.from_pylist(rows, schema=SESSIONS),
                     partition_file(partition.out, "sessions", partition.key))
    return summarise(partition, rows, replays)


def summarise(partition: Partition, rows: list[dict], replays: Sequence[dict] = ()) -> PartitionResult:
    ok = [r for r in rows if r["error"] is None]
    by_rule: dict[str, int] = {}
    for r in ok:
        for rule, column in RULE_COLUMNS.items():
            if r[column]:
                by_rule[rule] = by_rule.get(rule, 0) + r[column]
        if r[OTHER_RULE_COLUMN]:
            by_rule["other"] = by_rule.get("other", 0) + r[OTHER_RULE_COLUMN]
    errors = tuple((r["source"], r["error"]) for r in rows if r["error"] is not None)
    return PartitionResult(
        key=partition.key, files=len(partition.files), sessions=len(rows), failed=len(errors),
        tokens_before=sum(r["tokens_before"] for r in ok), tokens_after=sum(r["tokens_after"] for r in ok),
        by_rule=tuple(sorted(by_rule.items())), counters=tuple(sorted({r["counter"] for r in ok})),
        errors=errors[:REPORTED_ERRORS], prune_ms=sum(r["prune_ms"] for r in ok),
        replay=tuple((name, sum(r["dollars"] for r in replays if r["strategy"] == name),
                      sum(r["input_tokens"] for r in replays if r["strategy"] == name),
                      sum(1 for r in replays if r["strategy"] == name and not r["feasible"]))
                     for name in partition.settings.replay),
        prices=tuple(dict.fromkeys(r["prices"] for r in replays)),
        replay_failed=sum(1 for r in ok if r.get("replay_error")))
