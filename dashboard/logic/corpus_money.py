"""The Corpus page on a logs folder (``pruner logs --out DIR``): what was paid, what each strategy would
have cost, and which sessions matter.

Everything is derived here from the rows ``pruner logs`` wrote (``pruner.logs.table``, contract D):
per day, project and model are groupings of those rows, never stored twice. A session's day is the
day it started (UTC). Dollars by model come from each row's ``billed_by_model``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pruner.errors import ConfigurationError, FormatError
from pruner.formats import load_session
from pruner.logs.row import digest_file
from pruner.logs.table import TABLE
from pruner.replay import CAUSES, strategy_names
from pruner.logs.answer import RECORDING, FolderAnswer, folder_answer
from pruner.replay.answer import rank_key, signed
from pruner.replay.verdict import DEFAULT_MIN_RECALL

from ..loading import LoadedSession
from pruner.money import money



#: A table file's identity on disk: (inode, size, modification time in ns). A new table (``pruner logs``
#: replaces it by a rename) has a new one; the live panel compares them (``corpus_live``).
Signature = tuple[int, int, int]


def signature_of(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class LogsCorpus:
    folder: str
    sessions: pd.DataFrame  # the rows, plus "day" (start day) and "file"
    signature: Signature | None = None  # of the table file these rows were read from

    @property
    def strategies(self) -> list[str]:
        return [s for s in strategy_names() if f"{s}_dollars" in self.sessions
                and self.sessions[f"{s}_dollars"].notna().any()]

    @property
    def prices(self) -> list[str]:
        return sorted(p for p in self.sessions["prices"].dropna().unique())


def is_logs_folder(root: Path) -> bool:
    return (root / TABLE).is_file()


def read_logs(root: Path) -> LogsCorpus:
    """The table's rows, read through one open file (its signature from that file too): a table replaced by
    a rename while it is read is the old one whole, and the next look sees the new one by its signature."""
    try:
        with open(root / TABLE, "rb") as fh:
            sig = signature_of(os.fstat(fh.fileno()))
            frame = pq.ParquetFile(fh).read().to_pandas()
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise ConfigurationError(f"{root}: cannot read the logs table ({exc}). Run pruner logs into a new "
                                 "folder and open that.") from None
    frame["day"] = frame["start"].fillna(frame["end"]).str.slice(0, 10)
    frame["file"] = frame["source"].map(lambda p: Path(p).name)
    frame = frame.sort_values(["start", "session_key"], na_position="last", kind="stable").reset_index(drop=True)
    return LogsCorpus(folder=str(root), sessions=frame, signature=sig)


def filter_rows(frame: pd.DataFrame, *, agents=(), projects=(), days: tuple[date, date] | None = None,
                include_removed: bool = True) -> pd.DataFrame:
    out = frame
    if agents:
        out = out[out["agent"].isin(list(agents))]
    if projects:
        out = out[out["project"].isin(list(projects))]
    if days is not None:
        low, high = (d.isoformat() for d in days)
        out = out[(out["day"] >= low) & (out["day"] <= high)]
    if not include_removed:
        out = out[~out["removed"].fillna(False)]
    return out


def by_model_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (session, model) with that model's billed dollars and requests."""
    rows = []
    for key, day, project, raw in zip(frame["session_key"], frame["day"], frame["project"], frame["billed_by_model"]):
        if not isinstance(raw, str):
            continue
        for model, v in json.loads(raw).items():
            rows.append({"session_key": key, "day": day, "project": project, "model": model,
                         "dollars": float(v.get("dollars") or 0.0), "requests": int(v.get("requests") or 0),
                         "priced": bool(v.get("priced", True))})
    return pd.DataFrame(rows, columns=["session_key", "day", "project", "model", "dollars", "requests", "priced"])


def dollars_by_day(frame: pd.DataFrame, stack: str) -> pd.DataFrame:
    """``day``, ``group`` (a project or a model), ``dollars``: for a stacked bar per day."""
    if stack == "model":
        long = by_model_rows(frame).rename(columns={"model": "group"})
    else:
        long = frame.assign(group=frame["project"], dollars=frame["billed"].fillna(0.0))
    return (long.groupby(["day", "group"], as_index=False)["dollars"].sum()
            .sort_values(["day", "group"]).reset_index(drop=True))


