"""What was lost, what fills the context, and the subagent chains (issue 33), in a real browser at 1366 x 768.

On the shared Claude Code session with three subagents: the Explorer lists every chain, each on its own
lane with its own dollars (the test sums the raw JSONL itself), and stacks the recorded context by kind
(the test counts the last request's context itself); the Replay page lists the verdict strategy's lost
terms (the test groups the per-request losses of ``recall_json`` itself) and stacks each strategy's
context. On both pages nothing is cut and nothing scrolls sideways: the clipping checks of
``test_numbers_browser`` run on the new views' containers. Skipped when the shared file is absent.
"""

from __future__ import annotations

import json
import urllib.parse
from collections import defaultdict

import pytest

from pruner import load_session
from pruner.engine.prune import message_tokens
from pruner.replay import ReplaySettings, default_prices, replay
from pruner.replay.detect import detect
from pruner.replay.verdict import recall_json, verdict
from pruner.tokens import get_counter
from tests.e2e import test_browser as shared
from tests.e2e.test_browser import (CLIPPED_METRICS, REAL_DATA, TIMELINE_DRAWN, TIMEOUT_MS, VIEWPORT, no_exception,
                                    save_screenshot, upload)
from tests.e2e.test_numbers_browser import CLIPPED_LABELS, CUT_LINKS, CUT_TABLES, HAS_TABLE
from tests.support import raw_bill

for _name, _value in vars(shared).items():  # the browser, the server, a fresh tab
    if hasattr(_value, "_fixture_function_marker"):
        globals()[_name] = _value

pytestmark = pytest.mark.e2e

SUBAGENTS = REAL_DATA / "claude-code" / "task-patterns-998db3cd.jsonl"
#: The new views' boxes: a data grid scrolling sideways, an HTML table wider than its box or a cut cell fails.
#: The charts' boxes are measured too (past the window's right edge): the composition charts are new views.
EXPLORER_BOXES = ("chains_box", "chains_chart_box", "explorer_composition_box")
REPLAY_BOXES = ("lost_terms_box", "composition_removed_box", "replay_totals_box", "replay_composition_box")
#: The page or a chart box wider than the window (a view scrolling sideways).
SIDEWAYS = """(keys) => [
    ...(document.documentElement.scrollWidth > window.innerWidth + 1 ?
        [`page: ${document.documentElement.scrollWidth} > ${window.innerWidth}`] : []),
    ...[...document.querySelectorAll('[data-testid=stMain] *')]
        .filter(el => el.scrollWidth > el.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
                && !el.closest('[data-testid=stDataFrame]') && !el.closest('.js-plotly-plot'))
        .map(el => `scrolls sideways: ${el.tagName} ${el.textContent}`.slice(0, 120)),
    ...keys.flatMap(key => [...document.querySelectorAll(`.st-key-${key}`)]
        .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1).map(() => `${key} past the window`))]"""
#: The traces of the chart inside a box: name, x, y and customdata.
TRACES = """(key) => { const el = document.querySelector(`.st-key-${key} .js-plotly-plot`);
    return el && el._fullData ? el._fullData.map(t => ({name: t.name, x: Array.from(t.x || []),
        y: Array.from(t.y || []), customdata: Array.from(t.customdata || [])})) : null; }"""
HAS_CHART = "(key) => { const el = document.querySelector(`.st-key-${key} .js-plotly-plot`); " \
            "return !!(el && el._fullData && el._fullData.length); }"


