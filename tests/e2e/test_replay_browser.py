"""The Replay page in a real browser: step with the keyboard, see the exact messages, the charts, the events.

Reuses the browser and the running app of ``tests/e2e/test_browser.py`` (Debian's
Chromium through Playwright against ``streamlit run``; skipped without Chromium
unless ``CI`` is set).
"""

from __future__ import annotations

import pytest

from pruner import load_session
from pruner.bench.workloads import generate
from pruner.replay import replay
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import KEYS_LISTENING, SAMPLES, save_screenshot

# The browser, the running app and a fresh tab: the fixtures of test_browser.py, whatever they need.
for _name, _value in vars(shared).items():
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

#: The Replay page has drawn its overview (context and cost, one legend: a trace per strategy) and the
#: cached-share heat strip (a row per strategy).
CHARTS_DRAWN = """(names) => {
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    const overview = plots.some(el => names.every(n => (el._fullData || []).some(t => t.legendgroup === n)));
    const strip = plots.some(el => (el._fullData || []).some(t => t.type === 'heatmap'
        && names.every(n => (t.y || []).includes(n))));
    return overview && strip;
}"""
HEADING = "Request {k} of {n} (turn {turn}) under {strategy}"
#: The stepper can take a key: its buttons are mounted (Streamlit registers a button's shortcut only then,
#: about a second after the rest of the first run is drawn, the button's code being fetched lazily) and
#: no run is drawing (no element shown stale).
STEPPER_READY = """() => !!document.querySelector('.st-key-replay_next button')
    && !!document.querySelector('.st-key-replay_prev button')
    && !document.querySelector('[data-stale=true]')"""


def wait_for_stepper(tab) -> None:
    tab.wait_for_function(STEPPER_READY)


def heading(tab, k: int, n: int, turn: int, strategy: str):
    return tab.get_by_role("heading", name=HEADING.format(k=k, n=n, turn=turn, strategy=strategy))


