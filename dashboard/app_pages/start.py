"""Start: what the app does, in two lines, and the three ways in (your own file, a sample, the Guide).

Nothing here parses or prunes until asked, so the first page arrives quickly; a link that names a
session (``/?sample=…``, ``/?upload=…``) is passed on to the Session explorer, as before this page existed.
"""

from __future__ import annotations

import streamlit as st

from dashboard import session_state, ui
from dashboard.logic import explorer as explorer_logic
from dashboard.logic import start as logic

EXPLORER = "app_pages/explorer.py"
ss = st.session_state


def _open_upload() -> None:
    uploaded = ss.get("start_upload")
    if uploaded is not None and explorer_logic.open_upload(uploaded.name, uploaded.getvalue(), format=None):
        ss["start_opened"] = True


def render() -> None:
    if logic.passes_on(st.query_params):  # an old-style link to the app's root: the explorer opens it
        st.switch_page(EXPLORER, query_params=st.query_params.to_dict())
    st.title("pruner: see what an LLM agent's context really holds, what it costs, and what to drop")
    st.markdown("Open a transcript and see every message the model was sent, which ones pruning would leave "
                "out and why, what a compaction keeps, and what each request would cost under each strategy "
                "— all on this machine; nothing is sent anywhere.")
    one, two, three = st.columns(3, border=True)
    with one:
        st.subheader("Open your own")
        st.file_uploader("A transcript file (Claude Code, Codex, Pi, OpenAI or Anthropic JSON, …)",
                         key="start_upload", on_change=_open_upload,
                         help="Read in this server's memory only; the format is detected.")
        st.caption(ui.upload_limit_sentence())
        st.page_link("app_pages/corpus.py", label="Or a folder that `pruner logs` or `pruner batch` wrote",
                     icon=":material/folder_open:")
    with two:
        st.subheader("Explore a sample")
        for label, params in logic.SAMPLES:
            st.page_link(EXPLORER, label=label, query_params=params, icon=":material/play_arrow:")
    with three:
        st.subheader("Learn how it works")
        st.markdown("Five steps through one session: as it arrives, each pruning pass, then compaction.")
        st.page_link("app_pages/guide.py", label="Open the Guide", icon=":material/school:")
    problem = session_state.load_error()
    if problem is not None and ss.get("start_upload") is not None:
        st.error(problem.text(still_loaded=False), icon=":material/error:")
    if ss.pop("start_opened", False):
        st.switch_page(EXPLORER)


ui.guarded(render)
