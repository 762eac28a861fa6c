"""The batch folder: its manifest, what it already holds, and tidying before a run.

Layout (every table is a folder of Parquet partitions that pandas, DuckDB and
Spark read as one table)::

    OUT/_pruner_batch.json      settings, schema and the last run's summary
    OUT/sessions/part-*.parquet one row per session (or per file that failed)
    OUT/decisions/part-*.parquet one row per message

A ``sessions`` partition is the commit mark of its partition (workers write it
last). Before a run, leftovers of an interrupted one are removed: hidden
temporary files, and ``decisions`` partitions whose ``sessions`` partition was
never written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import __version__
from ..errors import ConfigurationError
from ..jsonio import load_json_file
from .schema import TABLES, schema_fingerprint
from .settings import BatchSettings
from .worker import write_atomically

MANIFEST = "_pruner_batch.json"
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Folder:
    root: str

    def table_dir(self, table: str) -> str:
        return os.path.join(self.root, table)

    def partitions(self, table: str) -> list[str]:
        folder = self.table_dir(table)
        if not os.path.isdir(folder):
            return []
        return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                      if n.startswith("part-") and n.endswith(".parquet"))

    def manifest(self) -> dict | None:
        path = os.path.join(self.root, MANIFEST)
        if not os.path.exists(path):
            return None
        return load_json_file(path, error=ConfigurationError,
                              expected="it is not a batch manifest this version can read; choose another --out folder")

    def write_manifest(self, settings: BatchSettings, last_run: dict) -> None:
        body = {"pruner_batch": MANIFEST_VERSION, "pruner_version": __version__,
                "settings": settings.fingerprint(), "schema": schema_fingerprint(), "last_run": last_run}
        path = os.path.join(self.root, MANIFEST)
        tmp = os.path.join(self.root, f".{MANIFEST}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(body, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)

    def prepare(self, settings: BatchSettings) -> None:
        """Create the folder, or check that it holds results of the same settings and schema; tidy it."""
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise ConfigurationError(f"{self.root}: --out must be a folder, and this is a file")
        manifest = self.manifest()
        if manifest is None and os.path.isdir(self.root) and os.listdir(self.root):
            raise ConfigurationError(f"{self.root}: the folder is not empty and is not a batch folder; "
                                     "choose a new or empty --out folder")
        if manifest is not None:
            if manifest.get("settings") != settings.fingerprint():
                raise ConfigurationError(f"{self.root}: this batch folder holds results made with other "
                                         "settings; rerun with the same settings or choose another --out")
            if manifest.get("schema") != schema_fingerprint():
                raise ConfigurationError(f"{self.root}: this batch folder was written by pruner "
                                         f"{manifest.get('pruner_version')} with another table layout; "
                                         "choose another --out")
        for table in TABLES:
            os.makedirs(self.table_dir(table), exist_ok=True)
            folder = self.table_dir(table)
            for name in os.listdir(folder):
                if name.startswith(".") and name.endswith(".tmp"):
                    os.remove(os.path.join(folder, name))
        committed = {os.path.basename(p) for p in self.partitions("sessions")}
        for table in TABLES:
            if table != "sessions":
                for path in self.partitions(table):
                    if os.path.basename(path) not in committed:
                        os.remove(path)
        if manifest is None:
            self.write_manifest(settings, {})

    def done(self) -> dict[str, set[str]]:
        """Source path -> content digests already in the ``sessions`` table."""
        held: dict[str, set[str]] = {}
        for path in self.partitions("sessions"):
            table = pq.read_table(path, columns=["source", "digest"])
            for source, digest in zip(table.column("source").to_pylist(), table.column("digest").to_pylist()):
                held.setdefault(source, set()).add(digest)
        return held

    def drop_sources(self, sources: set[str]) -> int:
        """Remove every row of ``sources`` (files whose content changed since); returns the sessions rows removed."""
        if not sources:
            return 0
        removed = 0
        wanted = list(sources)
        for path in self.partitions("sessions"):
            sessions = pq.read_table(path)
            stale = pc.is_in(sessions.column("source"), value_set=_array(wanted))
            count = pc.sum(stale).as_py() or 0
            if not count:
                continue
            removed += count
            stale_ids = sessions.filter(stale).column("session_id")
            name = os.path.basename(path)
            for table in TABLES:
                if table == "sessions":
                    continue
                other = os.path.join(self.table_dir(table), name)
                if os.path.exists(other):
                    rows = pq.read_table(other)
                    write_atomically(rows.filter(pc.invert(pc.is_in(rows.column("session_id"),
                                                                    value_set=stale_ids.combine_chunks()))), other)
            kept = sessions.filter(pc.invert(stale))
            if kept.num_rows:
                write_atomically(kept, path)
            else:  # the sessions file goes first, so no moment shows rows without their partition's mark
                os.remove(path)
                for table in TABLES:
                    other = os.path.join(self.table_dir(table), name)
                    if table != "sessions" and os.path.exists(other):
                        os.remove(other)
        return removed


def _array(values: list[str]) -> pa.Array:
    return pa.array(values, type=pa.string())
