"""The Replay page answers (issue 21), in a real browser: a click on a cache miss, a chart point or an
event row opens that request; one legend toggles a strategy in both charts; an infeasible strategy is
greyed with its reason; the verdict sentence and the cost-against-recall chart (when the recall engine
is there) stand on the page.

Uses the fixtures of ``test_browser.py``.
"""

from __future__ import annotations

import pytest

from pruner import load_session
from pruner.bench.workloads import generate
from pruner.replay import replay
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import LEGEND_TEXTS, REAL_DATA, SAMPLES, no_exception, upload

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

SAMPLE = "pi_session.jsonl"
OVERVIEW_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')].some(el =>
    (el._fullData || []).some(t => t.legendgroup === 'as_recorded') && el.querySelectorAll('path.point').length)"""


def heading(tab, k: int, n: int, strategy: str):
    return tab.get_by_role("heading", name=f"Request {k} of {n}", exact=False).filter(
        has_text=f"under {strategy}").first


def click_row(tab, key: str, row: int) -> None:
    """Select row ``row`` of the table in the element keyed ``key`` (the grid draws on a canvas)."""
    grid = tab.locator(f".st-key-{key} [data-testid=stDataFrame]").first
    grid.scroll_into_view_if_needed()
    tab.wait_for_timeout(1200)
    box = grid.bounding_box()
    tab.mouse.click(box["x"] + 20, box["y"] + 35 + 35 * row + 17)


def test_a_click_on_a_miss_a_point_or_an_event_opens_that_request_and_the_legend_toggles_both_charts(page, app_url):
    expected = replay(load_session(SAMPLES / SAMPLE))
    n = len(expected.requests)
    misses = [e for e in expected.ledger if e.status != "hit"]
    broke = next(i for i, e in enumerate(misses) if e.changed_message_id)
    page.goto(f"{app_url}/replay?sample={SAMPLE}&strategy=full")
    page.wait_for_function(OVERVIEW_DRAWN)
    heading(page, 0, n, "full").wait_for()

    # a miss: opens its request under as_recorded, the message that broke the prefix marked
    click_row(page, "replay_misses_box", broke)
    heading(page, misses[broke].request, n, "as_recorded").wait_for()
    page.get_by_text("it broke the cached prefix", exact=False).first.wait_for()
    assert misses[broke].changed_message_id in page.get_by_text("it broke the cached prefix",
                                                                 exact=False).first.inner_text()

    # a point on the chart: the recording's compaction-miss marker
    plot = page.locator(".js-plotly-plot").filter(has=page.locator(".legendtext", has_text="as_recorded")).first
    index = plot.evaluate("el => el._fullData.findIndex(t => (t.name || '').startsWith('miss: '))")
    x = plot.evaluate(f"el => el._fullData[{index}].x[0]")
    plot.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    where = plot.evaluate("""(el, idx) => {
        const g = [...el.querySelectorAll('.scatterlayer .trace')].find(g =>
            g.__data__ && g.__data__[0] && g.__data__[0].trace && g.__data__[0].trace.index === idx);
        const r = g.querySelector('path.point').getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2]; }""", index)
    page.mouse.move(*where)
    page.wait_for_timeout(300)
    page.mouse.click(*where)
    heading(page, int(x), n, "as_recorded").wait_for()

    # the legend: one click hides a strategy in the context chart and in the cost chart
    plot.locator(".legendtext", has_text="full").first.click(force=True)  # the toggle rect lies over the text
    page.wait_for_function("""() => [...document.querySelectorAll('.js-plotly-plot')].some(el => {
        const full = (el._fullData || []).filter(t => t.legendgroup === 'full' && t.mode === 'lines');
        return full.length === 2 && full.every(t => t.visible === 'legendonly'); })""")

    # an event row: opens that request under that strategy
    from dashboard.logic import replay as logic
    events = logic.events_frame(expected)
    first = events.iloc[0]
    click_row(page, "replay_events_box", 0)
    heading(page, int(first["request"]), n, str(first["strategy"])).wait_for()
    no_exception(page)


def test_an_infeasible_strategy_is_greyed_with_its_reason_and_the_verdict_stands_on_top(page, app_url):
    path = REAL_DATA / "claude-code" / "codemie-session-624a4a58.jsonl"
    if not path.exists():
        pytest.skip(f"the shared Claude Code session is not at {path}")
    expected = replay(load_session(path))
    bad = {n: run.totals["infeasible_reason"] for n, run in expected.runs.items() if not run.totals["feasible"]}
    assert bad, "the session needs compaction, so sending everything is infeasible"
    page.goto(f"{app_url}/explorer")
    upload(page, path)
    page.get_by_text(f"{path.name} · upload").first.wait_for()
    page.wait_for_function("() => location.search.includes('upload=')")
    page.goto(page.url.replace("/explorer", "/replay"))
    page.wait_for_function(OVERVIEW_DRAWN)
    for name in bad:
        shown = page.get_by_text(f"{name}: n/a: over the window from request", exact=False)
        shown.filter(visible=True).first.wait_for()
        assert any(f"{name} (infeasible)" in t for lg in page.evaluate(LEGEND_TEXTS) for t in lg)
    if "context_recall" in next(iter(expected.runs.values())).totals:
        from pruner.replay import verdict
        page.get_by_text(verdict(expected).lines()[1][:60], exact=False).first.wait_for()
        page.wait_for_function("""() => [...document.querySelectorAll('.js-plotly-plot')].some(el =>
            (el._fullData || []).length >= 2
            && (el._fullLayout.xaxis.title.text || '').startsWith('context recall'))""")
    no_exception(page)


def test_at_a_request_the_terms_a_strategy_lacks_link_to_the_messages_that_held_them(page, app_url):
    # No sample loses a used term under any strategy since file_state keeps edited reads (issue 20), so a
    # generated 500-turn session, where clearing and truncation do, opened by its link.
    expected = replay(generate("tool_agent", turns=500, seed=0))
    strategy, loss = next((n, loss) for n, s in expected.recall.strategies.items() for loss in s.losses
                          if loss.chain == "main" and loss.source is not None)
    page.goto(f"{app_url}/replay?workload=tool_agent&turns=500&seed=0&strategy={strategy}&request={loss.request}")
    page.get_by_text(f"What {strategy} lacks here", exact=False).first.wait_for()
    page.get_by_text(f"{loss.term} — held by {loss.source_id}", exact=False).first.wait_for()
    # the verdict on top
    from pruner.replay import verdict
    page.get_by_text(verdict(expected).lines()[1][:50], exact=False).first.wait_for()
    page.get_by_role("link", name=f"open #{loss.source:,} in the explorer").first.click()
    page.get_by_role("heading", name="Session explorer").first.wait_for()
    page.wait_for_function("n => document.querySelector('input[aria-label=\"Message # (position in the "
                           "session)\"]')?.value === String(n)", arg=loss.source)
    no_exception(page)
