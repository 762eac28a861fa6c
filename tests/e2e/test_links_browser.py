"""Every page's view lives in its URL (issue 21): a reload, or the URL opened in a fresh browser
context (nothing shared but the server), shows the same session and the same choices; a URL naming an
upload the server no longer holds says so and shows no other session.

Uses the fixtures of ``test_browser.py`` (the Streamlit server, Debian's Chromium through Playwright).
"""

from __future__ import annotations

import urllib.parse

import pytest

from pruner import load_session
from pruner.replay import replay
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import (SAMPLES, TIMELINE_DRAWN, TIMEOUT_MS, VIEWPORT, no_exception, save_screenshot,
                                    upload, wait_for_idle)
from tests.e2e.test_corpus import batch_folder  # noqa: F401 - a fixture
from tests.e2e.test_replay_browser import STEPPER_READY

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

SAMPLE = SAMPLES / "pi_session.jsonl"
REPLAY_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')].some(el =>
    (el._fullData || []).some(t => t.legendgroup === 'as_recorded'))"""


def url_has(tab, *parts: str) -> None:
    tab.wait_for_function("""parts => { const q = [...new URLSearchParams(location.search)]
        .map(([k, v]) => `${k}=${v}`).join('&'); return parts.every(p => q.includes(p)); }""", arg=list(parts))


def in_fresh_context(browser, url: str, check) -> None:
    """Open ``url`` in a new browser context (no cookies, no storage, a new Streamlit session) and run ``check``."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(url)
        check(tab)
        no_exception(tab)
    finally:
        context.close()


def reload_and_fresh(page, browser, check) -> None:
    """The same view after a reload, and at the same URL in a fresh browser context."""
    url = page.url
    page.reload()
    check(page)
    no_exception(page)
    in_fresh_context(browser, url, check)


