"""The Corpus page's roll-ups (issue 32) in a real browser: a link naming a grouping opens it, week and
month are drawn as a chart, and a grouping chosen in the form goes into the address."""

from __future__ import annotations

import urllib.parse

import pyarrow.parquet as pq
import pytest

from tests.e2e.test_browser import (OUTSIDE_REQUESTS, app_url, browser,  # noqa: F401 - fixtures
                                    choose, chromium_path, page, server, wait_for_idle)
from tests.e2e.test_corpus_logs import PLOT_TITLED, logs_folder  # noqa: F401 - fixture

pytestmark = pytest.mark.e2e


def test_a_link_opens_its_grouping_and_the_chosen_one_goes_into_the_address(page, app_url, server,  # noqa: F811
                                                                            logs_folder):  # noqa: F811
    from pruner.logs.report import report

    rows = pq.read_table(logs_folder / "sessions.parquet").to_pylist()
    page.goto(f"{app_url}/corpus?corpus={urllib.parse.quote(str(logs_folder))}&by=week")
    page.get_by_role("heading", name="Roll-ups").first.wait_for()
    page.wait_for_function(PLOT_TITLED, arg="Dollars billed by week, and the cache-read share")
    weeks = sorted({g.key for g in report(rows, "week").groups})
    shown = page.locator(".js-plotly-plot .xtick text").evaluate_all("els => els.map(e => e.textContent)")
    assert set(weeks) <= set(shown), (weeks, shown)
    choose(page, "Roll up by", "month")
    page.get_by_role("button", name="Roll up", exact=True).click()
    wait_for_idle(page)
    page.wait_for_function(PLOT_TITLED, arg="Dollars billed by month, and the cache-read share")
    page.wait_for_function("() => window.location.search.includes('by=month')")
    assert page.locator("[data-testid=stException]").count() == 0
    assert OUTSIDE_REQUESTS == [] and server.outbound_attempts() == []
