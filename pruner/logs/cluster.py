"""``pruner logs --scheduler``: the sessions read on an existing Dask cluster, the table kept here.

Only the reading moves: ``read_session`` runs on the cluster's workers, a chunk of sessions per
task, and their rows come back to this process, which plans, merges and commits the table exactly
as a local run does (``pruner.logs.run``: the folder's lock, the incremental plan, the commits every
few seconds). So the table is the one a local run makes, row for row, and nothing but this process
ever writes it. The workers need the session files at the same paths (a shared file system, as
``pruner batch --scheduler`` needs its inputs) and the same pruner (checked before any task).

A worker that dies takes its running tasks with it; the scheduler gives them to another worker
(Dask's ``distributed.scheduler.allowed-failures``). That is safe because a task is pure: it reads
files and returns rows, writes nothing, and a second reading of the same files gives the same rows.
Each task's result is taken once (``as_completed`` yields each future once) and stored under its
session's key, so a task run twice is still one row. A task that fails for good (a worker killed
more times than Dask allows, the cluster gone) becomes an error row for each of its sessions, which
the next run reads again (``plan`` retries every error row): nothing is lost, nothing held twice.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import TYPE_CHECKING, Any, Callable, Iterator, cast

from .found import LogSession
from .row import base_row

if TYPE_CHECKING:  # pragma: no cover - Dask (the batch extra) is imported only when there is something to read
    from distributed import Client

#: How long to wait for the scheduler to answer (seconds).
CONNECT_TIMEOUT_S = 20.0


def read_chunk(sessions: tuple[LogSession, ...], strategies: tuple[str, ...], bound: bool) -> list[dict[str, Any]]:
    """A task: each session's row, in order (pure; see the module)."""
    from . import run  # looked up when the task runs, so a worker reads with its own module's read_session

    return [run.read_session(s, strategies, bound) for s in sessions]


def chunk_size(sessions: int, workers: int, strategies: tuple[str, ...]) -> int:
    """Sessions per task: the local pool's rule (``run._rows``), so a cluster pays the same per-task cost."""
    return 1 if strategies else max(1, min(64, sessions // (8 * max(1, workers))))


def task_key(chunk: tuple[LogSession, ...], strategies: tuple[str, ...], bound: bool, run_token: str) -> str:
    """The task's name on the scheduler: what it reads (each file's path, size and time), how, and the run.

    The run's token keeps the tasks of two runs apart on a scheduler they share (a task a stopped run
    left there is never taken for this run's); it changes no row."""
    ident = json.dumps([[[f.path, f.size, f.mtime_ns] for f in s.files] for s in chunk] + [list(strategies), bound])
    return f"pruner-logs-{hashlib.sha256(ident.encode('utf-8', 'surrogateescape')).hexdigest()[:24]}-{run_token}"


def tasks(todo: tuple[LogSession, ...], workers: int, strategies: tuple[str, ...], bound: bool, run_token: str
          ) -> dict[str, tuple[LogSession, ...]]:
    """Task key -> its sessions: every session of ``todo`` in exactly one task, largest first (as the local
    pool: the last tasks are the small ones, so no worker idles while another reads a big session)."""
    ordered = sorted(todo, key=lambda s: (-s.size, s.key))
    size = chunk_size(len(ordered), workers, strategies)
    chunks = [tuple(ordered[n:n + size]) for n in range(0, len(ordered), size)]
    return {task_key(c, strategies, bound, run_token): c for c in chunks}


def failed_row(session: LogSession, why: str) -> dict[str, Any]:
    """The row of a session whose task failed for good: an error row, read again by the next run."""
    row = base_row(session, [""] * len(session.files))
    row["error"] = f"{session.main.path}: not read on the Dask cluster ({why}); run the command again to read it"
    return row


class DaskReader:
    """A ``pruner.logs.run.Reader`` on the Dask cluster at ``scheduler``: it connects when there is
    something to read (a rerun with nothing new starts no connection), and closes when done.

    ``on_cluster(address, workers)`` is called once connected."""

    def __init__(self, scheduler: str, *, on_cluster: Callable[[str, int], None] | None = None,
                 connect_timeout_s: float | None = None):
        self.scheduler, self.on_cluster = scheduler, on_cluster
        self.connect_timeout_s = CONNECT_TIMEOUT_S if connect_timeout_s is None else connect_timeout_s

    def __call__(self, todo: tuple[LogSession, ...], strategies: tuple[str, ...], bound: bool
                 ) -> Iterator[tuple[LogSession, dict[str, Any]]]:
        if not todo:
            return
        from distributed import as_completed

        from ..batch.run import _check_workers, dask_client

        with dask_client(workers=None, scheduler=self.scheduler, connect_timeout_s=self.connect_timeout_s) as (
                connected, address):
            client = cast("Client", connected)
            workers = _check_workers(client, address)
            if self.on_cluster:
                self.on_cluster(address, workers)
            by_key = tasks(todo, workers, strategies, bound, secrets.token_hex(6))
            futures = client.map(read_chunk, list(by_key.values()), strategies=strategies, bound=bound,
                                 key=list(by_key), pure=False)
            try:
                for future in as_completed(futures):  # type: ignore[no-untyped-call]  # distributed leaves it untyped
                    chunk = by_key[future.key]
                    try:
                        rows = future.result()
                    except Exception as exc:  # any failure of the task is its sessions' error rows
                        rows = [failed_row(s, f"{type(exc).__name__}: {exc}") for s in chunk]
                    future.release()
                    yield from zip(chunk, rows)
            finally:  # an interrupted run leaves nothing of its own running on a shared cluster
                client.cancel(futures)  # type: ignore[no-untyped-call]  # distributed leaves it untyped
