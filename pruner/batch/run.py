"""Run a batch: find the inputs, skip what the folder already holds, prune the rest on Dask.

The client only plans: it lists the input files, groups them into partitions
and submits one task per partition. Each task reads its files on a worker,
prunes them and writes its own Parquet partition (``worker.run_partition``);
what comes back to the client is a few counts per partition for the summary.
Without ``scheduler`` the cluster is a Dask ``LocalCluster`` of worker
processes on this machine; with it, an existing cluster whose workers can read
the input paths and write to ``out`` (a shared file system).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import stat
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Iterator

from ..errors import ConfigurationError
from .inputs import InputFile, expand_inputs
from .lock import acquire, release
from .settings import BatchSettings
from .store import Folder
from .worker import REPORTED_ERRORS, Partition, PartitionResult, run_partition

#: A partition holds about this many bytes of input at most (one larger file is a partition of its own) ...
MAX_PARTITION_BYTES = 8 * 1024 * 1024
#: ... and at most this many files, so many small sessions still spread over the workers.
MAX_PARTITION_FILES = 200
#: Aim for at least this many partitions per worker, so a slow one does not leave the others idle.
PARTITIONS_PER_WORKER = 4

Progress = Callable[[int, int, int], None]  # (files done, files to do, error rows so far)


@dataclass(frozen=True)
class BatchSummary:
    out: str
    inputs: int  # files named by the inputs (after --limit)
    passed_over: int  # files inside input folders not named like transcripts, hidden, or not regular
    not_taken: int  # files left out by --limit
    skipped: int  # files already in the folder with the same content
    replaced: int  # files whose content changed since they were done: their old rows were removed
    files: int  # files processed now
    sessions: int  # session rows written now (error rows included)
    failed: int  # error rows written now
    tokens_before: int
    tokens_after: int
    by_rule: dict[str, int]
    counters: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]  # the first few (source, error)
    partitions: int
    partition_failures: tuple[str, ...]  # partitions whose task failed: their files were not written
    workers: int
    cluster: str  # "LocalCluster" or the scheduler's address
    dashboard: str | None
    elapsed_s: float  # everything: listing inputs, starting the cluster, the tasks, the manifest
    compute_s: float  # from submitting the tasks until the last one finished
    prune_ms: float  # sum over sessions of prune() time
    replay: dict[str, dict] = field(default_factory=dict)  # strategy -> {"dollars", "input_tokens", "sessions",
    # "infeasible"} (--replay; infeasible: sessions it could not have run on, whose dollars stop before that)
    prices: str = ""  # which prices the replay's dollars use (every distinct label, "; "-joined with a count)
    replay_failed: int = 0  # sessions pruned whose replay failed (replay_error in the table)
    took_over: str = ""  # the stopped run whose stale lock this run took over ("" when none)

    @property
    def processed(self) -> int:
        return self.sessions - self.failed

    @property
    def reduction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    def as_dict(self) -> dict:
        body = asdict(self)
        body.update(processed=self.processed, reduction=self.reduction,
                    errors=[{"source": s, "error": e} for s, e in self.errors])
        return body


@dataclass
class _Totals:
    results: list[PartitionResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def plan_partitions(files: Iterable[InputFile], *, out: str, settings: BatchSettings,
                    workers: int, lock_token: str = "") -> list[Partition]:
    """Group files (in path order) into partitions; a partition's key names its files and the settings."""
    files = list(files)
    total = sum(f.size for f in files)
    budget = max(1, min(MAX_PARTITION_BYTES, total // max(1, PARTITIONS_PER_WORKER * workers)))
    groups: list[list[InputFile]] = []
    size = 0
    for f in files:
        if not groups or size + f.size > budget or len(groups[-1]) >= MAX_PARTITION_FILES:
            groups.append([])
            size = 0
        groups[-1].append(f)
        size += f.size
    settings_json = json.dumps(settings.fingerprint(), sort_keys=True)
    partitions = []
    for group in groups:
        # The key names the task on a cluster that other runs may share, so it names the folder too.
        ident = json.dumps([out, settings_json, [(f.path, f.size, f.mtime_ns) for f in group]])
        key = hashlib.sha256(ident.encode()).hexdigest()[:24]
        partitions.append(Partition(key=key, out=out, files=tuple(f.path for f in group), settings=settings,
                                    lock_token=lock_token))
    return partitions


def file_digest(path: str) -> str | None:
    """The file's SHA-256; None when it cannot be read or is no longer a regular file (a pipe
    would wait forever): the file is then processed again and becomes its error row."""
    h = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        except OSError:
            return None
    return h.hexdigest()


def _worker_version() -> str:
    from .. import __version__
    return __version__


@contextmanager
def dask_client(*, workers: int | None, scheduler: str | None, client=None,
                connect_timeout_s: float = 20) -> Iterator[tuple[object, str]]:
    """A ``distributed.Client``: ``client`` itself, one to ``scheduler``, or one to a new LocalCluster."""
    from distributed import Client, LocalCluster

    if client is not None:
        yield client, str(client.scheduler.address)
        return
    if scheduler:
        try:
            client = Client(scheduler, timeout=f"{connect_timeout_s}s")
        except (OSError, TimeoutError) as exc:
            raise ConfigurationError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
        try:
            yield client, scheduler
        finally:
            client.close()
        return
    # The scheduler's web server (and the dashboard, when bokeh is installed) on a free loopback
    # port: the default, 8787, may belong to another cluster on this machine.
    dashboard = "127.0.0.1:0"
    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                           dashboard_address=dashboard, silence_logs=logging.ERROR)
    try:
        with Client(cluster) as client:
            yield client, "LocalCluster"
    finally:
        cluster.close()


def _check_workers(client, address: str) -> int:
    """The number of workers; an error when none is there or one cannot run this pruner."""
    try:
        client.wait_for_workers(1, timeout=60)
    except TimeoutError:
        raise ConfigurationError(f"the Dask cluster at {address} has no workers") from None
    from .. import __version__
    try:
        versions = client.run(_worker_version)
    except Exception as exc:  # a worker that cannot import pruner fails here, before any task
        raise ConfigurationError(f"the Dask workers cannot run pruner ({type(exc).__name__}: {exc}); "
                                 f"install pruner {__version__} on every worker") from None
    other = sorted({v for v in versions.values() if v != __version__})
    if other:
        raise ConfigurationError(f"the Dask workers run pruner {', '.join(other)}, this is {__version__}; "
                                 "install the same version everywhere")
    return len(versions)


def _dashboard_link(client) -> str | None:
    """The Dask dashboard's address, when the scheduler serves one (it needs bokeh there)."""
    services = client.scheduler_info().get("services", {})
    if "dashboard" not in services:
        return None
    if client.scheduler.address.startswith(("inproc://", "tcp://127.0.0.1")) and not importlib.util.find_spec("bokeh"):
        return None  # a local scheduler without bokeh serves only its health and metrics pages
    return client.dashboard_link


def run_batch(inputs: Iterable[str], out: str | os.PathLike, settings: BatchSettings | None = None, *,
              workers: int | None = None, scheduler: str | None = None, limit: int | None = None,
              progress: Progress | None = None, on_cluster: Callable[[str, str | None, int], None] | None = None,
              client=None, connect_timeout_s: float = 20) -> BatchSummary:
    """Prune every session of ``inputs`` on Dask and write the Parquet tables into ``out``.

    The cluster: ``client`` (a ``distributed.Client`` you already have, left open),
    else the scheduler at ``scheduler``, else a LocalCluster of ``workers``
    processes (default: one per core) started and stopped here.
    ``on_cluster(cluster, dashboard_link, workers)`` is called once the cluster is up.
    Raises ``ConfigurationError`` for bad inputs, folder or cluster; a file that
    cannot be read or pruned is never an exception but an error row.
    """
    settings = settings or BatchSettings()
    if workers is not None and workers < 1:
        raise ConfigurationError(f"workers is {workers}; it must be 1 or more")
    out = os.path.abspath(os.fspath(out))
    start = time.perf_counter()
    found = expand_inputs(inputs, exclude=out)
    files = list(found.files)
    not_taken = 0
    if limit is not None:
        not_taken = max(0, len(files) - limit)
        files = files[:limit]
    folder = Folder(out)
    folder.check(settings)  # a wrong folder is refused before a lock file is put into it
    lock = acquire(out)  # one batch at a time: a second start is refused here, naming the first
    try:
        folder.prepare(settings)
        summary = _run_locked(folder, files, settings, lock.holder.token, found.passed_over, not_taken,
                              workers=workers, scheduler=scheduler, client=client, progress=progress,
                              on_cluster=on_cluster, connect_timeout_s=connect_timeout_s, start=start)
        if lock.took_over is not None:
            summary = dataclasses.replace(summary, took_over=f"{lock.took_over.describe()}, no longer running")
        folder.write_manifest(settings, summary.as_dict())
    finally:
        release(out, lock.holder)
    return summary


def _run_locked(folder: Folder, files: list[InputFile], settings: BatchSettings, token: str, passed_over: int,
                not_taken: int, *, workers, scheduler, client, progress, on_cluster, connect_timeout_s,
                start: float) -> BatchSummary:
    held = folder.done()
    todo, skipped, changed = [], 0, set()
    for f in files:
        digests = held.get(f.path)
        if digests is None:
            todo.append(f)
        elif file_digest(f.path) in digests:
            skipped += 1
        else:
            todo.append(f)
            changed.add(f.path)
    folder.drop_sources(changed)

    totals = _Totals()
    cluster_name, link, n_workers, n_partitions, compute_s = "", None, 0, 0, 0.0
    if todo:
        with dask_client(workers=workers, scheduler=scheduler, client=client,
                         connect_timeout_s=connect_timeout_s) as (dask, cluster_name):
            n_workers = _check_workers(dask, cluster_name)
            link = _dashboard_link(dask)
            if on_cluster:
                on_cluster(cluster_name, link, n_workers)
            partitions = plan_partitions(todo, out=folder.root, settings=settings, workers=n_workers,
                                         lock_token=token)
            n_partitions = len(partitions)
            submitted = time.perf_counter()
            _run(dask, partitions, totals, progress)
            compute_s = time.perf_counter() - submitted
    return _summarise(folder.root, passed_over, len(files), not_taken, skipped, len(changed), totals,
                      n_partitions, n_workers, cluster_name, link, time.perf_counter() - start, compute_s)


def _run(client, partitions: list[Partition], totals: _Totals, progress: Progress | None) -> None:
    from distributed import as_completed

    files_total = sum(len(p.files) for p in partitions)
    # The run's token in the task key: a task a stopped run left on a shared scheduler is never reused.
    by_key = {f"pruner-batch-{p.key}" + (f"-{p.lock_token[:12]}" if p.lock_token else ""): p for p in partitions}
    futures = client.map(run_partition, partitions, key=list(by_key), pure=False)
    files_done = failed = 0
    if progress:
        progress(0, files_total, 0)
    for future in as_completed(futures):
        partition = by_key[future.key]
        try:
            result = future.result()
        except Exception as exc:  # the task itself failed (e.g. the folder is not writable there)
            totals.failures.append(f"partition {partition.key} ({len(partition.files)} files, first "
                                   f"{partition.files[0]}): {type(exc).__name__}: {exc}")
        else:
            totals.results.append(result)
            failed += result.failed
        files_done += len(partition.files)
        future.release()
        if progress:
            progress(files_done, files_total, failed)


def _summarise(out, passed_over, inputs, not_taken, skipped, replaced, totals: _Totals, partitions, workers,
               cluster, link, elapsed, compute_s) -> BatchSummary:
    results = sorted(totals.results, key=lambda r: r.key)
    by_rule: dict[str, int] = {}
    for r in results:
        for rule, count in r.by_rule:
            by_rule[rule] = by_rule.get(rule, 0) + count
    errors = tuple(e for r in results for e in r.errors)[:REPORTED_ERRORS]
    replayed: dict[str, dict] = {}
    for r in results:
        for name, dollars, tokens, infeasible in r.replay:
            sums = replayed.setdefault(name, {"dollars": 0.0, "input_tokens": 0, "infeasible": 0})
            sums["dollars"] += dollars
            sums["input_tokens"] += tokens
            sums["infeasible"] += infeasible
    labels = list(dict.fromkeys(label for r in results for label in r.prices))
    return BatchSummary(
        out=out, inputs=inputs, passed_over=passed_over, not_taken=not_taken, skipped=skipped, replaced=replaced,
        files=sum(r.files for r in results), sessions=sum(r.sessions for r in results),
        failed=sum(r.failed for r in results), tokens_before=sum(r.tokens_before for r in results),
        tokens_after=sum(r.tokens_after for r in results), by_rule=dict(sorted(by_rule.items())),
        counters=tuple(sorted({c for r in results for c in r.counters})), errors=errors, partitions=partitions,
        partition_failures=tuple(sorted(totals.failures)), workers=workers, cluster=cluster, dashboard=link,
        elapsed_s=elapsed, compute_s=compute_s, prune_ms=sum(r.prune_ms for r in results),
        replay={name: {"dollars": round(t["dollars"], 6), "input_tokens": t["input_tokens"],
                       "infeasible": t["infeasible"]} for name, t in replayed.items()},
        # One label when every session used the same prices; else each, so no dollar sum names only one.
        prices=labels[0] if len(labels) == 1 else
        (f"{len(labels)} price sets, each session at its own models' (the replay table's prices column): "
         + " | ".join(labels) if labels else ""),
        replay_failed=sum(r.replay_failed for r in results))
