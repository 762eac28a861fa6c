"""Issue 21's speed figures, PRINTED with the machine's load (benchmarks, never asserted):

* the first load of the app (the Start page) in a fresh browser profile;
* stepping one request on the Replay page (→ key until the next request's heading shows), median of 20;
* the 2,000-turn sample's Replay charts after navigation, the server's cache warm;
* the 2,000-turn timeline by link in a fresh tab, the server's cache warm.

Uses the fixtures of ``test_browser.py``. ``uptime``'s load is printed beside each figure: on two cores
shared with other work, a load of 5 roughly doubles every figure.
"""

from __future__ import annotations

import statistics
import time

import pytest

from pruner.bench.workloads import generate
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import TIMELINE_DRAWN, TIMEOUT_MS, VIEWPORT, load_note, no_exception
from tests.e2e.test_replay_browser import STEPPER_READY

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

LARGE = "workload=tool_agent&turns=2000&seed=0"
STEPPED = "workload=tool_agent&turns=200&seed=0"
#: The Replay page's overview and heat strip are drawn with every strategy's trace.
REPLAY_CHARTS_DRAWN = """() => {
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    const overview = plots.some(el => (el._fullData || []).filter(t => t.type === 'scatter').length >= 8
        && el.querySelectorAll('.scatterlayer .trace path').length > 0);
    const strip = plots.some(el => (el._fullData || []).some(t => t.type === 'heatmap')
        && el.querySelectorAll('.heatmaplayer image, .hm image, image').length > 0);
    return overview && strip;
}"""
FIGURES: list[str] = []


def fresh(browser):
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    return context, tab


def timed_goto(browser, url: str, ready: str, arg=None, *, context=None) -> float:
    """From navigation until ``ready`` holds, in a new tab: of ``context`` (a browser already used, its HTTP
    cache warm, as a person opens a link) or of a fresh profile (nothing cached: plotly.js is fetched and
    compiled again)."""
    own = context is None
    context = context or browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        start = time.perf_counter()
        tab.goto(url)
        tab.wait_for_function(ready, arg=arg)
        took = time.perf_counter() - start
        no_exception(tab)
        return took
    finally:
        tab.close()
        if own:
            context.close()


def test_print_first_load_stepping_and_the_2000_turn_sample(browser, app_url):
    # first load: the Start page's two lines and its three ways in
    start_ready = """() => document.querySelector('h1')?.textContent.startsWith('pruner')
        && [...document.querySelectorAll('a')].some(a => a.textContent.includes('Open the Guide'))"""
    loads = [timed_goto(browser, app_url, start_ready) for _ in range(3)]
    FIGURES.append(f"first load (Start page, fresh profile): {', '.join(f'{t:.2f}' for t in loads)} s "
                   f"({load_note()})")

    # stepping: 20 presses of → on a 406-request session, each until the next request's heading shows
    n = len([m for m in generate("tool_agent", turns=200, seed=0).messages if m.role == "assistant"])
    context, tab = fresh(browser)
    try:
        tab.goto(f"{app_url}/replay?{STEPPED}&strategy=cache_aware_prune&request=100")
        tab.wait_for_function(REPLAY_CHARTS_DRAWN)
        tab.get_by_role("heading", name=f"Request 100 of {n:,}").first.wait_for()
        tab.wait_for_function(STEPPER_READY)
        tab.locator("h1").first.click()
        steps = []
        for k in range(101, 121):
            start = time.perf_counter()
            tab.keyboard.press("ArrowRight")
            tab.get_by_role("heading", name=f"Request {k} of {n:,}").first.wait_for()
            steps.append(time.perf_counter() - start)
        no_exception(tab)
    finally:
        context.close()
    FIGURES.append(f"stepping one request ({n:,} requests): median {statistics.median(steps):.2f} s over "
                   f"{len(steps)} steps (min {min(steps):.2f}, max {max(steps):.2f}) ({load_note()})")

    # the 2,000-turn sample's Replay charts: the server cold once, then warm; new tabs of one browser
    # (HTTP cache warm) and a fresh profile (nothing cached)
    used = browser.new_context(viewport=VIEWPORT)
    try:
        cold = timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN, context=used)
        warm = [timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN, context=used) for _ in range(2)]
        profile = timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN)
        FIGURES.append(f"2,000-turn Replay charts: server cold {cold:.1f} s; warm, new tab "
                       f"{', '.join(f'{t:.1f}' for t in warm)} s; warm, fresh profile {profile:.1f} s ({load_note()})")

        # the 2,000-turn timeline by link, the server warm
        messages = len(generate("tool_agent", turns=2000, seed=0).messages)
        link = f"{app_url}/explorer?{LARGE}"
        timed_goto(browser, link, TIMELINE_DRAWN, messages, context=used)  # the server's pruning cache warm
        tabs = [timed_goto(browser, link, TIMELINE_DRAWN, messages, context=used) for _ in range(3)]
        profiles = [timed_goto(browser, link, TIMELINE_DRAWN, messages) for _ in range(2)]
        FIGURES.append(f"2,000-turn timeline by link, server warm: new tab {', '.join(f'{t:.1f}' for t in tabs)} s; "
                       f"fresh profile {', '.join(f'{t:.1f}' for t in profiles)} s ({load_note()})")
    finally:
        used.close()
    print("\n[speed] " + "\n[speed] ".join(FIGURES))
    assert len(FIGURES) == 4
