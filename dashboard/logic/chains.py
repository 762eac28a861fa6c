"""A session's chains for the Explorer: the main conversation and each subagent's, each with its requests
and its own dollars (``pruner.replay.bill``). Pure (no Streamlit).

>>> from pruner.model import Message, Session
>>> sub = Session.of([Message(id="u", role="user", content="find it"), Message(id="a", role="assistant",
...                   content="found")], metadata={"chain": "agent-1"})
>>> s = Session.of([Message(id="u", role="user", content="hi"), Message(id="a", role="assistant",
...                 content="hello")], subagents=[sub])
>>> chain_rows(s)["chain"].tolist()
['main', 'agent-1']
"""

from __future__ import annotations

import math

import pandas as pd

from pruner.model import MAIN_CHAIN, Session
from pruner.money import money
from pruner.replay import bill, default_prices
from pruner.replay.prices import PriceTable
from pruner.replay.requests import find_requests

REQUEST_COLUMNS = ["chain", "request", "position", "turn", "context", "dollars"]
ROW_COLUMNS = ["chain", "messages", "requests", "request numbers", "peak context", "billed"]


def requests_frame(session: Session, prices: PriceTable | None = None) -> pd.DataFrame:
    """One row per request of every chain, numbered across the session: its recorded context (provider
    tokens; NaN when not recorded) and what it was billed (NaN when it records no usage)."""
    billed = {(r.chain, r.position): r.dollars for r in bill(session, prices or default_prices()).requests}
    rows = []
    for req in find_requests(session):
        recorded = req.recorded
        dollars = billed.get((req.chain, req.position), 0.0 if recorded is not None else math.nan)
        rows.append({"chain": req.chain, "request": req.index, "position": req.position, "turn": req.turn,
                     "context": recorded.context if recorded is not None else math.nan, "dollars": dollars})
    return pd.DataFrame(rows, columns=REQUEST_COLUMNS)


def chain_rows(session: Session, prices: PriceTable | None = None,
               requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per chain, the main one first: messages, requests, its first and last request number (across
    the session), the largest recorded context, and the bill ("no usage recorded" when none of its
    requests records any)."""
    requests = requests_frame(session, prices) if requests is None else requests
    rows = []
    for chain, conversation in session.chains:
        part = requests[requests["chain"] == chain]
        dollars = part["dollars"].dropna()
        peak = part["context"].dropna()
        rows.append({"chain": chain, "messages": len(conversation.messages), "requests": len(part),
                     "request numbers": f"{int(part['request'].min()):,} to {int(part['request'].max()):,}"
                     if len(part) else "none",
                     "peak context": f"{int(peak.max()):,}" if len(peak) else "not recorded",
                     "billed": money(float(dollars.sum())) if len(dollars) else "no usage recorded"})
    return pd.DataFrame(rows, columns=ROW_COLUMNS)


def chains_caption(session: Session, rows: pd.DataFrame) -> str:
    """How the session's messages split between its chains (the headline counts the main chain only)."""
    subs = len(session.subagents)
    if not subs:
        return f"One chain: the main conversation ({len(session.messages):,} messages); no subagents."
    inside = int(rows[rows["chain"] != MAIN_CHAIN]["messages"].sum())
    return (f"The main conversation ({len(session.messages):,} messages, the figures above) and {subs:,} subagent "
            f"chain{'s' if subs != 1 else ''} ({inside:,} messages more), each with its own requests, context and "
            "cache.")
