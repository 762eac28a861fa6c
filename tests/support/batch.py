"""What a batch should hold, computed by a plain serial loop, and what a batch folder holds.

Both give ``{(source, dialogue): facts}`` with the same keys and facts, so a test
compares a Dask run with ``prune()`` called session by session.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pruner import PruneConfig, prune
from pruner.batch import expand_inputs
from pruner.errors import PrunerError
from pruner.formats import load_dialogues
from pruner.model import STATUSES


def serial_results(inputs, *, exclude=None, config: PruneConfig | None = None) -> dict:
    """Load every file of ``inputs`` and prune each dialogue in turn; a failing file maps to its error."""
    config = config or PruneConfig()
    expected = {}
    for f in expand_inputs([str(i) for i in inputs], exclude=exclude).files:
        try:
            sessions = load_dialogues(f.path)
        except PrunerError as exc:
            expected[(f.path, None)] = {"error": str(exc)}
            continue
        for number, session in enumerate(sessions):
            r = prune(session, config)
            s = r.stats
            expected[(f.path, number)] = {
                "error": None, "format": session.source_format, "name": session.name,
                "messages": (s.messages_before, s.messages_after), "tokens": (s.tokens_before, s.tokens_after),
                "statuses": tuple(s.by_status[k] for k in STATUSES), "rules": dict(s.by_rule),
                "decisions": [(d.id, d.status, d.rule, d.related) for d in r.decisions]}
    return expected


def read_tables(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_parquet(Path(out) / "sessions"), pd.read_parquet(Path(out) / "decisions")


def batch_results(out: Path) -> dict:
    """The same facts as ``serial_results``, read back from a batch folder with pandas."""
    sessions, decisions = read_tables(out)
    by_session = {sid: group.sort_values("position") for sid, group in decisions.groupby("session_id")}
    rule_columns = [c for c in sessions.columns if c.startswith("rule_")]
    found = {}
    for row in sessions.itertuples(index=False):
        key = (row.source, None if pd.isna(row.dialogue) else int(row.dialogue))
        assert key not in found, f"{key} appears twice in the sessions table"
        if isinstance(row.error, str):
            found[key] = {"error": row.error}
            continue
        d = by_session.get(row.session_id, pd.DataFrame(columns=decisions.columns))
        found[key] = {
            "error": None, "format": row.format, "name": row.name,
            "messages": (int(row.messages_before), int(row.messages_after)),
            "tokens": (int(row.tokens_before), int(row.tokens_after)),
            "statuses": tuple(int(getattr(row, k)) for k in STATUSES),
            "rules": {c.removeprefix("rule_"): int(getattr(row, c)) for c in rule_columns if getattr(row, c)},
            "decisions": [(m, s, r, None if pd.isna(rel) else rel)
                          for m, s, r, rel in zip(d["message_id"], d["status"], d["rule"], d["related"])]}
    return found