def _main_chain_dollars(path) -> float:
    """The raw file's main-chain requests (not ``isSidechain``), one per request id with the most output."""
    best: dict[str, tuple[int, str, dict]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        d = json.loads(line) if line.strip() else {}
        m = d.get("message") if d.get("type") == "assistant" and not d.get("isSidechain") else None
        if not isinstance(m, dict) or not isinstance(m.get("usage"), dict) or m.get("model") == "<synthetic>":
            continue
        key = d.get("requestId") or m.get("id") or str(n)
        out = m["usage"].get("output_tokens") or 0
        if key not in best or out >= best[key][0]:
            best[key] = (out, m.get("model"), m["usage"])
    total = 0.0
    for out, model, u in best.values():
        hour = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
        total += raw_bill._dollars(model, u.get("input_tokens") or 0, u.get("cache_read_input_tokens") or 0,
                                   (u.get("cache_creation_input_tokens") or 0) - hour, hour, out)
    return total


def _clipped(page, boxes) -> list[str]:
    return (page.evaluate(CLIPPED_METRICS) + page.evaluate(CLIPPED_LABELS) + page.evaluate(CUT_TABLES, list(boxes))
            + page.evaluate(CUT_LINKS) + page.evaluate(SIDEWAYS, list(boxes)))


def test_chains_composition_and_lost_terms_show_whole_at_1366(page, app_url):
    if not SUBAGENTS.exists():
        pytest.skip(f"the shared Claude Code session with subagents is not at {SUBAGENTS}")
    session = load_session(SUBAGENTS)
    assert len(session.subagents) == 3

    # -- the Explorer: every chain on its own lane, with its own dollars; the recorded context by kind
    page.goto(f"{app_url}/explorer")
    page.wait_for_function(TIMELINE_DRAWN, arg=25)
    upload(page, SUBAGENTS)
    page.get_by_text(f"{SUBAGENTS.name} · upload").first.wait_for()
    page.wait_for_function("() => location.search.includes('upload=')")
    digest = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["upload"][0]
    page.get_by_text("3 subagent chains", exact=False).first.wait_for()
    page.locator(".st-key-chains_box").scroll_into_view_if_needed()
    page.wait_for_function(HAS_CHART, arg="chains_chart_box")
    lanes = page.evaluate(TRACES, "chains_chart_box")
    assert [t["name"] for t in lanes] == [c for c, _ in session.chains]
    dollars = {t["name"]: sum(c[1] for c in t["customdata"]) for t in lanes}
    assert sum(dollars.values()) == pytest.approx(raw_bill.claude_code([SUBAGENTS]), abs=0.005)
    assert dollars["main"] == pytest.approx(_main_chain_dollars(SUBAGENTS), abs=0.005)
    assert all(v > 0 for v in dollars.values()), dollars  # every subagent has its own bill

    page.wait_for_function(HAS_CHART, arg="explorer_composition_box")
    kinds = page.evaluate(TRACES, "explorer_composition_box")
    counter = get_counter("o200k_base")
    last = max(i for i, m in enumerate(session.messages) if m.role == "assistant")
    assert not any(m.role == "summary" for m in session.messages[:last])  # no compaction: everything before it
    expected = sum(message_tokens(m, counter) for m in session.messages[:last])
    assert sum(t["y"][-1] for t in kinds) == expected
    shares = [float(t["name"].rsplit("(", 1)[1].split(" %")[0]) for t in kinds]
    assert sum(shares) == pytest.approx(100, abs=0.1 * len(shares))
    page.locator(".st-key-explorer_composition_box").scroll_into_view_if_needed()
    page.wait_for_function(HAS_TABLE, arg="chains_box")  # drawn, so the check measures it
    save_screenshot(page, "explorer-chains-composition")
    assert _clipped(page, EXPLORER_BOXES) == []
    no_exception(page)

    # -- the Replay page: the verdict strategy's lost terms, and what fills each strategy's context
    provider, model, _ = detect(session, default_prices())  # what the page replays with
    r = replay(session, settings=ReplaySettings(provider=provider, model=model))
    best = verdict(r).best
    groups: dict[tuple, list[int]] = defaultdict(list)
    for req in recall_json(r, best)["requests"]:
        for loss in req["lost"]:
            groups[(loss["chain"], loss["term"], loss["source_id"])].append(loss["request"])
    assert groups, "the verdict's strategy loses something on this session"
    page.goto(f"{app_url}/replay?upload={digest}")
    lost = page.locator(".st-key-lost_terms_box")
    lost.wait_for()
    caption = page.get_by_text(f"{best}: {len(groups):,} term{'' if len(groups) == 1 else 's'} lost", exact=False).first
    caption.wait_for()
    assert f"{sum(len(v) for v in groups.values()):,} of the" in caption.inner_text()
    page.wait_for_function(HAS_CHART, arg="replay_composition_box")
    stacked = page.evaluate(TRACES, "replay_composition_box")
    main_rows = [row.tokens for row in r.runs[best].rows if row.chain == "main"]
    assert [sum(t["y"][i] for t in stacked) for i in range(len(main_rows))] == main_rows
    page.locator(".st-key-composition_removed_box td").first.wait_for()
    page.locator(".st-key-lost_terms_box").scroll_into_view_if_needed()
    page.wait_for_function(HAS_TABLE, arg="lost_terms_box")
    save_screenshot(page, "replay-lost-terms")
    page.locator(".st-key-composition_removed_box").scroll_into_view_if_needed()
    save_screenshot(page, "replay-composition")
    page.wait_for_function(HAS_TABLE, arg="replay_totals_box")
    assert _clipped(page, REPLAY_BOXES) == []
    no_exception(page)


def test_the_corpus_page_lists_the_top_lost_terms_per_strategy_whole_at_1366(page, app_url, tmp_path):
    if not SUBAGENTS.exists():
        pytest.skip(f"the shared Claude Code session with subagents is not at {SUBAGENTS}")
    import shutil

    import pyarrow.parquet as pq

    from pruner.logs import discover, run_logs
    from pruner.replay import strategy_names

    home = tmp_path / "home"
    (home / ".claude/projects/-work-tasks").mkdir(parents=True)
    shutil.copyfile(SUBAGENTS, home / ".claude/projects/-work-tasks" / SUBAGENTS.name)
    out = tmp_path / "out"
    found = [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]
    assert run_logs(found, str(out), strategies=tuple(strategy_names())).errors == 0
    row = pq.read_table(out / "sessions.parquet").to_pylist()[0]
    lost = {s: json.loads(row[f"{s}_lost"]) for s in strategy_names() if row.get(f"{s}_lost")}
    assert any(lost.values()), lost
    page.goto(f"{app_url}/corpus?corpus={urllib.parse.quote(str(out))}")
    page.get_by_text("What each strategy lost most often", exact=False).first.wait_for()
    page.locator(".st-key-logs_lost_box").scroll_into_view_if_needed()
    page.wait_for_function(HAS_TABLE, arg="logs_lost_box")  # drawn, so the check measures it
    save_screenshot(page, "corpus-lost-terms")
    assert _clipped(page, ("logs_lost_box",)) == []
    no_exception(page)


COMPACTED = REAL_DATA / "claude-code" / "codemie-session-624a4a58.jsonl"


def test_the_compaction_page_shows_its_dollars_and_recall_and_no_metric_is_cut(page, app_url):
    if not COMPACTED.exists():
        pytest.skip(f"the shared Claude Code session is not at {COMPACTED}")
    page.goto(f"{app_url}/explorer")
    page.wait_for_function(TIMELINE_DRAWN, arg=25)
    upload(page, COMPACTED)
    page.get_by_text(f"{COMPACTED.name} · upload").first.wait_for()
    page.wait_for_function("() => location.search.includes('upload=')")
    digest = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["upload"][0]
    page.goto(f"{app_url}/compaction?upload={digest}")
    page.get_by_text("Where the cut falls").wait_for()
    page.get_by_role("button", name="Compact", exact=True).click()
    box = page.locator(".st-key-compaction_value_box")
    box.wait_for()
    labels = box.locator("[data-testid=stMetricLabel]").all_inner_texts()
    assert labels == ["Next request, compacted", "Next request, as is", "Each later request saves", "Summary recall"]
    values = box.locator("[data-testid=stMetricValue]").all_inner_texts()
    assert all(v.startswith("$") for v in values[:3]) and values[3].endswith("%"), values
    assert page.get_by_text("Context now", exact=False).count() <= 1  # one figure is called the context
    box.scroll_into_view_if_needed()
    save_screenshot(page, "compaction-value")
    assert _clipped(page, ()) == []
    no_exception(page)


_ = (TIMEOUT_MS, VIEWPORT)  # the shared test's settings, used through its fixtures
