"""The hindsight bound on the Replay page (issue 30), in a real browser at 1366 x 768: a session above what
the page computes at once offers a button under the verdict; once clicked, the verdict's third line gives the
least any schedule could cost as ``pruner replay --json --limit`` wrote it for the same session (exact, or
between its proven lower bound and the cheapest schedule found), the cumulative-cost chart draws the bound
ending at the cheapest schedule's dollars, the strategies table has its regret column, and nothing is clipped
(the checks of ``test_numbers_browser`` and ``test_context_views_browser``).

Uses the fixtures of ``test_browser.py``.
"""

from __future__ import annotations

import json

import pytest

from pruner.bench.workloads import generate
from pruner.cli import main
from pruner.formats.native import dumps
from pruner.money import money
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import no_exception, save_screenshot
from tests.e2e.test_context_views_browser import _clipped
from tests.e2e.test_numbers_browser import HAS_TABLE

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

WORKLOAD = {"workload": "tool_agent", "turns": 110, "seed": 1}  # above the 200 requests the page computes at once
#: The bound's line on the cost chart: its y values, once plotly drew it.
BOUND_Y = """() => { for (const el of document.querySelectorAll('.js-plotly-plot')) {
    const t = (el._fullData || []).find(t => t.name === 'best in hindsight' && t.mode === 'lines');
    if (t) return Array.from(t.y); } return null; }"""


#: The strategies table as its grid's accessible table holds it (``test_browser.GRID_ROWS``'s way).
TOTALS = """() => { const table = document.querySelector('.st-key-replay_totals_box table[role=grid]');
    if (!table) return null;
    const columns = [...table.querySelectorAll('th[role=columnheader]')].map(th => th.textContent);
    const rows = [...table.querySelectorAll('tr[role=row]')].map(r =>
        [...r.querySelectorAll('td[role=gridcell]')].map(td => td.textContent)).filter(r => r.length);
    return {columns, rows}; }"""


def expected_regret(totals: dict, bound: float) -> str:
    """A strategy's regret from its JSON totals: n/a unless it ran the whole session, priced."""
    if not (totals["feasible"] and totals["applicable"]) or totals["unpriced_requests"]:
        return "n/a"
    value = round(totals["dollars"] - bound, 6)
    return f"{'+' if value >= 0 else '−'}{money(abs(value))}"


def said_bound(combined: dict) -> str:
    """The Answer's bound from the JSON's figures: exact, an interval, or at most (never "best possible")."""
    if combined.get("exact"):
        return f"{money(combined['dollars'])} (exact)"
    if combined.get("lower_bound") is None:
        return f"at most {money(combined['dollars'])}"
    return f"between {money(combined['lower_bound'])} and {money(combined['dollars'])}"


def test_the_verdict_names_the_bound_the_chart_draws_it_and_nothing_is_clipped(page, app_url, tmp_path):
    path, out = tmp_path / "agent.jsonl", tmp_path / "agent.replay.json"
    path.write_text(dumps(generate(WORKLOAD["workload"], turns=WORKLOAD["turns"], seed=WORKLOAD["seed"])),
                    encoding="utf-8")
    assert main(["replay", str(path), "--limit", "--json", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    combined = doc["limit"]["combined"]
    assert combined["dollars"] is not None

    query = "&".join(f"{k}={v}" for k, v in WORKLOAD.items())
    page.goto(f"{app_url}/replay?{query}")
    verdict = page.locator(".st-key-replay_verdict_box")
    # above what the page computes at once, so the first view says so and offers the button
    verdict.get_by_text("the least any schedule could cost at ≥ 99 % recall was not computed (not yet: on a "
                        "session of", exact=False).first.wait_for()
    verdict.get_by_role("button", name="Compute the hindsight bound").click()
    verdict.get_by_text(f"the least any schedule could cost at ≥ 99 % recall: {said_bound(combined)}",
                        exact=False).first.wait_for()
    page.wait_for_function(f"() => {{ const y = ({BOUND_Y})(); return y && y.length > 0; }}")
    drawn = page.evaluate(BOUND_Y)
    assert drawn[-1] == pytest.approx(combined["dollars"], abs=1e-6)
    page.wait_for_function(HAS_TABLE, arg="replay_totals_box")
    rows = len(doc["strategies"])
    page.wait_for_function(f"() => {{ const t = ({TOTALS})(); return t && t.rows.length === {rows}; }}")
    table = page.evaluate(TOTALS)
    column = table["columns"].index("regret")
    shown = {row[table["columns"].index("strategy")].split(" ")[0]: row[column] for row in table["rows"]}
    assert shown == {name: expected_regret(s["totals"], combined["dollars"]) for name, s in doc["strategies"].items()}
    verdict.scroll_into_view_if_needed()
    save_screenshot(page, "replay-hindsight-bound")
    assert _clipped(page, ("replay_verdict_box", "replay_totals_box")) == []
    no_exception(page)
