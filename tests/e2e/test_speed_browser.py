"""Issue 21's speed figures, PRINTED with the machine's load (benchmarks, never asserted):

* the first load of the app (the Start page) in a fresh browser profile;
* stepping one request on the Replay page (→ key until the next request's heading shows), median of 20;
* the 2,000-turn sample's Replay charts after navigation, the server's cache warm;
* the 2,000-turn timeline by link in a fresh tab, the server's cache warm.

Uses the fixtures of ``test_browser.py``. ``uptime``'s load is printed beside each figure: on two cores
shared with other work, a load of 5 roughly doubles every figure. With ``PRUNER_UPDATE_SPEED=1`` the
figures are also written (atomically) to ``sample_sessions/bench/dashboard_speed.json``, with the
command, the date, the machine and its load before, during and after, which the README's generated
table ``dashboard-speed`` shows (``python -m pruner.readme``).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time

import pytest
import streamlit

from pruner.bench import environment
from pruner.bench.workloads import generate
from pruner.files import write_atomic
from tests.support.paths import ROOT
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import TIMELINE_DRAWN, TIMEOUT_MS, VIEWPORT, load_note, no_exception
from tests.e2e.test_replay_browser import STEPPER_READY

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(chromium_path, tmp_path_factory):
    """A server of this module's own: the figures include the server's cold cache, which the worker's
    shared server (``tests/support/dashboard_server.py``) may have warmed for another test."""
    with shared.started(tmp_path_factory.mktemp("streamlit-speed")) as fresh:
        yield fresh

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
#: The Explorer's sections below the timeline are drawn too (a long session draws them one run later).
BELOW_TIMELINE_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(el => el._fullData).length >= 3
    && document.querySelector('[data-testid=stDataFrame]') !== null
    && document.querySelectorAll('[data-testid=stDownloadButton]').length >= 3"""
RESULTS = ROOT / "sample_sessions" / "bench" / "dashboard_speed.json"
COMMAND = "PRUNER_UPDATE_SPEED=1 python -m pytest tests/e2e/test_speed_browser.py -s"
FIGURES: list[str] = []
#: Each figure as the result file records it (name, what, seconds, target, statistic, load).
MEASURED: list[dict] = []


def fresh(browser):
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    return context, tab


def timed_goto(browser, url: str, ready: str, arg=None, *, context=None, then: str | None = None):
    """From navigation until ``ready`` holds, in a new tab: of ``context`` (a browser already used, its HTTP
    cache warm, as a person opens a link) or of a fresh profile (nothing cached: plotly.js is fetched and
    compiled again). With ``then``: the pair (until ``ready``, until ``then`` also holds)."""
    own = context is None
    context = context or browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        start = time.perf_counter()
        tab.goto(url)
        tab.wait_for_function(ready, arg=arg)
        took = time.perf_counter() - start
        if then is not None:
            tab.wait_for_function(then)
            took = (took, time.perf_counter() - start)
        no_exception(tab)
        return took
    finally:
        tab.close()
        if own:
            context.close()


def record(name: str, what: str, seconds: list[float], *, target: float | None, statistic: str = "each") -> None:
    """One figure for the result file, with the load when it was measured."""
    MEASURED.append({"name": name, "what": what, "seconds": [round(t, 3) for t in seconds], "statistic": statistic,
                     "target_s": target, "load": [round(x, 2) for x in os.getloadavg()]})


def chromium_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_results(env: dict, chromium_path: str) -> None:
    """The result file the README's ``dashboard-speed`` table is generated from."""
    results = {"meta": {"environment": environment.finish(env), "browser": chromium_version(chromium_path),
                        "streamlit": streamlit.__version__, "python": platform.python_version()},
               "figures": MEASURED}
    write_atomic(RESULTS, json.dumps(results, indent=2, sort_keys=True) + "\n")


def test_print_first_load_stepping_and_the_2000_turn_sample(browser, app_url, chromium_path):
    env = environment.start(COMMAND)
    # first load: the Start page's two lines and its three ways in
    start_ready = """() => document.querySelector('h1')?.textContent.startsWith('pruner')
        && [...document.querySelectorAll('a')].some(a => a.textContent.includes('Open the Guide'))"""
    loads = [timed_goto(browser, app_url, start_ready) for _ in range(3)]
    record("first_load", "first load of the app (the Start page), fresh profile", loads, target=3.0)
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
    record("stepping", f"stepping one request on the Replay page ({n:,} requests), → key until the next "
           "request's heading", steps, target=0.3, statistic="median")
    FIGURES.append(f"stepping one request ({n:,} requests): median {statistics.median(steps):.2f} s over "
                   f"{len(steps)} steps (min {min(steps):.2f}, max {max(steps):.2f}) ({load_note()})")

    # the 2,000-turn sample's Replay charts: the server cold once, then warm; new tabs of one browser
    # (HTTP cache warm) and a fresh profile (nothing cached)
    used = browser.new_context(viewport=VIEWPORT)
    try:
        cold = timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN, context=used)
        warm = [timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN, context=used) for _ in range(2)]
        profile = timed_goto(browser, f"{app_url}/replay?{LARGE}", REPLAY_CHARTS_DRAWN)
        record("replay_cold", "2,000-turn Replay charts, server cold", [cold], target=None)
        record("replay_warm_tab", "2,000-turn Replay charts, server warm, new tab", warm, target=3.0)
        record("replay_warm_profile", "2,000-turn Replay charts, server warm, fresh profile", [profile], target=3.0)
        FIGURES.append(f"2,000-turn Replay charts: server cold {cold:.1f} s; warm, new tab "
                       f"{', '.join(f'{t:.1f}' for t in warm)} s; warm, fresh profile {profile:.1f} s ({load_note()})")

        # the 2,000-turn timeline by link, the server warm
        messages = len(generate("tool_agent", turns=2000, seed=0).messages)
        link = f"{app_url}/explorer?{LARGE}"
        timed_goto(browser, link, TIMELINE_DRAWN, messages, context=used)  # the server's pruning cache warm
        tabs = [timed_goto(browser, link, TIMELINE_DRAWN, messages, context=used, then=BELOW_TIMELINE_DRAWN)
                for _ in range(3)]
        profiles = [timed_goto(browser, link, TIMELINE_DRAWN, messages, then=BELOW_TIMELINE_DRAWN) for _ in range(2)]
        record("timeline_warm_tab", "2,000-turn timeline by link, server warm, new tab", [t for t, _ in tabs],
               target=2.5)
        record("timeline_warm_profile", "2,000-turn timeline by link, server warm, fresh profile",
               [t for t, _ in profiles], target=2.5)
        record("explorer_below_warm_tab", "…and the Explorer's context charts, table and downloads below it, new tab",
               [b for _, b in tabs], target=None)
        FIGURES.append(f"2,000-turn timeline by link, server warm: new tab {', '.join(f'{t:.1f}' for t, _ in tabs)} s; "
                       f"fresh profile {', '.join(f'{t:.1f}' for t, _ in profiles)} s; the sections below it "
                       f"{', '.join(f'{b:.1f}' for _, b in tabs)} s in a new tab ({load_note()})")
    finally:
        used.close()
    print("\n[speed] " + "\n[speed] ".join(FIGURES))
    assert len(FIGURES) == 4 and all(f["seconds"] for f in MEASURED)
    if os.environ.get("PRUNER_UPDATE_SPEED") == "1":
        write_results(env, chromium_path)
        print(f"[speed] written to {RESULTS.relative_to(ROOT)}")
