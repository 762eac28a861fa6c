"""The Guide as a presenter uses it: one 1366 x 768 screen per step, stepped with → and ←.

Each step's content (heading, metrics, chart and the step's text) is drawn in one box
(``.st-key-guide_step_box``); at every step, reached with the keyboard, the box must lie wholly inside the
window with the page not scrolled, and its chart must be drawn inside it. On the default demo the
compaction step must shrink the context it compacts (its metric reads "before → after").

Uses the fixtures of ``test_browser.py`` (the Streamlit server, Debian's Chromium through Playwright).
"""

from __future__ import annotations

import re

import pytest

from tests.e2e import test_browser as shared
from tests.e2e.test_browser import (CLIPPED_METRICS, KEYS_LISTENING, TIMELINE_DRAWN, VIEWPORT, no_exception,
                                    save_screenshot, wait_for_text)

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

STEPS = ("1. As it arrives", "2. Pass 1: expire", "3. Pass 2: deduplicate", "4. Pass 3: restore", "5. Compaction")
#: The step's box and its chart, as drawn now: their rectangles, and whether the page is scrolled.
STEP_BOX = """() => {
    const box = document.querySelector('.st-key-guide_step_box');
    if (!box) return null;
    const rect = el => { const r = el.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
    const plot = box.querySelector('.js-plotly-plot .main-svg');
    return {box: rect(box), plot: plot ? rect(plot) : null, height: window.innerHeight, width: window.innerWidth};
}"""


#: Whether the window or a pane the reader sees is scrolled (a focused checkbox scrolls its 1-pixel wrapper: not
#: a scroll anyone sees, so boxes under 50 px high are left out).
SCROLLED = """() => window.scrollY > 0 || [...document.querySelectorAll('*')].some(el =>
    el.scrollTop > 0 && el.clientHeight >= 50 && el.scrollHeight > el.clientHeight)"""


def assert_one_screen(page, step: str) -> dict:
    page.wait_for_function("""() => { const p = document.querySelector('.st-key-guide_step_box .js-plotly-plot');
        return p && p._fullData && p._fullData.length > 0; }""")
    page.wait_for_timeout(800)  # the chart and the text settle into their columns
    measured = page.evaluate(STEP_BOX)
    box, plot = measured["box"], measured["plot"]
    print(f"{step}: box {box['top']:.0f}-{box['bottom']:.0f} px of {measured['height']} "
          f"(chart {plot['top']:.0f}-{plot['bottom']:.0f})")
    assert not page.evaluate(SCROLLED), f"{step}: the page was scrolled"
    assert box["top"] >= 0 and box["bottom"] <= measured["height"], f"{step}: {box} is not inside one screen"
    assert box["right"] <= measured["width"], f"{step}: {box} is wider than the window"
    assert plot is not None and box["top"] <= plot["top"] and plot["bottom"] <= box["bottom"], (step, plot, box)
    assert page.evaluate(CLIPPED_METRICS) == [], step
    no_exception(page)
    return measured


@pytest.mark.parametrize("source", ["", "?sample=pi_session.jsonl", "?sample=workload-tool_agent-50.jsonl"])
def test_every_guide_step_fits_one_1366x768_screen_stepping_with_the_keyboard(page, app_url, source):
    assert page.viewport_size == VIEWPORT
    page.goto(f"{app_url}/guide{source}")
    wait_for_text(page, "The guide runs on the session open in the explorer")
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    page.wait_for_function(KEYS_LISTENING)
    for k, step in enumerate(STEPS):
        if k:
            page.locator("body").press("ArrowRight")
        page.get_by_role("heading", name=step, exact=True).wait_for()
        page.wait_for_function("n => location.search.includes('step=' + n)", arg=k + 1)
        assert_one_screen(page, step)
        if not source:
            save_screenshot(page, f"guide-step-{k + 1}")
    page.locator("body").press("ArrowLeft")
    page.get_by_role("heading", name=STEPS[-2], exact=True).wait_for()
    assert_one_screen(page, STEPS[-2])


def test_on_the_default_demo_the_compaction_step_shrinks_the_context(page, app_url):
    page.goto(f"{app_url}/guide?step=5")
    page.get_by_role("heading", name="5. Compaction", exact=True).wait_for()
    assert_one_screen(page, "5. Compaction")
    value = page.locator("[data-testid=stMetric]", has_text="Context compacted") \
        .locator("[data-testid=stMetricValue]").inner_text()
    before, after = (int(v.replace(",", "")) for v in re.findall(r"[\d,]+", value))
    print(f"compaction step on the default demo: {before:,} → {after:,} tokens")
    assert after < before
    wait_for_text(page, "Why compaction breaks the prompt cache")
    wait_for_text(page, "The demo alone is too short to compact")
    legend = [t for lg in page.evaluate(shared.LEGEND_TEXTS) for t in lg]
    assert any(t.startswith("summarised (") for t in legend), legend


#: What shows a focus frame on the element that has the focus now (outline or box shadow), if anything.
FOCUS_FRAME = """() => { const el = document.activeElement; if (!el || el === document.body) return null;
    const s = getComputedStyle(el);
    const framed = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    return framed ? `${el.tagName} outline ${s.outlineStyle} ${s.outlineWidth}, shadow ${s.boxShadow}` : null; }"""


def test_presenter_mode_shows_only_the_step_steps_with_the_keyboard_and_draws_no_focus_frame(page, app_url):
    page.goto(f"{app_url}/guide")
    page.get_by_role("heading", name=STEPS[0], exact=True).wait_for()
    page.wait_for_function(KEYS_LISTENING)
    page.get_by_text("Present", exact=True).click()
    page.wait_for_function("() => location.search.includes('present=1')")
    page.get_by_test_id("stSidebar").wait_for(state="hidden")
    assert not page.get_by_role("heading", name="Guide: how pruning works, step by step").is_visible()
    for k, step in enumerate(STEPS[1:], start=2):
        page.keyboard.press("ArrowRight")  # the focus is where the click left it: on the toggle
        page.get_by_role("heading", name=step, exact=True).wait_for()
        page.wait_for_function("n => location.search.includes('step=' + n)", arg=k)
        assert_one_screen(page, step)
        assert page.evaluate(FOCUS_FRAME) is None
    save_screenshot(page, "guide-presenter")
    # the link reopens presenter mode on the same step
    page.reload()
    page.get_by_role("heading", name=STEPS[-1], exact=True).wait_for()
    page.get_by_test_id("stSidebar").wait_for(state="hidden")
