"""What a strategy lost, for the Replay and Corpus pages: ``pruner.replay.lost``'s list as a table.

Pure (no Streamlit). Terms, ids and reasons are transcript text: the pages show them in data grids
(plain text cells), never as Markdown.

>>> from pruner.replay.lost import LostTerm, LostTerms
>>> rows = (LostTerm("KeyError_42", "main", 2, 5, 3, 7, "t1", "file reads", 2, "pruned at request 2"),)
>>> lost_frame(LostTerms("prune_every_request", rows, 10, 3, 3)).iloc[0].to_dict()["message"]
'#7 (t1)'
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import pandas as pd

from pruner.replay.lost import LostTerms, lost_terms

COLUMNS = ["request", "term", "lacked at", "message", "kind", "why", "last request", "chain"]
#: The column widths (pixels) that keep the table inside the page at 1366 pixels, the reason wrapping.
WIDTHS = {"request": 65, "term": 150, "lacked at": 75, "message": 110, "kind": 100, "why": 290,
          "last request": 90, "chain": 100}


def lost_frame(lost: LostTerms) -> pd.DataFrame:
    """One row per lost term and holding message, in the list's order."""
    rows = [{"request": r.request, "term": r.term, "lacked at": r.requests,
             "message": "no session message" if r.position is None else f"#{r.position} ({r.message_id})",
             "kind": r.kind, "why": r.why, "last request": r.last_request, "chain": r.chain} for r in lost.rows]
    return pd.DataFrame(rows, columns=COLUMNS)


def lost_caption(lost: LostTerms) -> str:
    """What the table counts, in one sentence."""
    if not lost.rows:
        return (f"{lost.strategy} lost nothing: at every request its context held all the terms the replies used "
                f"({lost.used:,} over the session).")
    text = (f"{lost.strategy}: {len(lost.rows):,} term{'' if len(lost.rows) == 1 else 's'} lost, {lost.missing:,} of "
            f"the {lost.used:,} used terms "
            "missing over the session (a term counts at every request that lacked it: \"lacked at\").")
    if not lost.complete:
        text += f" Listed from the first {lost.kept:,} losses kept per request."
    return text


def first_to_show(r: Any, best: str | None, closest: str | None) -> str:
    """The strategy the section opens on: the verdict's, else the first that lost something, else the first."""
    names = [n for n in r.runs if n != "as_recorded"] or list(r.runs)
    for name in (best, closest):
        if name is not None and name in names:
            return name
    report = getattr(r, "recall", None)
    for name in names:
        if report is not None and report.strategies.get(name) and report.strategies[name].missing:
            return name
    return names[0]


def lost_of(r: Any, strategy: str, sort: str) -> LostTerms:
    return lost_terms(r, strategy, sort=sort)


# -- the Corpus page: the top lost terms per strategy, from the logs table's <strategy>_lost columns --

def top_lost_frame(frame: pd.DataFrame, strategies: Iterable[str], n: int = 5) -> pd.DataFrame:
    """Per strategy, the ``n`` terms lacked at the most requests over the sessions shown (summed over
    sessions), with how many sessions lost each; a table without the columns gives an empty frame."""
    rows = []
    for name in strategies:
        column = f"{name}_lost"
        if column not in frame:
            continue
        counts: dict[str, list[int]] = {}
        for cell in frame[column].dropna():
            try:
                terms = json.loads(cell)
            except (TypeError, ValueError):
                continue
            for t in terms if isinstance(terms, list) else ():
                if isinstance(t, dict) and isinstance(t.get("term"), str) and isinstance(t.get("requests"), int):
                    entry = counts.setdefault(t["term"], [0, 0])
                    entry[0] += t["requests"]
                    entry[1] += 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:n]
        rows += [{"strategy": name, "term": term, "lacked at": req, "sessions": sessions}
                 for term, (req, sessions) in top]
    return pd.DataFrame(rows, columns=["strategy", "term", "lacked at", "sessions"])