def dollars_by(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` (project or model), ``dollars``, ``sessions``, largest first."""
    if column == "model":
        long = by_model_rows(frame)
        out = long.groupby("model", as_index=False).agg(dollars=("dollars", "sum"),
                                                         sessions=("session_key", "nunique"))
    else:
        out = frame.groupby(column, as_index=False).agg(dollars=("billed", "sum"), sessions=("session_key", "size"))
    return out.sort_values(["dollars", column], ascending=[False, True]).reset_index(drop=True)


def where_it_went(frame: pd.DataFrame) -> dict:
    """The bill, its cache writes, and its misses by cause (dollars re-billed and share of the bill)."""
    billed = float(frame["billed"].fillna(0.0).sum())
    writes = float(frame["cache_write_dollars"].fillna(0.0).sum())
    causes = []
    for cause in CAUSES:
        dollars = float(frame.get(f"rebilled_{cause}", pd.Series(dtype=float)).fillna(0.0).sum())
        misses = int(frame.get(f"misses_{cause}", pd.Series(dtype=float)).fillna(0).sum())
        causes.append({"cause": cause, "misses": misses, "dollars": dollars,
                       "share": dollars / billed if billed else 0.0})
    return {"billed": billed, "sessions": len(frame), "cache_writes": writes,
            "cache_write_share": writes / billed if billed else 0.0,
            "unpriced_requests": int(frame["unpriced_requests"].fillna(0).sum()),
            "causes": pd.DataFrame(causes, columns=["cause", "misses", "dollars", "share"])}


def folder_rows(frame: pd.DataFrame) -> list[dict]:
    """The rows as ``pruner.logs.answer`` reads them. A table written before ``modelled`` existed held the
    recording's dollars in ``as_recorded_dollars``: that stands in for it there."""
    rows = frame.to_dict("records")
    for r in rows:
        if r.get("modelled") is None or pd.isna(r.get("modelled")):
            r["modelled"] = r.get(f"{RECORDING}_dollars")
    return rows


def folder(corpus: LogsCorpus, frame: pd.DataFrame) -> FolderAnswer:
    """The selection's figures: the bill, the modelled recording, each strategy summed over only the
    sessions where it is feasible and applicable (``pruner.logs.answer``, which ``pruner logs`` prints)."""
    return folder_answer(folder_rows(frame), corpus.strategies)


def strategy_points(corpus: LogsCorpus, frame: pd.DataFrame) -> pd.DataFrame:
    """One point per strategy: its dollars over the sessions where it is feasible and applicable, the
    modelled recording of those same sessions, how many they are of those that replayed it, and context
    recall (the mean over them). The recording's point is the modelled recording."""
    points = []
    for f in folder(corpus, frame).sums:
        points.append({"strategy": f.strategy, "dollars": f.dollars, "modelled": f.modelled, "sessions": f.replayed,
                       "feasible_sessions": f.sessions, "feasible": f.sessions == f.replayed,
                       "infeasible": f.infeasible, "not_applicable": f.not_applicable, "recall": f.recall,
                       "recording": f.strategy == RECORDING, "saving": f.saving, "label": f.text()})
    return pd.DataFrame(points, columns=["strategy", "dollars", "modelled", "sessions", "feasible_sessions", "feasible",
                                         "infeasible", "not_applicable", "recall", "recording", "saving", "label"])


def verdict_lines(corpus: LogsCorpus, frame: pd.DataFrame, *,
                  min_recall: float = DEFAULT_MIN_RECALL) -> tuple[str, ...]:
    """The selection's answer (``FolderAnswer.lines``: the lines ``pruner logs`` ends with), rendered, never
    recomposed here."""
    return folder(corpus, frame).lines(min_recall)


def sessions_that_matter(corpus: LogsCorpus, frame: pd.DataFrame, *,
                         min_recall: float = DEFAULT_MIN_RECALL) -> pd.DataFrame:
    """Per session: the best feasible, applicable strategy keeping ``min_recall`` (``answer.rank_key``, the
    Replay page's verdict's rule) and what it saves against the session's modelled recording, largest
    saving first."""
    rows = []
    names = [s for s in corpus.strategies if s != RECORDING]
    for r in folder_rows(frame):
        base = r.get("modelled")
        options = [(float(r[f"{s}_dollars"]), s, r.get(f"{s}_recall")) for s in names
                   if pd.notna(r.get(f"{s}_dollars")) and bool(r.get(f"{s}_feasible"))
                   and r.get(f"{s}_applicable") is not False
                   and (r.get(f"{s}_recall") is None or pd.isna(r.get(f"{s}_recall"))
                        or r[f"{s}_recall"] >= min_recall)]  # present and not None: the tests before say so
        best_dollars, best, _ = min(options, key=lambda o: rank_key(o[1], o[0], None if pd.isna(o[2]) else o[2],
                                                                      names)) if options else (None, None, None)
        saving = (float(base) - best_dollars) if best_dollars is not None and base is not None and pd.notna(base) \
            else None
        rows.append({"session_key": r["session_key"], "session": r["file"], "billed": r["billed"],
                     "modelled": base, "best_strategy": best, "best_dollars": best_dollars, "saving": saving,
                     "saving_pct": 100 * saving / float(base) if saving is not None and base else None,
                     "agent": r["agent"], "project": r["project"], "start": r["start"],
                     "costliest_miss": r.get("costliest_miss_dollars"),
                     "costliest_miss_request": r.get("costliest_miss_request")})
    out = pd.DataFrame(rows, columns=["session_key", "session", "billed", "modelled", "best_strategy", "best_dollars",
                                      "saving", "saving_pct", "agent", "project", "start", "costliest_miss",
                                      "costliest_miss_request"])
    return out.sort_values(["saving", "session_key"], ascending=[False, True], na_position="last").reset_index(
        drop=True)


def matter_table(matter: pd.DataFrame) -> pd.DataFrame:
    """``sessions_that_matter`` as the page shows it: money written by ``pruner.money.money`` and "-" where a
    figure is missing (a column of numbers printed "$-0.01" and a literal "None")."""
    def cash(x) -> str:
        return "-" if x is None or pd.isna(x) else money(float(x))

    out = pd.DataFrame({"session": matter["session"], "billed": matter["billed"].map(cash),
                        "modelled": matter["modelled"].map(cash),
                        "best strategy": matter["best_strategy"].map(lambda x: "-" if x is None or pd.isna(x) else x),
                        "best strategy $": matter["best_dollars"].map(cash), "saving": matter["saving"].map(cash),
                        "saving %": matter["saving_pct"].map(lambda x: "-" if x is None or pd.isna(x) else
                                                             f"{signed(x)} %"),
                        "agent": matter["agent"], "project": matter["project"], "start": matter["start"],
                        "costliest miss": matter["costliest_miss"].map(cash),
                        "costliest_miss_request": matter["costliest_miss_request"]})
    return out


def open_logs_session(corpus: LogsCorpus, key: str) -> LoadedSession:
    """Load one session of the logs folder again from its main file (its subagent files with it)."""
    rows = corpus.sessions[corpus.sessions["session_key"] == key]
    if rows.empty:
        raise ConfigurationError("that session is not in this logs folder; open the folder again")
    row = rows.iloc[0]
    source = row["source"]
    if isinstance(row["error"], str):
        raise FormatError("pruner logs could not read this session, so there is nothing to open; its error is in "
                          "the table", file=source)
    expected = json.loads(row["files"])[0][3]
    try:
        actual = digest_file(source)
    except OSError as exc:
        raise FormatError(f"cannot read it ({exc.strerror or exc}); it may have moved since pruner logs ran",
                          file=source) from None
    if actual != expected:
        raise FormatError("the file has changed since pruner logs read it; run pruner logs again, then reopen it",
                          file=source)
    session = load_session(source)
    return LoadedSession(key=f"logs:{actual}:{row['format']}", label=f"{Path(source).name} ({row['agent']})",
                         origin="corpus", format=row["format"], detected=True, session=session)


def replace_link(loaded: LoadedSession, params: dict[str, str]) -> LoadedSession:
    """``loaded`` carrying the URL parameters that reopen it from the logs folder (a reload, a link)."""
    return replace(loaded, link=tuple((k, v) for k, v in params.items() if k in ("batch", "batch_session")))


def folder_label(corpus: LogsCorpus) -> str:
    return os.path.basename(corpus.folder.rstrip("/")) or corpus.folder
