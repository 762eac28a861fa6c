"""pruner dashboard: inspect pruning and compaction in the browser.

Start it with ``pruner dashboard`` (any install with the dashboard extra: the wheel ships this folder as
``pruner/_app/dashboard/``, beside the samples), or from a checkout with ``streamlit run dashboard/app.py``.
Each page is one file in ``app_pages/`` (with its logic in ``logic/``) and one line in ``PAGES`` below
(the contract: ``dashboard/pages.py``); CONTRIBUTING.md says how to add one.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run dashboard/app.py` puts dashboard/ on sys.path; the pages import
# `dashboard.*`, so the folder above it must be importable too: the repository root in a checkout,
# pruner/_app (which holds only dashboard/ and sample_sessions/) in an installed wheel.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import early_keys  # noqa: E402
from dashboard.pages import registered_pages  # noqa: E402

PAGES_DIR = Path(__file__).resolve().parent / "app_pages"

#: (file in app_pages/ without .py, title, Material icon name): one line per page, the first is the default.
PAGES = (
    ("start", "Start", "home"),
    ("explorer", "Session explorer", "timeline"),
    ("replay", "Replay and cost", "payments"),
    ("compaction", "Compaction preview", "compress"),
    ("corpus", "Corpus", "dataset"),
    ("guide", "Guide", "school"),
    ("benchmarks", "Benchmarks", "bar_chart"),
)

# A transcript may be crafted to break the app; whatever happens, never show a traceback.
st.set_option("client.showErrorDetails", "none")
# An emoji icon becomes an inline image; a ":material/…:" page icon would be fetched from
# fonts.gstatic.com, and nothing may leave the machine.
st.set_page_config(page_title="pruner", page_icon="✂️", layout="wide")

# Less empty space above each page's title, so the first chart fits on a 768-pixel-high screen.
# A click on blank space (to use the arrow keys) focuses the main pane: no outline for a mouse focus,
# the browser's own for keyboard focus.
st.html("<style>[data-testid='stMainBlockContainer'] { padding-top: 2.5rem; }"
        "[data-testid='stMain']:focus:not(:focus-visible), [data-testid='stMainBlockContainer']:focus:not("
        ":focus-visible), section:focus:not(:focus-visible) { outline: none; }"
        # a link in a page (the Start page's samples) wraps: on one line it was cut at 1366 px
        "[data-testid='stMain'] [data-testid='stPageLink'] :is(span, div, p) { white-space: normal; "
        "overflow: visible; text-overflow: clip; }</style>")

# Before any page draws: a ← / → pressed before a page's stepper buttons are mounted is kept.
early_keys.keep_early_presses()

navigation = st.navigation([
    st.Page(PAGES_DIR / f"{page.name}.py", title=page.title, icon=f":material/{page.icon}:", url_path=page.name,
            default=i == 0)
    for i, page in enumerate(registered_pages(PAGES))
])
navigation.run()
