"""The benchmarks page's data: the committed results file and runs made from the page."""

from __future__ import annotations

import streamlit as st

from pruner.bench import run as bench_run

from ..loading import SAMPLES_DIR

BENCH_RESULTS = SAMPLES_DIR / "bench" / "results.json"


@st.cache_data(show_spinner=False)
def _committed(path: str, modified: float):
    return bench_run.load_results(path)


def committed_results():
    """The committed results file (re-read when it changes), or ``None`` when there is none."""
    if not BENCH_RESULTS.exists():
        return None
    return _committed(str(BENCH_RESULTS), BENCH_RESULTS.stat().st_mtime)
