"""The Corpus page's logic: read a batch folder, summarise it, filter it, and open one of its sessions.

Everything here is plain pandas/pyarrow on the tables ``pruner batch`` wrote
(``pruner.batch.schema``); the page only lays it out. Opening a session loads
it again from its source path and dialogue with the library, and checks that
the file still has the content the batch read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from pruner import PruneConfig
from pruner.batch import MANIFEST, SESSIONS
from pruner.batch.schema import OTHER_RULE_COLUMN, REPLAY, RULE_COLUMNS
from pruner.batch.store import check_manifest
from pruner.errors import ConfigurationError, FormatError
from pruner.files import read_limited
from pruner.formats import DEFAULT_MAX_BYTES, load_bytes
from pruner.jsonio import load_json_file

from . import corpus_money
from ..loading import LoadedSession, digest

#: Rows the table shows at most (it is filtered first; the downloads hold every row).
TABLE_ROWS = 2_000
EXTREMES = 10
TABLE_COLUMNS = ["file", "dialogue", "format", "messages_before", "messages_after", "tokens_before", "tokens_after",
                 "reduction_pct", "error"]
ERROR_CHOICES = ("all sessions", "pruned only", "errors only")


@dataclass(frozen=True)
class Corpus:
    folder: str
    sessions: pd.DataFrame  # the sessions table, plus "file" and "reduction_pct"
    manifest: dict
    rule_statuses: dict[str, str]  # rule -> the status its decisions carry
    replay: pd.DataFrame | None = None  # the replay table, when the batch ran with --replay

    @property
    def settings(self) -> dict:
        return self.manifest.get("settings", {})


def _types(arrow_type: pa.DataType):
    return pd.Int64Dtype() if pa.types.is_integer(arrow_type) else None


def read_corpus(folder: str | os.PathLike) -> Corpus | corpus_money.LogsCorpus:
    """Read a batch folder, or a logs folder (``pruner logs``: a ``LogsCorpus``); ``ConfigurationError``
    saying what to do when it is neither."""
    root = Path(os.path.expanduser(os.fspath(folder))).resolve()
    if root.is_dir() and corpus_money.is_logs_folder(root):
        return corpus_money.read_logs(root)
    manifest_path = root / MANIFEST
    if not root.is_dir():
        raise ConfigurationError(f"{root}: no such folder. Enter the folder you gave pruner batch as --out.")
    if not manifest_path.exists() or not (root / "sessions").is_dir():
        raise ConfigurationError(f"{root}: this is not a batch folder (it has no {MANIFEST} and sessions/). "
                                 "Enter the folder you gave pruner batch as --out, or run pruner batch first.")
    # Only a regular file, read with a bound: a named pipe typed here would hold the server forever.
    # Its shape is checked like the next batch run checks it: a list or a string is named, not a crash.
    manifest = check_manifest(load_json_file(manifest_path, error=ConfigurationError,
                                             expected="run pruner batch into a new folder and open that"),
                              str(manifest_path))
    try:
        table = ds.dataset(root / "sessions", format="parquet", schema=SESSIONS).to_table()
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise ConfigurationError(f"{root}: cannot read the batch tables ({exc}). Run pruner batch into a "
                                 "new folder and open that.") from None
    frame = unreadable_rows(table.to_pandas(types_mapper=_types))
    frame["file"] = frame["source"].map(distinct_labels(frame["source"].dropna().unique()))
    frame["reduction_pct"] = (100 * frame["reduction"]).round(2)
    frame = frame.sort_values(["source", "dialogue"], na_position="first", kind="stable").reset_index(drop=True)
    used = [rule for rule, column in RULE_COLUMNS.items() if frame[column].fillna(0).sum() > 0]
    replayed = None
    if list((root / "replay").glob("part-*.parquet")):
        try:
            replayed = ds.dataset(root / "replay", format="parquet", schema=REPLAY).to_table().to_pandas()
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise ConfigurationError(f"{root}: cannot read the replay table ({exc}). Run pruner batch into a "
                                     "new folder and open that.") from None
    return Corpus(folder=str(root), sessions=frame, manifest=manifest,
                  rule_statuses=rule_statuses(root / "decisions", used), replay=replayed)


#: A reduction below this (the pruned session 1,000 times the original) is no pruning result.
MIN_REDUCTION = -1000.0


def unreadable_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each row whose reduction no pruning could give (not finite, out of range, or not
    what its token counts give) made an error row that says so; the other rows are left as they are.
    A forged or damaged partition then costs its rows, not the page (one infinite value broke every chart)."""
    ok = frame["error"].isna()
    before = pd.to_numeric(frame["tokens_before"], errors="coerce").astype(float)
    after = pd.to_numeric(frame["tokens_after"], errors="coerce").astype(float)
    reduction = pd.to_numeric(frame["reduction"], errors="coerce").astype(float)
    expected = (1 - after / before.where(before > 0)).fillna(0.0)
    good = (np.isfinite(reduction) & (reduction <= 1) & (reduction >= MIN_REDUCTION) & np.isfinite(before)
            & np.isfinite(after) & (before >= 0) & (after >= 0) & ((reduction - expected).abs() <= 1e-6))
    bad = ok & ~good
    if not bad.any():
        return frame
    frame = frame.copy()
    frame.loc[bad, "error"] = [f"unreadable row of the sessions table: reduction {r!r} with tokens {b!r} -> {a!r} "
                               "is no pruning result; run pruner batch again into a new folder"
                               for r, b, a in zip(reduction[bad], before[bad], after[bad])]
    frame.loc[bad, "reduction"] = np.nan
    return frame


