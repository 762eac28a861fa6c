"""The Replay page's hindsight bound, shaped for the page: when to compute it, the
bound's cumulative dollars and its schedule for the overview, its point for cost against recall, and
each strategy's regret for the strategies table. Pure (no Streamlit); the bound itself comes through
``pruner.replay.hindsight`` (the one path the Corpus page and ``pruner logs`` share).

>>> computes_at_once(20), computes_at_once(965)
(True, False)
>>> regret_text(None), regret_text(0.0123), regret_text(-5.0)
('n/a', '+$0.0123', '−$5.00')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from pruner.money import money
from pruner.replay.hindsight import BOUND_LABEL, bound_run, regrets, session_limits
from pruner.replay.verdict import DEFAULT_MIN_RECALL, Answer, Bound as AnswerBound, verdict

#: Up to this many requests the page computes the bound with the replay; above it, a button does, so the first
#: view stays fast (``pruner replay`` computes it by default up to ``hindsight.DEFAULT_BOUND_MAX_REQUESTS``, where a
#: few more seconds matter less than on a page). Measured on this project's 2-core machine, idle: 2.9 s on the
#: 170-request real Claude Code session ccviewer-fe5e1c67, 4.8 s on the 55-request codemie-session-624a4a58
#: (long contexts), 4.7 s on the 388-request tool_agent sample.
AT_ONCE_MAX_REQUESTS = 200
#: The session-state key holding the replay (``(session key, choice)``) whose bound the visitor asked for on the
#: Replay page (a long session's is computed on a click); the Explorer's answer states it from then on too.
ASKED = "replay_bound_asked"


@dataclass(frozen=True)
class Bound:
    """The bound as one run of the page has it: ``state`` "done" (``limits``: ``None`` when the replay cannot
    have one), "pending" (a long session's, until the visitor asks) or "failed" (``error``: what went wrong,
    for the page to say). The verdict says it (``pruner.replay.verdict.Answer``), never this module."""

    state: str
    limits: Any = None
    error: str = ""


def computes_at_once(requests: int) -> bool:
    """Whether a replay of ``requests`` requests computes its bound at once (else behind a button)."""
    return requests <= AT_ONCE_MAX_REQUESTS


#: Why a page's answer has no bound yet, per ``Bound.state`` ("pending" is said by the page: where to ask for it).
NOT_COMPUTED = {"failed": "it failed: see below",
                "none": "it needs the context recall of every strategy, which this replay did not measure"}


def answer(r: Any, bound: Bound, *, pending: str = "", failed: str = "") -> Answer:
    """The replay's ``Answer`` with the bound as a page has it (computed, not yet, failed): what the Replay page
    and the Explorer render, never recompose. ``pending`` and ``failed``: why the bound is not computed, in the
    page's words (where the visitor asks for it; what went wrong when the page shows it nowhere else)."""
    if bound.state == "done" and bound.limits is not None:
        return verdict(r, limits=bound.limits)
    said = {"pending": pending, "failed": failed}.get(bound.state)
    note = said or NOT_COMPUTED.get(bound.state, NOT_COMPUTED["none"])
    return verdict(r, bound=AnswerBound(False, DEFAULT_MIN_RECALL, note=note))


def limits(r: Any):
    """The bound of the replay ``r`` (``pruner.replay.hindsight.session_limits``; ``None``: not computable)."""
    return session_limits(r)


def regret_text(value: float | None) -> str:
    """A regret as the table shows it: signed dollars, ``n/a`` when there is no figure to compare."""
    if value is None:
        return "n/a"
    return f"{'+' if value >= 0 else '−'}{money(abs(value))}"


def regret_column(r: Any, bound: Any) -> list[str]:
    """Each strategy's regret, in the replay's order (the strategies table's rows)."""
    by_name = regrets(r, bound)
    return [regret_text(by_name[name]) for name in r.runs]


def bound_frame(r: Any, bound: Any) -> pd.DataFrame:
    """The combined bound's schedule replayed: one row per request with its cumulative dollars, in the
    columns of ``requests_frame`` the overview draws (empty: no bound with a figure)."""
    run = bound_run(r, bound)
    rows, total = [], 0.0
    for row in run.rows if run is not None else ():
        total += row.dollars
        rows.append({"strategy": BOUND_LABEL, "request": row.request, "turn": row.turn, "input": row.input,
                     "dollars": row.dollars, "cumulative_dollars": total})
    return pd.DataFrame(rows, columns=["strategy", "request", "turn", "input", "dollars", "cumulative_dollars"])


def schedule_marks(bound: Any, frame: pd.DataFrame) -> pd.DataFrame:
    """The bound's actions on the request axis: request, action, and the bound's cumulative dollars there."""
    if bound is None or frame.empty:
        return pd.DataFrame(columns=["request", "action", "cumulative_dollars"])
    at = frame.drop_duplicates("request", keep="last").set_index("request")["cumulative_dollars"]
    rows = [{"request": a.request, "action": a.action, "cumulative_dollars": float(at.get(a.request, 0.0))}
            for a in bound.combined.schedule]
    return pd.DataFrame(rows, columns=["request", "action", "cumulative_dollars"])


def bound_point(bound: Any) -> dict[str, Any] | None:
    """The combined bound on the cost-against-recall chart: its recall (%) and dollars (``None``: no figure)."""
    if bound is None or bound.combined.dollars is None or bound.combined.recall is None:
        return None
    return {"strategy": BOUND_LABEL, "recall %": 100 * float(bound.combined.recall),
            "dollars": float(bound.combined.dollars), "exact": bound.combined.exact}