@pytest.fixture(scope="module")
def uploaded(browser, app_url) -> str:
    """The sample uploaded once through the explorer: the digest the server holds it under."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(f"{app_url}/explorer")
        tab.wait_for_function(TIMELINE_DRAWN, arg=25)
        upload(tab, SAMPLE)
        tab.get_by_text(f"{SAMPLE.name} · upload").first.wait_for()
        url_has(tab, "upload=")
        wait_for_idle(tab)  # the number box is redrawn after the label: until the run ends it shows the demo's
        assert inspected_or_none(tab) is None  # a new upload starts with nothing selected, not the demo's message
        return urllib.parse.parse_qs(urllib.parse.urlsplit(tab.url).query)["upload"][0]
    finally:
        context.close()


def test_the_explorer_keeps_the_upload_and_the_inspected_message(page, browser, app_url, uploaded):
    n_messages = len(load_session(SAMPLE).messages)
    page.goto(f"{app_url}/explorer?upload={uploaded}")
    page.wait_for_function(TIMELINE_DRAWN, arg=n_messages)
    number = page.get_by_label("Message # (position in the session)")
    number.fill("7")
    number.press("Enter")
    url_has(page, "msg=7")

    def explorer_view(tab):
        tab.get_by_text(f"{SAMPLE.name} · upload").first.wait_for()
        tab.wait_for_function(TIMELINE_DRAWN, arg=n_messages)
        tab.wait_for_function("() => document.querySelector('input[aria-label=\"Message # (position in the "
                              "session)\"]')?.value === '7'")
    reload_and_fresh(page, browser, explorer_view)


def test_the_replay_page_keeps_the_strategy_and_the_request(page, browser, app_url, uploaded):
    expected = replay(load_session(SAMPLE))
    n = len(expected.requests)
    page.goto(f"{app_url}/replay?upload={uploaded}&strategy=compact")
    page.wait_for_function(REPLAY_DRAWN)
    page.get_by_role("heading", name=f"Request 0 of {n:,}").first.wait_for()
    page.wait_for_function(STEPPER_READY)
    page.locator("h1").first.click()
    page.wait_for_function(shared.KEYS_LISTENING)
    for k in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        page.get_by_role("heading", name=f"Request {k} of {n:,}").first.wait_for()
    url_has(page, "request=3", "strategy=compact", f"upload={uploaded}")

    def replay_view(tab):
        tab.wait_for_function(REPLAY_DRAWN)
        tab.get_by_role("heading", name=f"Request 3 of {n:,} (turn {expected.requests[3].turn:,}) under compact"
                        ).first.wait_for()
        tab.get_by_text(f"Session: {SAMPLE.name}").first.wait_for()
    reload_and_fresh(page, browser, replay_view)


def test_the_compaction_page_keeps_its_settings(page, browser, app_url, uploaded):
    page.goto(f"{app_url}/compaction?upload={uploaded}")
    page.get_by_text("Where the cut falls").wait_for()
    keep = page.get_by_role("spinbutton", name="Keep-recent tokens")
    keep.fill("1500")
    page.get_by_role("button", name="Apply settings").click()
    url_has(page, "keep=1500", f"upload={uploaded}")

    def compaction_view(tab):
        tab.get_by_text("Where the cut falls").wait_for()
        tab.wait_for_function("() => document.querySelector('input[aria-label=\"Keep-recent tokens\"]')?.value "
                              "=== '1500'")
        tab.get_by_text(f"Session: {SAMPLE.name}").first.wait_for()
    reload_and_fresh(page, browser, compaction_view)


def test_the_guide_keeps_its_step(page, browser, app_url, uploaded):
    page.goto(f"{app_url}/guide?upload={uploaded}")
    page.get_by_role("heading", name="1. As it arrives").wait_for()
    page.wait_for_function(TIMELINE_DRAWN, arg=10)
    page.wait_for_function(shared.KEYS_LISTENING)
    page.locator("body").press("ArrowRight")
    page.get_by_role("heading", name="2. Pass 1: expire").wait_for()
    page.locator("body").press("ArrowRight")
    page.get_by_role("heading", name="3. Pass 2: deduplicate").wait_for()
    url_has(page, "step=3")

    def guide_view(tab):
        tab.get_by_role("heading", name="3. Pass 2: deduplicate").wait_for()
        tab.get_by_text(f"The guide runs on the session open in the explorer: {SAMPLE.name}").first.wait_for()
    reload_and_fresh(page, browser, guide_view)


def test_the_corpus_page_keeps_its_folder_and_filters(page, browser, app_url, batch_folder):  # noqa: F811
    page.goto(f"{app_url}/corpus")
    page.get_by_label("Batch folder", exact=True).fill(str(batch_folder))
    page.get_by_role("button", name="Open").click()
    page.get_by_text("rows match").first.wait_for()
    url_has(page, f"corpus={batch_folder}")
    shared.choose(page, "Show", "errors only")
    page.get_by_text("1 of 8 rows match").first.wait_for()
    url_has(page, "show=errors only")

    def corpus_view(tab):
        tab.get_by_text("1 of 8 rows match").first.wait_for()
    reload_and_fresh(page, browser, corpus_view)


def inspected_or_none(page) -> int | None:
    value = page.get_by_label("Message # (position in the session)").input_value()
    return int(value) if value else None


@pytest.mark.parametrize("path", ["explorer", "replay", "compaction", "guide"])
def test_a_url_naming_an_upload_the_server_no_longer_holds_says_so_and_shows_no_other_session(browser, app_url,
                                                                                              path):
    def check(tab):
        tab.get_by_text("no longer holds", exact=False).first.wait_for()
        tab.wait_for_timeout(500)
        text = tab.locator("[data-testid=stMain]").inner_text()
        assert "native_demo" not in text and "Request 0 of" not in text
        assert "0" * 64 in tab.url  # the URL still names what could not be opened
    in_fresh_context(browser, f"{app_url}/{path}?upload={'0' * 64}", check)


def test_the_front_door_says_what_the_app_does_and_offers_three_ways_in(page, app_url):
    page.goto(app_url)
    page.get_by_role("heading", name="pruner: see what an LLM agent's context really holds", exact=False).wait_for()
    for way in ("Open your own", "Explore a sample", "Learn how it works"):
        page.get_by_role("heading", name=way).wait_for()
    page.get_by_role("link", name="Open the Guide").wait_for()
    # Regression: the sample links were cut to one line at 1366 px ("A short demo (25 messages, every kin")
    from tests.e2e.test_numbers_browser import CUT_LINKS
    assert page.evaluate(CUT_LINKS) == []
    save_screenshot(page, "start")
    page.get_by_role("link", name="A short demo (25 messages, every kind of removal)").click()
    page.get_by_role("heading", name="Session explorer").first.wait_for()
    page.wait_for_function(TIMELINE_DRAWN, arg=25)
    page.get_by_text("native_demo.jsonl · sample").first.wait_for()
    no_exception(page)
    # a file given on the front door opens in the explorer, nothing selected yet
    page.goto(app_url)
    page.locator("input[type=file]").set_input_files(str(SAMPLE))
    page.get_by_text(f"{SAMPLE.name} · upload").first.wait_for()
    wait_for_idle(page)
    assert inspected_or_none(page) is None
    no_exception(page)


def test_a_second_sample_opened_from_the_start_page_replaces_the_first(page, app_url):
    # Found by hand: back on Start (by the sidebar, the app not reloaded), a second sample's link opened the
    # explorer on the first sample still.
    page.goto(app_url)
    page.get_by_role("link", name="A short demo (25 messages, every kind of removal)").click()
    page.get_by_text("native_demo.jsonl · sample").first.wait_for()
    page.get_by_role("link", name="Start").first.click()
    page.get_by_role("heading", name="Explore a sample").wait_for()
    page.get_by_role("link", name="A Pi coding-agent session that compacted").click()
    page.get_by_text("pi_session.jsonl · sample").first.wait_for()
    assert "sample=pi_session.jsonl" in page.url
    assert page.get_by_text("native_demo.jsonl · sample").count() == 0
    no_exception(page)
