"""The Corpus page in a real browser (Chromium through Playwright) on a batch folder made by the test.

Uses the fixtures of ``test_browser.py`` (the Streamlit server, the browser, a page).
"""

from __future__ import annotations

import shutil
import urllib.parse

import pytest

from pruner import STATUSES

from tests.e2e.test_browser import (OUTSIDE_REQUESTS, SAMPLES, app_url, browser,  # noqa: F401 - fixtures
                                    chromium_path, page, save_screenshot, server, wait_for_text)

pytestmark = pytest.mark.e2e

PLOT_TITLED = """(title) => [...document.querySelectorAll('.js-plotly-plot')].some(el =>
    [...el.querySelectorAll('.gtitle')].some(t => t.textContent === title) &&
    el.querySelectorAll('.barlayer .point path').length > 0)"""


@pytest.fixture(scope="module")
def batch_folder(tmp_path_factory):
    from pruner.batch import run_batch

    src = tmp_path_factory.mktemp("corpus-in")
    for name in ("native_demo.jsonl", "openai_chat.json", "pi_session.jsonl", "swe_agent.traj",
                 "workload-tool_agent-50.jsonl", "workload-rag_assistant-50.jsonl", "workload-plain_chat-50.jsonl"):
        shutil.copy(SAMPLES / name, src / name)
    (src / "broken.json").write_text("[1, 2", encoding="utf-8")
    out = tmp_path_factory.mktemp("corpus-out") / "out"
    summary = run_batch([str(src)], out, workers=1)
    assert summary.processed == 7 and summary.failed == 1
    return out


def test_corpus_page_charts_a_batch_and_opens_a_session_in_the_explorer(page, app_url, server,  # noqa: F811
                                                                         batch_folder):
    from dashboard.logic import corpus

    shown = corpus.read_corpus(batch_folder)
    most, _ = corpus.extremes(shown.sessions)
    page.goto(f"{app_url}/corpus?corpus={urllib.parse.quote(str(batch_folder))}")
    page.wait_for_function(PLOT_TITLED, arg="Sessions that gain most")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 6")
    metrics = page.locator("[data-testid=stMetricValue]").all_inner_texts()
    assert "7" in metrics and "1" in metrics  # sessions, failed
    page.locator("[data-testid=stDataFrame]").first.wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    page.wait_for_timeout(1000)
    save_screenshot(page, "corpus", height=1500)

    plot = page.locator(".js-plotly-plot").filter(has=page.locator(".gtitle", has_text="Sessions that gain most"))
    plot.locator(".barlayer .point path").first.click(force=True)
    page.get_by_role("heading", name="Session explorer").first.wait_for()
    top = most.iloc[0]
    wait_for_text(page, f"{top['file']} · corpus")
    page.locator(".js-plotly-plot").first.wait_for()
    statuses = " · ".join(f"{s} {int(top[s]):,}" for s in STATUSES)
    page.get_by_text(f"Messages per status: {statuses}").first.wait_for()  # pruned as in the batch
    assert page.locator("[data-testid=stException]").count() == 0
    assert OUTSIDE_REQUESTS == [] and server.outbound_attempts() == []  # nothing left the machine


def test_corpus_page_says_what_to_do_with_a_folder_that_is_not_a_batch(page, app_url, tmp_path):  # noqa: F811
    page.goto(f"{app_url}/corpus")
    page.get_by_role("heading", name="Corpus").first.wait_for()
    page.get_by_label("Batch folder", exact=True).fill(str(tmp_path))
    page.get_by_role("button", name="Open").click()
    alert = page.locator("[data-testid=stAlertContentError]").first
    alert.wait_for(state="visible")
    assert "not a batch folder" in alert.inner_text() and "pruner batch" in alert.inner_text()
    assert "Traceback" not in page.content()
