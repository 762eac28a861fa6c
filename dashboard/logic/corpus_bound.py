"""The Corpus page's hindsight bound: the folder's sums (``pruner.logs.bound``, the sentence ``pruner logs``
ends with), by project and by model, and the sessions where the online strategy is furthest above the bound.
Pure (no Streamlit); the rows are the logs table's, as ``corpus_money.folder_rows`` gives them."""

from __future__ import annotations

import pandas as pd

from pruner.logs.bound import BoundSum, bound_answer, bound_by, largest_gaps
from pruner.money import money

from .corpus_money import folder_rows


def answer(frame: pd.DataFrame) -> BoundSum:
    """The selection's bound sums (``pruner.logs.bound.bound_answer``)."""
    return bound_answer(folder_rows(frame)) if "bound_version" in frame else bound_answer([])


def _cash(value) -> str:
    return "-" if value is None or pd.isna(value) else money(float(value))


def by_frame(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    """Per project or model: sessions, at most saved, what the online strategy saved (money as text)."""
    if "bound_version" not in frame:
        return pd.DataFrame()
    rows = folder_rows(frame)
    online = answer(frame).online
    groups = bound_by(rows, group, online)
    return pd.DataFrame([{group: g[group] or "(none)", "sessions": g["sessions"], "modelled": _cash(g["modelled"]),
                          "best in hindsight": _cash(g["bound"]), "at most saved": _cash(g["at most saved"]),
                          f"{online} saved": _cash(g[f"{online} saved"])} for g in groups])


def gaps_frame(frame: pd.DataFrame, limit: int = 20) -> pd.DataFrame:
    """The sessions where the online strategy's dollars are furthest above the bound's, largest first."""
    if "bound_version" not in frame:
        return pd.DataFrame()
    online = answer(frame).online
    return pd.DataFrame([{"session": g["session_key"], "project": g["project"], "model": g["model"],
                          "gap": _cash(g["gap"]), online: _cash(g[online]), "best in hindsight": _cash(g["bound"]),
                          "modelled": _cash(g["modelled"])} for g in largest_gaps(folder_rows(frame), online, limit)])
