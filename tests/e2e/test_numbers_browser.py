"""One number for one thing, nothing clipped (issue 21), in a real browser at 1366 x 768.

On the shared Claude Code session that records a compaction, the explorer, the Replay page and the
Compaction page show the same recorded context size for the session's last request; the test reads
that figure from the raw JSONL lines itself. Then every page is opened and no metric value or label
and no table is cut at 1366 pixels (measured in the DOM, as the explorer's own test measures).
Skipped when the shared file is absent.
"""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from pruner import load_session
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import (CLIPPED_METRICS, REAL_DATA, TIMELINE_DRAWN, TIMEOUT_MS, VIEWPORT, no_exception,
                                    registered_pages, upload)

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

COMPACTED = REAL_DATA / "claude-code" / "codemie-session-624a4a58.jsonl"
#: Metric labels, and tables that scroll sideways (a column cut off at this width).
CLIPPED_LABELS = """() => [...document.querySelectorAll('[data-testid=stMetricLabel]')]
    .filter(el => [el, ...el.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
    .map(el => el.textContent)"""
#: The summary tables that must show every column at this width (long message tables scroll sideways).
SUMMARY_TABLES = ("replay_totals_box", "replay_ledger_box", "bench_findings_box", "bench_reference_box",
                  "bench_regret_box")
#: A data grid that scrolls sideways, an HTML table wider than its box, or a cell whose text overflows it.
CUT_TABLES = """(keys) => keys.flatMap(key => [
    ...[...document.querySelectorAll(`.st-key-${key} .dvn-scroller`)]
        .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => `${key}: ${el.scrollWidth} > ${el.clientWidth}`),
    ...[...document.querySelectorAll(`.st-key-${key} table`)]
        .filter(t => t.getBoundingClientRect().right > document.querySelector(`.st-key-${key}`)
                                                        .getBoundingClientRect().right + 1)
        .map(t => `${key}: table wider than its box`),
    ...[...document.querySelectorAll(`.st-key-${key} td, .st-key-${key} th`)]
        .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => `${key}: cell cut: ${c.textContent}`)])"""
#: A link in a page whose label is cut (the Start page's sample links were, at this width).
CUT_LINKS = """() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stPageLink] *')]
    .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => `link cut: ${el.textContent}`)"""
HAS_TABLE = "key => document.querySelectorAll(`.st-key-${key} .dvn-scroller`).length > 0"


def last_recorded_context(path) -> int:
    """The raw file's last main-chain request: input + cache read + cache creation, as Anthropic billed it."""
    last = None
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line) if line.strip() else {}
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") != "assistant" or entry.get("isSidechain") or not isinstance(message, dict):
            continue
        usage = message.get("usage") or {}
        if message.get("model") == "<synthetic>" or not usage:
            continue
        total = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                      "cache_creation_input_tokens"))
        if total:
            last = total
    assert last is not None
    return last


def number_in(text: str, after: str) -> int:
    match = re.search(re.escape(after) + r"[^\d]*([\d,]+)", text)
    assert match, f"{after!r} not in {text[:400]!r}"
    return int(match.group(1).replace(",", ""))


def metric(tab, label: str) -> str:
    box = tab.locator("[data-testid=stMetric]").filter(has=tab.get_by_text(label, exact=True)).first
    box.wait_for()
    return box.locator("[data-testid=stMetricValue]").inner_text()


def test_explorer_replay_and_compaction_show_one_recorded_context_and_nothing_is_clipped(page, app_url):
    if not COMPACTED.exists():
        pytest.skip(f"the shared Claude Code session is not at {COMPACTED}")
    expected = last_recorded_context(COMPACTED)
    session = load_session(COMPACTED)
    assert session.metadata.get("recorded_compactions"), "the file records a compaction"

    page.goto(f"{app_url}/explorer")
    page.wait_for_function(TIMELINE_DRAWN, arg=25)
    upload(page, COMPACTED)
    page.get_by_text(f"{COMPACTED.name} · upload").first.wait_for()
    page.wait_for_function(TIMELINE_DRAWN, arg=len(session.messages))
    page.wait_for_function("() => location.search.includes('upload=')")
    digest = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["upload"][0]
    caption = page.get_by_text("Recorded context at the last request", exact=False).first
    caption.wait_for()
    text = caption.inner_text()
    assert number_in(text, "): ") == expected, text
    assert "recorded compaction" in text and "whole conversation" in text
    explorer_figure = number_in(text, "): ")

    page.goto(f"{app_url}/replay?upload={digest}&strategy=as_recorded&request=999999")
    page.get_by_role("heading", name="under as_recorded", exact=False).first.wait_for()
    replay_figure = int(metric(page, "Input (provider tokens)").replace(",", ""))
    page.get_by_text("recorded compaction", exact=False).first.wait_for()

    page.goto(f"{app_url}/compaction?upload={digest}")
    page.get_by_text("Where the cut falls").wait_for()
    compaction_figure = int(metric(page, "Recorded context (tokens)").replace(",", ""))
    assert explorer_figure == replay_figure == compaction_figure == expected
    no_exception(page)

    clipped = {}
    for path in registered_pages():
        page.goto(f"{app_url}/{path}?upload={digest}")
        page.locator("h1").first.wait_for()
        page.wait_for_timeout(4000)  # every element of the page's first run
        if path == "replay":
            page.wait_for_function(HAS_TABLE, arg="replay_totals_box")  # the strategies table is measured
        if path == "benchmarks":  # its two summary tables are HTML tables: they are measured
            page.locator(".st-key-bench_findings_box td").first.wait_for()
            page.locator(".st-key-bench_reference_box td").first.wait_for()
            page.locator(".st-key-bench_regret_box td").first.wait_for()
        found = (page.evaluate(CLIPPED_METRICS) + page.evaluate(CLIPPED_LABELS)
                 + page.evaluate(CUT_TABLES, SUMMARY_TABLES) + page.evaluate(CUT_LINKS))
        if found:
            clipped[path] = found
        no_exception(page)
    assert clipped == {}, clipped


_ = (TIMEOUT_MS, VIEWPORT)  # the shared test's settings, used through its fixtures
