"""The money columns of a session's row: what it was billed, and what each strategy would have cost.

Built on the replay's own results, never re-derived here: the provider and
model are ``pruner.replay.detect``'s, the billed dollars are the
``as_recorded`` run's (the recorded usage at list prices), and each strategy's
dollars and feasibility are its run's totals. A session the replay cannot bill
gets ``money_error`` and no dollars (never dollars at another model's prices).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..model import Session
from ..replay import ReplaySettings, default_prices, replay, strategy_names
from ..replay.detect import detect

_S, _F, _B, _I = pa.string(), pa.float64(), pa.bool_(), pa.int64()


def strategy_columns() -> tuple[tuple[str, pa.DataType], ...]:
    cols: list[tuple[str, pa.DataType]] = []
    for name in strategy_names():
        cols += [(f"{name}_feasible", _B), (f"{name}_dollars", _F)]
    return tuple(cols)


COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("billed", _F),  # USD: the recorded usage at list prices (the as_recorded replay)
    ("prices", _S),  # which prices (model, source, date)
    ("money_error", _S),  # null unless the session could not be billed
    *strategy_columns(),
)


def money_columns(session: Session, strategies: tuple[str, ...] | None = None) -> dict[str, Any]:
    names = tuple(strategies) if strategies is not None else tuple(strategy_names())
    prices = default_prices()
    try:
        provider, model, _ = detect(session, prices)
        r = replay(session, names, settings=ReplaySettings(provider=provider, model=model), prices=prices,
                   snapshots=False)
    except Exception as exc:
        return {"money_error": f"{type(exc).__name__}: {exc}"}
    row: dict[str, Any] = {"prices": r.money_label, "money_error": None}
    if "as_recorded" in r.runs and r.recorded_usage:
        row["billed"] = r.runs["as_recorded"].totals["dollars"]
    for name in names:
        t = r.runs[name].totals
        row[f"{name}_dollars"] = t["dollars"]
        row[f"{name}_feasible"] = bool(t.get("feasible", t.get("rejected", 0) == 0))
    return row
