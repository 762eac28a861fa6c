"""The Corpus page on a logs folder (``pruner logs``) in a real browser: the three views in order, and a
click on the session that matters most opening it in the Replay page at its costliest miss.

The logs folder is made here from the shared real files laid out like a machine's home folder.
"""

from __future__ import annotations

import shutil
import urllib.parse

import pyarrow.parquet as pq
import pytest

from tests.e2e.test_browser import (OUTSIDE_REQUESTS, app_url, browser,  # noqa: F401 - fixtures
                                    chromium_path, page, save_screenshot, server, wait_for_text)

pytestmark = pytest.mark.e2e

LAYOUT = (
    (".claude/projects/-work-viewer", "claude-code/ccviewer-5c0375b4.jsonl", "5c0375b4.jsonl"),
    (".claude/projects/-work-dmux", "claude-code/dmux-a9185eb7.jsonl", "a9185eb7.jsonl"),
    (".codex/sessions/2026/05/11", "codex/codemie-rollout-2026-05-11.jsonl", "rollout-2026-05-11T11-26-55-a.jsonl"),
    (".gemini/tmp/fb8e242a/chats", "gemini-cli/codemie-session-2025-12-01.json", "session-2025-12-01.json"),
    (".gemini/tmp/907f2064/chats", "gemini-cli/codemie-session-2026-01-16-file-ops.json", "session-2026-01-16.json"),
)

PLOT_TITLED = """(title) => [...document.querySelectorAll('.js-plotly-plot')].some(el =>
    [...el.querySelectorAll('.gtitle')].some(t => t.textContent === title))"""


@pytest.fixture(scope="module")
def logs_folder(tmp_path_factory):
    from pruner.logs import discover, run_logs
    from pruner.replay import strategy_names
    from tests.support.paths import REAL_DATA as real_data

    if not (real_data / "claude-code").is_dir():
        pytest.skip(f"real transcripts not found at {real_data}")
    home = tmp_path_factory.mktemp("logs-home")
    for folder, source, name in LAYOUT:
        (home / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_data / source, home / folder / name)
    out = tmp_path_factory.mktemp("logs-out") / "out"
    found = [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]
    summary = run_logs(found, str(out), strategies=tuple(strategy_names()))
    assert summary.read == len(LAYOUT) and summary.errors == 0
    return out


def _most_saving(rows: list[dict]) -> dict:
    """The session where the cheapest feasible, applicable strategy keeping 99 % recall saves most on the
    modelled recording, found here."""
    from pruner.replay import strategy_names

    def saving(r):
        options = [r[f"{s}_dollars"] for s in strategy_names()
                   if s != "as_recorded" and r.get(f"{s}_feasible") and r.get(f"{s}_dollars") is not None
                   and r.get(f"{s}_applicable") is not False and (r.get(f"{s}_recall") or 1.0) >= 0.99]
        return r["modelled"] - min(options) if options else float("-inf")
    return max(rows, key=lambda r: (saving(r), r["session_key"]))


def test_logs_folder_shows_three_views_and_a_click_opens_the_costliest_miss_in_replay(
        page, app_url, server, logs_folder):  # noqa: F811
    from pruner import load_session
    from pruner.replay import ledger

    rows = pq.read_table(logs_folder / "sessions.parquet").to_pylist()
    billed = sum(r["billed"] for r in rows)
    page.goto(f"{app_url}/corpus?corpus={urllib.parse.quote(str(logs_folder))}")
    for heading in ("1. What did I pay, and where did it go?",
                    "2. What would each strategy have cost, and what would it have lost?",
                    "3. Which sessions matter?"):
        page.get_by_role("heading", name=heading).first.wait_for()
    for title in ("Dollars by day, by project", "Dollars by project", "Dollars by model",
                  "Paid above a cache hit, by miss cause"):
        page.wait_for_function(PLOT_TITLED, arg=title)
    page.wait_for_function(PLOT_TITLED, arg="What each strategy would have cost and kept")  # recall measured
    recall_axis = page.locator(".js-plotly-plot .xtitle").evaluate_all("els => els.map(e => e.textContent)")
    assert "context recall" in recall_axis
    metrics = page.locator("[data-testid=stMetricValue]").all_inner_texts()
    assert f"${billed:,.2f}" in metrics and f"{len(rows):,}" in metrics
    bar_texts = page.locator(".js-plotly-plot text.bartext").evaluate_all("els => els.map(e => e.textContent)")
    assert bar_texts and all(t.startswith("$") for t in bar_texts)  # values on the bars, as money
    assert page.get_by_text("Misses with no visible cause:").count() >= 1
    assert page.get_by_text("Prices: ").count() >= 1
    headings = page.locator("h2").all_inner_texts()
    assert [h for h in headings if h[:2] in ("1.", "2.", "3.")] == [
        "1. What did I pay, and where did it go?",
        "2. What would each strategy have cost, and what would it have lost?", "3. Which sessions matter?"]
    assert page.locator("[data-testid=stException]").count() == 0
    page.wait_for_timeout(1000)
    save_screenshot(page, "corpus-logs", height=2600)

    top = _most_saving(rows)
    entries = [e for e in ledger(load_session(top["source"])) if e.status != "hit"]
    costliest = max(entries, key=lambda e: (e.rebilled_dollars, -e.request))
    grid = page.locator("[data-testid=stDataFrame]").last
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)  # the grid draws on a canvas after it is attached
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 20, box["y"] + 35 + 17)  # the first row, below the header
    page.get_by_role("heading", name="Replay: what the model receives at every request, and what it costs"
                     ).first.wait_for(timeout=120_000)
    wait_for_text(page, top["source"].rsplit("/", 1)[-1])
    page.get_by_role("heading", name=f"Request {costliest.request:,} of", exact=False).first.wait_for(
        timeout=120_000)
    assert f"request={costliest.request}" in page.url and "batch_session=" in page.url
    # the rendered Replay page's answer: the billed and modelled figures of pruner logs' row for this session
    from pruner.money import money

    verdict_box = page.locator(".st-key-replay_verdict_box")
    verdict_box.wait_for()
    said = verdict_box.inner_text()
    assert f"Billed {money(top['billed'])}" in said, said
    assert f"puts the same requests at {money(top['modelled'])}" in said, said
    assert page.locator("[data-testid=stException]").count() == 0
    assert OUTSIDE_REQUESTS == [] and server.outbound_attempts() == []  # nothing left the machine
