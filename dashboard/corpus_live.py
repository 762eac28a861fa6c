"""The Corpus page's live panel on a logs folder (issue 32, Live): a Streamlit fragment that looks at the
table every ``LIVE_SECONDS`` (``st.fragment(run_every=...)``, Streamlit ≥ 1.37; the project pins a newer
one) and shows the session being written now.

When ``pruner logs`` (or a cycle of ``pruner logs --watch``) has replaced the table since the page read
it, the fragment reads the new one and reruns the whole page, so every figure on it (the bill, the
strategies, the sessions that matter) is of the same table; when nothing changed, a look costs one
``stat`` and reruns nothing but the panel. The logic (which table is newer, which session is live) is in
``dashboard.logic.corpus_live``; the figures are ``pruner.logs.live``'s, as ``--watch`` prints them.
"""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.logic import corpus_live as logic
from dashboard.logic import corpus_money as money_logic
from pruner.logs.live import WATCHED
from pruner.money import money

ss = st.session_state


def _figure(figure) -> str:
    if figure is None:
        return "-"
    return money(figure.dollars) if figure.dollars is not None else "-"


@st.fragment(run_every=logic.LIVE_SECONDS)
def live_panel() -> None:
    """The session being written now; reruns the page when the table on disk is newer than the one shown."""
    shown = ss.get("corpus")
    if not isinstance(shown, money_logic.LogsCorpus):
        return
    found = logic.refresh(shown)
    if found.corpus is not None:
        ss["corpus"] = found.corpus
        st.rerun()  # the whole page, from the new table
    now = logic.live(shown)
    with st.container(key="logs_live_box"):
        st.subheader("Now: the session being written")
        if found.problem:
            st.warning(ui.escape_markdown(found.problem), icon=":material/sync_problem:")
        if now is None:
            st.caption("No readable session in this table yet.")
            return
        cols = st.columns(4)
        cols[0].metric("Dollars so far", "-" if now.billed is None else money(now.billed),
                       help=f"What the providers charged for its {now.requests:,} requests so far, at list prices.")
        cols[1].metric("Cache-read share", now.share_text(),
                       help="Cache-read tokens over all its input tokens (fresh input, cache reads, cache writes).")
        cols[2].metric(f"{WATCHED} so far", _figure(now.watched),
                       help=None if now.watched is None else (now.watched.note or "Modelled, over the same requests."))
        bar = f"best keeping ≥ {100 * now.min_recall:g} % recall"
        cols[3].metric(bar.capitalize(), _figure(now.best),
                       help=None if now.best is None else f"{now.best.strategy}, modelled over the same requests.")
        prices = f" Prices: {now.prices}." if now.prices else ""
        st.caption(ui.escape_markdown(f"{now.name} ({now.agent}), last written {logic.modified_text(now)}; "
                                      f"{now.strategies_text()}.{prices} This panel looks at the table every "
                                      f"{logic.LIVE_SECONDS:g} s; pruner logs --watch keeps the table up to date."))
