"""Three views the Explorer and the Replay page share the drawing of: what a strategy lost over the whole
session, what fills the context, and the session's chains (main and subagents).

Each draws its section from a library result shaped by ``dashboard/logic/{lost,composition,chains}.py``
and its chart builder (``dashboard/composition_charts.py``); nothing here computes a figure. Transcript
text (terms, ids, tool and chain names) reaches the page only in data grids, HTML tables and charts,
which show it as plain text, never as Markdown.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pruner.replay.composition import recorded_composition, strategy_compositions
from pruner.replay.lost import SORT_KEYS

from dashboard import cache, composition_charts, ui
from dashboard.logic import chains as chains_logic
from dashboard.logic import composition as composition_logic
from dashboard.logic import lost as lost_logic

ss = st.session_state
SORT_LABELS = {"request": "first request lacking it", "requests": "most requests lacking it", "term": "term (A-Z)",
               "message": "the message that held it", "why": "why it left"}
CHART_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


def breakable(name: str) -> str:
    """A strategy name an HTML table can wrap after each underscore (``prune_every_request`` is one word)."""
    return name.replace("_", "_\u200b")


# -- the Replay page ---------------------------------------------------------------------------------------

def lost_section(r, key, best: str | None, closest: str | None) -> None:
    """Every term a strategy's context lacked over the session, one row per term and holding message."""
    st.subheader("What each strategy lost, over the whole session")
    names = list(r.runs)
    if ss.get("lost_strategy") not in names:
        ss["lost_strategy"] = lost_logic.first_to_show(r, best, closest)
    c1, c2 = st.columns(2)
    strategy = c1.selectbox("Strategy", names, key="lost_strategy")
    sort = c2.selectbox("Order", SORT_KEYS, format_func=lambda k: str(SORT_LABELS.get(k)), key="lost_sort",
                        help="Or click a column header to sort the table by that column.")
    if strategy is None or sort is None:  # a selectbox answers None only when it has no options
        return
    lost = cache.shared("replay_lost", (key, strategy, sort), lambda: lost_logic.lost_of(r, strategy, sort))
    ui.inert(lost_logic.lost_caption(lost))
    if not lost.rows:
        return
    frame = lost_logic.lost_frame(lost)
    if set(frame["chain"]) == {"main"}:
        frame = frame.drop(columns=["chain"])
    widths = dict(lost_logic.WIDTHS)
    if "chain" in frame:
        widths["why"] -= widths["chain"]
    with st.container(key="lost_terms_box"):  # the browser test measures that every column shows
        st.dataframe(frame, hide_index=True, width="stretch", key="lost_terms", height=min(38 + 35 * len(frame), 420),
                     column_config={c: (st.column_config.NumberColumn(c, format="localized", width=widths[c])
                                        if pd.api.types.is_numeric_dtype(frame[c])
                                        else st.column_config.TextColumn(c, width=widths[c])) for c in frame})
    st.caption("“lacked at”: how many requests' contexts lacked the term; “message”: the newest message of the "
               "recorded context that held it (its position in its chain, and id). The command line prints the "
               f"same list: `pruner replay FILE --lost {strategy}`.")


def composition_section(r, key, best: str | None) -> None:
    """The main chain's context split by kind under one strategy, and what each strategy removes by kind."""
    st.subheader("What fills the context")
    asked = ss.get("composition_for") == key
    if any(run.snapshots is None for run in r.runs.values()) and not asked and not cache.has("replay_composition",
                                                                                              key):
        st.button("Show what fills the context (replays every strategy once more)", key="composition_go",
                  on_click=lambda: ss.update(composition_for=key),
                  help="A long session keeps no contexts in memory: this replays the strategies again to split "
                       "each request's context by kind (cached afterwards).")
        return
    comps = cache.shared("replay_composition", key, lambda: strategy_compositions(r))
    names = list(comps)
    if ss.get("composition_strategy") not in names:
        ss["composition_strategy"] = best if best in names else names[0]
    strategy = st.selectbox("Strategy", names, key="composition_strategy")
    comp = comps[strategy]
    figure = cache.shared("replay_composition_figure", (key, strategy), lambda: composition_charts.composition_figure(
        comp, title=f"What fills the context under {strategy} (main chain, pruner's token count)"))
    with st.container(key="replay_composition_box"):
        st.plotly_chart(figure, key="replay_composition_chart", config=CHART_CONFIG)
    ui.inert(composition_logic.end_sentence(comp))
    reference = composition_logic.reference_of(names)
    if reference is None or len(names) < 2:
        return
    table = composition_logic.removed_frame(comps, reference).set_index("kind")
    table.columns = [breakable(c) for c in table.columns]
    st.markdown(f"**What each strategy removes, by kind**: the share of {reference}'s tokens of each kind, summed "
                "over the requests, that the strategy did not send")
    with st.container(key="composition_removed_box"):
        st.table(table)


