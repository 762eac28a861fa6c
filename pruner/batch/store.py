"""The batch folder: its manifest, what it already holds, and tidying before a run.

Layout (every table is a folder of Parquet partitions that pandas, DuckDB and
Spark read as one table)::

    OUT/_pruner_batch.json      settings, schema and the last run's summary
    OUT/sessions/part-*.parquet one row per session (or per file that failed)
    OUT/decisions/part-*.parquet one row per message

A ``sessions`` partition is the commit mark of its partition (workers write it
last). One run at a time holds the folder (``pruner.batch.lock``); under that
lock, before a run, leftovers of an interrupted one are removed: hidden
temporary files, and ``decisions`` partitions whose ``sessions`` partition was
never written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import __version__
from ..errors import ConfigurationError
from ..files import write_atomic
from ..jsonio import load_json_file
from .lock import LOCK
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

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, None when the folder has none; ``ConfigurationError`` naming the file when it is
        not one (not JSON, not an object of this version's shape, a link)."""
        path = os.path.join(self.root, MANIFEST)
        if os.path.islink(path):
            raise ConfigurationError(f"{path}: the batch manifest is a symbolic link; a batch folder's "
                                     "manifest is a regular file; choose another batch folder", setting="out")
        if not os.path.lexists(path):
            return None
        try:
            body = load_json_file(path, error=ConfigurationError,
                                  expected="it is not a batch manifest this version can read; choose another batch "
                                           "folder")
        except ConfigurationError as exc:
            raise ConfigurationError(str(exc), setting="out") from None
        return check_manifest(body, path)

    def write_manifest(self, settings: BatchSettings, last_run: dict[str, Any]) -> None:
        """Write the manifest atomically (exclusive temporary file, then a rename); a link planted at
        its name is replaced, never followed. Called only while this run holds the folder's lock."""
        body = {"pruner_batch": MANIFEST_VERSION, "pruner_version": __version__,
                "settings": settings.fingerprint(), "schema": schema_fingerprint(), "last_run": last_run}
        write_atomic(os.path.join(self.root, MANIFEST), json.dumps(body, indent=2, sort_keys=True) + "\n",
                     follow_symlinks=False)

    def check(self, settings: BatchSettings) -> dict[str, Any] | None:
        """Refuse a folder that is a file, holds other things, or holds results of other settings;
        the manifest (None for a new folder). Reads only."""
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise ConfigurationError(f"{self.root}: this is a file; a batch folder must be a folder",
                                     setting="out")
        manifest = self.manifest()
        if manifest is None and os.path.isdir(self.root) and set(os.listdir(self.root)) - {LOCK}:
            raise ConfigurationError(f"{self.root}: the folder is not empty and is not a batch folder; "
                                     "choose a new or empty folder", setting="out")
        if manifest is not None:
            if manifest.get("settings") != settings.fingerprint():
                raise ConfigurationError(f"{self.root}: this batch folder holds results made with other "
                                         "settings; rerun with the same settings or choose another batch folder",
                                         setting="out")
            if manifest.get("schema") != schema_fingerprint():
                raise ConfigurationError(f"{self.root}: this batch folder was written by pruner "
                                         f"{manifest.get('pruner_version')} with another table layout; "
                                         "choose another batch folder", setting="out")
        return manifest

    def prepare(self, settings: BatchSettings) -> None:
        """Check the folder again and tidy it: leftovers of an interrupted run go. Only while this run
        holds the folder's lock (``pruner.batch.lock``): no other run's files are in flight then."""
        manifest = self.check(settings)
        for table in TABLES:
            os.makedirs(self.table_dir(table), exist_ok=True)
            folder = self.table_dir(table)
            for name in os.listdir(folder):
                if name.startswith(".") and name.endswith(".tmp"):
                    os.remove(os.path.join(folder, name))
        for name in os.listdir(self.root):  # a manifest write that was interrupted
            if name.startswith(f".{MANIFEST}.") and name.endswith(".tmp"):
                os.remove(os.path.join(self.root, name))
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


def check_manifest(body: object, path: str) -> dict[str, Any]:
    """``body`` if it has the shape of a manifest this version writes, else ``ConfigurationError``
    naming ``path`` and the field. Readers (the next run, the dashboard) rely on these shapes."""
    def bad(what: str) -> ConfigurationError:
        return ConfigurationError(f"{path}: {what}; it is not a batch manifest this version can read")

    if not isinstance(body, dict):
        raise bad(f"expected a JSON object, got {_json_kind(body)}")
    version = body.get("pruner_batch")
    if isinstance(version, bool) or version != MANIFEST_VERSION:
        raise bad(f"field 'pruner_batch' is {_short(version)}, expected {MANIFEST_VERSION}")
    for name in ("settings", "last_run"):
        if not isinstance(body.get(name), dict):
            raise bad(f"field '{name}' must be an object, got {_json_kind(body.get(name))}")
    if not isinstance(body.get("schema"), list):
        raise bad(f"field 'schema' must be a list, got {_json_kind(body.get('schema'))}")
    if not isinstance(body.get("pruner_version"), str):
        raise bad(f"field 'pruner_version' must be a string, got {_json_kind(body.get('pruner_version'))}")
    return body


def _json_kind(value: object) -> str:
    for kind, name in ((bool, "true/false"), (dict, "an object"), (list, "a list"), (str, "a string"),
                       (int, "a number"), (float, "a number")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _array(values: list[str]) -> pa.Array:
    return pa.array(values, type=pa.string())
