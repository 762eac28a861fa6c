"""pruner dashboard: inspect pruning and compaction in the browser.

Start it from a checkout with ``streamlit run dashboard/app.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run dashboard/app.py` puts dashboard/ on sys.path; the pages import
# `dashboard.*`, so the repository root must be importable too.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

# A transcript may be crafted to break the app; whatever happens, never show a traceback.
st.set_option("client.showErrorDetails", "none")
st.set_page_config(page_title="pruner", page_icon=":material/content_cut:", layout="wide")

PAGES_DIR = Path(__file__).resolve().parent / "app_pages"
navigation = st.navigation([
    st.Page(PAGES_DIR / "explorer.py", title="Session explorer", icon=":material/timeline:", default=True),
    st.Page(PAGES_DIR / "benchmarks.py", title="Benchmarks", icon=":material/bar_chart:"),
    st.Page(PAGES_DIR / "compaction.py", title="Compaction preview", icon=":material/compress:"),
    st.Page(PAGES_DIR / "corpus.py", title="Corpus", icon=":material/dataset:"),
    st.Page(PAGES_DIR / "guide.py", title="Guide", icon=":material/school:"),
])
navigation.run()