def distinct_labels(sources: Iterable[str]) -> dict[str, str]:
    """A label per source path: its file name, or as many of its last folders as tell it apart from
    every other source with the same name (``runA/session.jsonl``, ``runB/session.jsonl``)."""
    paths = sorted(set(sources))
    parts = {p: Path(p).parts for p in paths}
    depth = {p: 1 for p in paths}
    while True:
        labels: dict[str, list[str]] = {}
        for p in paths:
            labels.setdefault("/".join(parts[p][-depth[p]:]), []).append(p)
        clashing = [p for group in labels.values() if len(group) > 1 for p in group if depth[p] < len(parts[p])]
        if not clashing:
            return {p: "/".join(parts[p][-depth[p]:]) for p in paths}
        for p in clashing:
            depth[p] += 1


def replay_totals(replayed: pd.DataFrame) -> pd.DataFrame:
    """Per strategy (in the order the batch ran them): sessions, input tokens and dollars summed."""
    order = list(dict.fromkeys(replayed["strategy"]))
    totals = replayed.groupby("strategy", sort=False).agg(sessions=("session_id", "size"),
                                                          input_tokens=("input_tokens", "sum"),
                                                          dollars=("dollars", "sum"))
    return totals.reindex(order).reset_index()


def rule_statuses(decisions: Path, rules: Iterable[str]) -> dict[str, str]:
    """The status each rule's decisions carry, read from as few decisions partitions as needed."""
    wanted = set(rules)
    found: dict[str, str] = {}
    if not decisions.is_dir():
        return found
    for path in sorted(decisions.glob("part-*.parquet")):
        if wanted <= found.keys():
            break
        table = ds.dataset(path, format="parquet").to_table(columns=["rule", "status"],
                                                             filter=pc.field("rule") != "")
        for row in table.group_by(["rule", "status"]).aggregate([]).to_pylist():
            found.setdefault(row["rule"], row["status"])
    return found


def totals(frame: pd.DataFrame) -> dict:
    ok = frame[frame["error"].isna()]
    before, after = int(ok["tokens_before"].sum()), int(ok["tokens_after"].sum())
    return {"sessions": len(ok), "failed": int(frame["error"].notna().sum()), "files": int(frame["source"].nunique()),
            "tokens_before": before, "tokens_after": after,
            "reduction": 1 - after / before if before else 0.0,
            "messages_before": int(ok["messages_before"].sum()), "messages_after": int(ok["messages_after"].sum())}


def by_format(frame: pd.DataFrame) -> pd.DataFrame:
    """Per format: sessions, tokens before and after, and the token-weighted reduction in %."""
    ok = frame[frame["error"].isna()]
    grouped = ok.groupby("format", sort=True).agg(sessions=("session_id", "size"),
                                                  tokens_before=("tokens_before", "sum"),
                                                  tokens_after=("tokens_after", "sum")).reset_index()
    before = grouped["tokens_before"].astype(float)
    grouped["reduction_pct"] = (100 * (1 - grouped["tokens_after"].astype(float) / before.where(before > 0))
                                ).fillna(0.0).round(2)
    return grouped


def by_rule(frame: pd.DataFrame, statuses: dict[str, str]) -> pd.DataFrame:
    """Per rule: messages it decided and the status they got, most first."""
    rows = [{"rule": rule, "messages": int(frame[column].fillna(0).sum()), "status": statuses.get(rule, "")}
            for rule, column in RULE_COLUMNS.items()]
    other = int(frame[OTHER_RULE_COLUMN].fillna(0).sum())
    if other:
        rows.append({"rule": "other", "messages": other, "status": ""})
    out = pd.DataFrame(rows, columns=["rule", "messages", "status"])
    return out[out["messages"] > 0].sort_values(["messages", "rule"], ascending=[False, True]).reset_index(drop=True)