def test_replay_page_steps_with_the_keyboard_and_shows_exact_messages_charts_and_events(page, app_url):
    sample = "pi_session.jsonl"
    session = load_session(SAMPLES / sample)
    expected = replay(session)
    n = len(expected.requests)
    strategy = "as_recorded"
    page.goto(f"{app_url}/replay?sample={sample}&strategy={strategy}")
    page.wait_for_function(CHARTS_DRAWN, arg=list(expected.runs))
    heading(page, 0, n, expected.requests[0].turn, strategy).wait_for()
    wait_for_stepper(page)

    # ← / → step through the requests from anywhere on the page.
    page.locator("h1").first.click()
    page.wait_for_function(KEYS_LISTENING)
    for k in range(1, 6):
        page.keyboard.press("ArrowRight")
        heading(page, k, n, expected.requests[k].turn, strategy).wait_for()
    page.keyboard.press("ArrowLeft")
    heading(page, 4, n, expected.requests[4].turn, strategy).wait_for()
    page.keyboard.press("ArrowRight")
    heading(page, 5, n, expected.requests[5].turn, strategy).wait_for()

    # The exact messages of request 5: the recorded compaction's summary, marked as what it is. Once the
    # step's run has finished: while it draws, request 4's messages still stand (stale) beside request 5's.
    wait_for_stepper(page)
    sent = expected.context(strategy, 5)
    summary = next(m for m in sent if m.role == "summary")
    page.get_by_text(f"#0 · summary · {summary.id} · [summary recorded in the session]").wait_for()
    # the heading arrives before the code blocks of the same rerun: wait for the newest message's text
    page.wait_for_function("""want => [...document.querySelectorAll('[data-testid=stCode]')]
        .some(el => el.innerText.includes(want))""", arg=sent[-1].content.strip()[:60])
    codes = page.locator("[data-testid=stCode]").all_inner_texts()
    for m in sent[-3:]:
        assert any(m.content.strip()[:60] in text for text in codes), m.id

    # The charts: context per request with the window line, cumulative dollars, cached share; markers
    # where a strategy compacted (as_recorded follows the session's recorded compaction).
    traces = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].map(el =>
        (el._fullData || []).map(t => t.name))""")
    assert any(any(name.startswith("as_recorded: compact") for name in names) for names in traces)
    # one legend for both charts (the cost-against-recall chart names its points, without a legend)
    legends = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .filter(el => (el._fullLayout || {}).showlegend).map(el => (el._fullData || []).map(t => t.name))""")
    assert sum(any(name == "full" for name in names) for names in legends) == 1
    shapes = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].map(el =>
        ((el._fullLayout || {}).annotations || []).map(a => a.text))""")
    assert any(any(text.startswith("context window") for text in texts) for texts in shapes)

    # The events table and the calibration against the recorded bill.
    page.get_by_role("heading", name="Every prune, compaction, truncation and clearing").wait_for()
    assert page.locator("[data-testid=stDataFrame]").count() >= 3  # totals, the context, the events
    page.get_by_text("pruner's cache model", exact=False).first.wait_for()  # the verdict on top, its figures first
    page.get_by_text("Visibility:", exact=False).first.wait_for()  # the visibility line under it
    # the calibration is the method's, behind the verdict's expander (the CLI's --explain)
    page.get_by_text("How this answer is reached", exact=False).first.click()
    page.get_by_text("billed (recorded usage, each request at its own model's list prices)").first.wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    assert "Traceback" not in page.content()
    page.wait_for_timeout(1500)
    save_screenshot(page, "replay-pi-sample", height=2400)


def test_replay_page_on_a_generated_workload_draws_every_strategy(page, app_url):
    """The README's screenshot: a 200-turn tool_agent session, stepped to a request where
    cache_aware_prune has left new duplicates out."""
    names = ["full", "truncate", "prune_every_request", "cache_aware_prune", "compact", "prune_then_compact",
             "clear_tool_uses", "as_recorded"]
    requests = sum(1 for m in generate("tool_agent", turns=200, seed=0).messages if m.role == "assistant")
    page.goto(f"{app_url}/replay?workload=tool_agent&turns=200&seed=0&strategy=cache_aware_prune&request=300")
    page.wait_for_function(CHARTS_DRAWN, arg=names)
    page.get_by_role("heading", name=f"Request 300 of {requests:,}").first.wait_for()
    wait_for_stepper(page)
    page.keyboard.press("ArrowRight")
    page.get_by_role("heading", name=f"Request 301 of {requests:,}").first.wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    page.wait_for_timeout(1500)
    save_screenshot(page, "replay", height=2000)


def test_an_arrow_pressed_as_soon_as_the_first_request_shows_is_not_lost(page, app_url):
    """Regression: the heading "Request 0 of n" shows before the stepper's buttons are mounted, and a →
    pressed then went nowhere (the page never stepped). It must step, once.

    The press waits for the app's key listener (dashboard/early_keys.py), whose code the browser fetches
    with the page's first elements: in CI the heading once stood before it listened, and that press was
    lost (the listener was then drawn by the Replay page itself, after its title)."""
    sample = "pi_session.jsonl"
    expected = replay(load_session(SAMPLES / sample))
    n, strategy = len(expected.requests), "as_recorded"
    page.goto(f"{app_url}/replay?sample={sample}&strategy={strategy}")
    heading(page, 0, n, expected.requests[0].turn, strategy).wait_for()
    page.wait_for_function(KEYS_LISTENING)
    mounted = page.evaluate("() => !!document.querySelector('.st-key-replay_next button')")
    page.keyboard.press("ArrowRight")
    print(f"\n→ pressed with the stepper's buttons {'mounted' if mounted else 'not yet mounted'}")
    heading(page, 1, n, expected.requests[1].turn, strategy).wait_for()
    wait_for_stepper(page)
    # one press, one step: the kept press is not applied a second time by Streamlit's own shortcut
    assert page.get_by_role("heading", name=HEADING.format(k=1, n=n, turn=expected.requests[1].turn,
                                                           strategy=strategy)).count() == 1
    assert "request=1" in page.url
    assert page.locator("[data-testid=stException]").count() == 0