# -- the Explorer ------------------------------------------------------------------------------------------

def chains_section(loaded) -> None:
    """Each chain with its own requests over the session and its own dollars."""
    session = loaded.session
    st.subheader("Chains: the main conversation and its subagents")
    requests = cache.shared("chain_requests", loaded.key, lambda: chains_logic.requests_frame(session))
    rows = chains_logic.chain_rows(session, requests=requests)
    ui.inert(chains_logic.chains_caption(session, rows))
    with st.container(key="chains_box"):
        st.dataframe(rows, hide_index=True, width="stretch", key="chains_table",
                     column_config={"chain": st.column_config.TextColumn("chain", width=220),
                                    "messages": st.column_config.NumberColumn("messages", format="localized",
                                                                              width=90),
                                    "requests": st.column_config.NumberColumn("requests", format="localized",
                                                                              width=90),
                                    "request numbers": st.column_config.TextColumn("request numbers", width=140),
                                    "peak context": st.column_config.TextColumn(
                                        "peak context", width=120, help="The largest recorded context of the "
                                        "chain's requests (provider tokens)"),
                                    "billed": st.column_config.TextColumn(
                                        "billed", width=130, help="Its requests' recorded usage at list prices, "
                                        "each at its own model (pruner.replay.bill)")})
    if len(requests):
        with st.container(key="chains_chart_box"):
            st.plotly_chart(composition_charts.chains_figure(
                requests, order=[c for c, _ in session.chains]), key="chains_chart", config=CHART_CONFIG)


def recorded_composition_section(loaded, encoding: str) -> None:
    """What fills the context the recording sent, at each request of one chain."""
    session = loaded.session
    st.subheader("What fills the context")
    chains = [c for c, _ in session.chains]
    chain = chains[0]
    if len(chains) > 1:
        if ss.get("composition_chain") not in chains:
            ss["composition_chain"] = chains[0]
        chain = st.selectbox("Chain", chains, key="composition_chain")
    comp = cache.shared("recorded_composition", (loaded.key, chain, encoding),
                        lambda: recorded_composition(session, chain, encoding=encoding))
    if not comp.requests:
        st.info("This chain has no requests (no assistant message a model produced).")
        return
    with st.container(key="explorer_composition_box"):
        st.plotly_chart(composition_charts.composition_figure(
            comp, title=f"What fills the context the recording sent ({chain}; pruner's token count)"),
            key="explorer_composition_chart", config=CHART_CONFIG)
    ui.inert(composition_logic.end_sentence(comp) + " Request numbers are the chain's own. What each strategy "
             "would remove from it: the Replay page.")


# -- the Corpus page (a logs folder) -----------------------------------------------------------------------

def corpus_lost_section(frame: pd.DataFrame, strategies) -> None:
    """The terms each strategy's context lacked at the most requests, over the sessions shown."""
    top = lost_logic.top_lost_frame(frame, strategies)
    if top.empty:
        if any(f"{s}_lost" in frame for s in strategies):
            st.caption("No strategy lost a term the replies used in these sessions.")
        return
    st.markdown("**What each strategy lost most often**: the terms the replies used that its context lacked, "
                "at the most requests over these sessions (the Replay page lists every one of a session's)")
    with st.container(key="logs_lost_box"):
        st.dataframe(top, hide_index=True, width="stretch", key="logs_lost",
                     height=min(38 + 35 * len(top), 420),
                     column_config={"strategy": st.column_config.TextColumn("strategy", width=200),
                                    "term": st.column_config.TextColumn("term", width=300),
                                    "lacked at": st.column_config.NumberColumn(
                                        "lacked at", format="localized", width=110,
                                        help="Requests whose context lacked it, summed over the sessions"),
                                    "sessions": st.column_config.NumberColumn("sessions", format="localized",
                                                                              width=100)})