def extremes(frame: pd.DataFrame, n: int = EXTREMES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``n`` sessions that gain most and least (by token reduction; ties by session id)."""
    ok = frame[frame["error"].isna()].sort_values(["reduction", "session_id"], ascending=[False, True])
    most = ok.head(n)
    least = ok.sort_values(["reduction", "session_id"], ascending=[True, True]).head(n)
    return most.reset_index(drop=True), least.reset_index(drop=True)


def filter_sessions(frame: pd.DataFrame, *, formats: Iterable[str] = (), reduction: tuple[float, float] | None = None,
                    errors: str = ERROR_CHOICES[0], text: str = "") -> pd.DataFrame:
    """The sessions matching every filter: formats, reduction range in %, errors or not, text in the path/name."""
    shown = frame
    formats = list(formats)
    if formats:
        shown = shown[shown["format"].isin(formats)]
    if errors == ERROR_CHOICES[1]:
        shown = shown[shown["error"].isna()]
    elif errors == ERROR_CHOICES[2]:
        shown = shown[shown["error"].notna()]
    if reduction is not None and errors != ERROR_CHOICES[2]:
        low, high = reduction
        pct = shown["reduction_pct"]
        shown = shown[pct.isna() | ((pct >= low) & (pct <= high))] if errors == ERROR_CHOICES[0] else \
            shown[(pct >= low) & (pct <= high)]
    if text.strip():
        needle = text.strip().lower()
        hay = shown["source"].str.lower() + "\n" + shown["name"].fillna("").str.lower()
        shown = shown[hay.str.contains(needle, regex=False)]
    return shown


def table_frame(shown: pd.DataFrame) -> pd.DataFrame:
    return shown[TABLE_COLUMNS].head(TABLE_ROWS)


def open_session(corpus: Corpus | corpus_money.LogsCorpus, session_id: str) -> LoadedSession:
    """Load one session of the corpus again from its file, as the batch (or pruner logs) read it."""
    if isinstance(corpus, corpus_money.LogsCorpus):
        return corpus_money.open_logs_session(corpus, session_id)
    rows = corpus.sessions[corpus.sessions["session_id"] == session_id]
    if rows.empty:
        raise ConfigurationError("that session is not in this batch folder; open the folder again")
    row = rows.iloc[0]
    if pd.notna(row["error"]):
        raise FormatError("this file could not be read by the batch, so there is no session to open; "
                          "its error is in the table", file=row["source"])
    source = row["source"]
    settings = corpus.settings
    try:  # the batch's own limit: the file was read under it once (a regular file only, never a pipe)
        _, data = read_limited(source, int(settings.get("max_bytes") or DEFAULT_MAX_BYTES))
    except FormatError as exc:
        raise FormatError(f"{exc.detail}; it may have moved or changed since the batch ran", file=source) from None
    if digest(data) != row["digest"]:
        raise FormatError("the file has changed since the batch ran; run pruner batch again into this folder, "
                          "then reopen it here", file=source)
    dialogue = int(row["dialogue"])
    session = load_bytes(data, file=source, format=settings.get("format"), max_bytes=max(len(data), 1),
                         skip_bad_lines=bool(settings.get("skip_bad_lines")),
                         retrieval_tools=settings.get("retrieval_tools") or None, dialogue=dialogue)
    label = f"{Path(source).name}, dialogue {dialogue}" if int(row["dialogues"]) > 1 else Path(source).name
    return LoadedSession(key=f"{row['digest']}:{row['format']}:{dialogue}:{settings.get('retrieval_tools')}",
                               label=label, origin="corpus", format=row["format"], detected=not settings.get("format"),
                               session=session)


def batch_config(corpus: Corpus) -> PruneConfig:
    """The pruning settings the batch ran with (the command line sets no custom file tools)."""
    config = corpus.settings.get("config", {})
    defaults = PruneConfig()
    return PruneConfig(expire=config.get("expire", defaults.expire),
                       deduplicate=config.get("deduplicate", defaults.deduplicate),
                       restore=config.get("restore", defaults.restore),
                       disabled_rules=frozenset(config.get("disabled_rules", ())),
                       near_duplicate_threshold=config.get("near_duplicate_threshold",
                                                           defaults.near_duplicate_threshold),
                       orphan_policy=config.get("orphan_policy", defaults.orphan_policy),
                       encoding=config.get("encoding", defaults.encoding))
