"""The Corpus page's live panel in a real browser (issue 32, Live): opened on a logs folder, it shows the
session being written now; when ``pruner logs`` rewrites the table (the session grew), the page shows the
new figures by itself, without a reload.

The logs folder is made here from the shipped Claude Code sample, laid out as Claude Code lays it out; the
dollars checked are summed from the raw file by ``tests/support/raw_bill.py``.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.e2e.test_browser import (OUTSIDE_REQUESTS, app_url, browser,  # noqa: F401 - fixtures
                                    chromium_path, page, save_screenshot, server)
from tests.support.paths import SAMPLES
from tests.support.raw_bill import session_dollars

pytestmark = pytest.mark.e2e

AGENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME")
#: The panel's "Dollars so far" metric, as the page shows it.
DOLLARS_SO_FAR = """(expected) => [...document.querySelectorAll('.st-key-logs_live_box [data-testid=stMetric]')]
    .some(m => m.innerText.includes('Dollars so far') && m.innerText.includes(expected))"""


def _pruner_logs(home, out, monkeypatch) -> None:
    """``pruner logs`` as typed, in this process: a subprocess of it can abort at exit on pyarrow's
    thread-pool teardown (apache/arrow#34314, seen once here under load), which is not what this test is about."""
    from pruner.cli import main

    for var in AGENT_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    assert main(["logs", "--out", str(out), "--strategies", "as_recorded,full,cache_aware"]) == 0


def test_the_live_panel_shows_the_grown_session_without_a_reload(page, app_url, server, tmp_path, monkeypatch):  # noqa: F811
    from pruner.money import money

    lines = (SAMPLES / "claude_code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    home = tmp_path / "home"
    session = home / ".claude/projects/-work-demo/live.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("".join(lines[:8]), encoding="utf-8")
    out = tmp_path / "out"
    _pruner_logs(home, out, monkeypatch)
    before = session_dollars("claude_code", [session])

    page.goto(f"{app_url}/corpus?corpus={urllib.parse.quote(str(out))}")
    page.get_by_role("heading", name="Now: the session being written").first.wait_for()
    page.wait_for_function(DOLLARS_SO_FAR, arg=money(before))
    assert page.locator(".st-key-logs_live_box").inner_text().count("live.jsonl") == 1
    page.evaluate("() => { window.__sameDocument = true; }")  # gone if the page were reloaded

    with session.open("a", encoding="utf-8") as fh:  # the agent writes on
        fh.write("".join(lines[8:]))
    _pruner_logs(home, out, monkeypatch)
    after = session_dollars("claude_code", [session])
    assert money(after) != money(before)
    page.wait_for_function(DOLLARS_SO_FAR, arg=money(after), timeout=120_000)
    assert page.evaluate("() => window.__sameDocument === true")  # refreshed in place, not reloaded
    # the whole page is of the new table: the bill at the top says the same dollars
    page.wait_for_function("""(expected) => [...document.querySelectorAll('[data-testid=stMetric]')]
        .some(m => m.innerText.startsWith('Billed') && m.innerText.includes(expected))""", arg=money(after))
    assert page.locator("[data-testid=stException]").count() == 0
    save_screenshot(page, "corpus-live")
    assert OUTSIDE_REQUESTS == [] and server.outbound_attempts() == []  # nothing left the machine
