"""The dashboard in a real browser: Debian's Chromium driven by Playwright against `streamlit run`.

Enable locally with ``apt-get install chromium`` (Playwright for Python comes
with ``pip install -e '.[test]'``; ``playwright install`` is not needed, the
system Chromium is used). With env ``CI`` set a missing browser fails the test.

Screenshots go to ``test-artifacts/`` and, with ``PRUNER_UPDATE_SCREENSHOTS=1``,
also to ``dashboard/screenshots/`` (the README's images).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
SAMPLES = ROOT / "sample_sessions"
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "dashboard" / "screenshots"
STATUSES = ("kept", "expired", "duplicate", "restored")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
HOW_TO_ENABLE = ("install Chromium (apt-get install chromium) and Playwright for Python "
                 "(pip install -e '.[test]'); set CI=1 to make a missing browser a failure")
LARGE_TURNS = 2_000
TIMEOUT_MS = 240_000  # generous: CI machines are shared; speed is printed, never asserted


def _require_browser() -> str:
    chromium = shutil.which("chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        chromium_ok, why = False, "Playwright for Python is not installed"
    else:
        chromium_ok, why = chromium is not None, "no 'chromium' binary on PATH"
    if not chromium_ok:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {why}; {HOW_TO_ENABLE}")
        pytest.skip(f"browser test skipped: {why}; to enable it, {HOW_TO_ENABLE}")
    return chromium


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chromium_path() -> str:
    return _require_browser()


#: Prints every attempt of the server's Python process to reach another host (see its docstring).
OUTBOUND_AUDIT = ROOT / "tests" / "support" / "outbound"
#: The README's command, run from the repository root: the test passes no flag it does not.
README_COMMAND = [str(Path(sys.executable).with_name("streamlit")), "run", "dashboard/app.py"]


@pytest.fixture(scope="module")
def server(chromium_path, tmp_path_factory):
    """The dashboard started exactly as the README says, from the repository root.

    Only the environment differs: a free port (``STREAMLIT_SERVER_PORT``, so parallel
    runs do not collide), no ``DISPLAY`` (so no browser window opens), and an audit
    hook on ``PYTHONPATH`` that logs any outbound connection or name lookup.
    """
    port = _free_port()
    workdir = tmp_path_factory.mktemp("streamlit")
    log, outbound = workdir / "server.log", workdir / "outbound.log"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env |= {"STREAMLIT_SERVER_PORT": str(port), "PRUNER_OUTBOUND_LOG": str(outbound),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(OUTBOUND_AUDIT), env.get("PYTHONPATH")]))}
    with open(log, "wb") as out:
        proc = subprocess.Popen(README_COMMAND, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield Server(url=url, log=log, outbound=outbound)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Server:
    url: str
    log: Path
    outbound: Path  # one line per outbound attempt of the server process; absent when none

    def outbound_attempts(self) -> list[str]:
        return self.outbound.read_text(encoding="utf-8").splitlines() if self.outbound.exists() else []


@pytest.fixture(scope="module")
def app_url(server) -> str:
    return server.url


#: Requests the browser tried to make to a host other than the local server (all tests).
OUTSIDE_REQUESTS: list[str] = []


def _is_local(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("data", "blob", "about") or parts.hostname in ("localhost", "127.0.0.1", "::1")


@pytest.fixture(scope="module")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh tab whose every request to another host is recorded and refused."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})

    def route(route):
        if _is_local(route.request.url):
            route.continue_()
        else:
            OUTSIDE_REQUESTS.append(route.request.url)
            route.abort()
    context.route("**/*", route)
    page = context.new_page()
    page.on("websocket", lambda ws: None if _is_local(ws.url) else OUTSIDE_REQUESTS.append(ws.url))
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


def save_screenshot(page, name: str, *, height: int | None = None) -> None:
    """Into test-artifacts/ always; into dashboard/screenshots/ when PRUNER_UPDATE_SCREENSHOTS=1."""
    if height:
        page.set_viewport_size({"width": 1400, "height": height})
        page.wait_for_timeout(1500)  # let plotly re-layout to the new size
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("PRUNER_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / f"{name}.png", SCREENSHOTS / f"{name}.png")


# The timeline is drawn when plotly has laid out its four status traces and rendered their
# legend, whose entries ("kept (9,070)") count at least ``minMessages`` messages in all: exact
# marks or bins, the legend counts every message shown.
TIMELINE_DRAWN = """(minMessages) => [...document.querySelectorAll('.js-plotly-plot')].some(el => {
    const statuses = (el._fullData || []).filter(t =>
        ['kept', 'expired', 'duplicate', 'restored'].includes(t.legendgroup));
    const counted = [...el.querySelectorAll('.legendtext')].map(t => t.textContent)
        .filter(t => /^(kept|expired|duplicate|restored) \\(/.test(t))
        .reduce((n, t) => n + Number(t.replace(/.*\\(([\\d,]+)\\).*/, '$1').replaceAll(',', '')), 0);
    return statuses.length === 4 && counted >= minMessages;
})"""
LEGEND_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(el =>
    [...el.querySelectorAll('.legendtext')].map(t => t.textContent))"""


def wait_for_text(page, text: str) -> None:
    page.get_by_text(text, exact=False).first.wait_for(state="visible")


def test_explorer_upload_shows_the_four_statuses(page, app_url):
    page.goto(app_url)
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    wait_for_text(page, "native_demo.jsonl · sample")
    legends = page.evaluate(LEGEND_TEXTS)
    timeline_legend = next(lg for lg in legends if any(t.startswith("kept") for t in lg))
    assert [t.split(" ")[0] for t in timeline_legend[:4]] == list(STATUSES)
    assert all("(0)" not in t for t in timeline_legend[:4])  # the demo has every status
    page.get_by_text("Context size at each turn").first.wait_for()
    save_screenshot(page, "explorer", height=1700)
    page.set_viewport_size({"width": 1400, "height": 1100})

    # clicking the restored mark selects it: the inspector moves there and its arrow is drawn
    from pruner import load_session, prune
    decisions = prune(load_session(SAMPLES / "native_demo.jsonl")).decisions
    restored = next(i for i, d in enumerate(decisions) if d.status == "restored")
    timeline = page.locator(".js-plotly-plot").first
    timeline.locator(".scatterlayer .trace").nth(STATUSES.index("restored")).locator("path.point").first.click(
        force=True)
    position = page.get_by_label("Message # (position in the session)")
    page.wait_for_function("([el, want]) => el.value === want",
                           arg=[position.element_handle(), str(restored)])
    page.wait_for_function("""() => { const el = document.querySelector('.js-plotly-plot');
        return el && el._fullLayout && (el._fullLayout.annotations || []).length >= 1; }""")

    sample = next((SAMPLES / n for n in ("pi_session.jsonl", "openai_chat.json") if (SAMPLES / n).exists()),
                  SAMPLES / "native_demo.jsonl")
    page.get_by_text("Upload", exact=True).click()
    page.locator("input[type=file]").set_input_files(str(sample))
    wait_for_text(page, f"{sample.name} · upload")
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    legends = page.evaluate(LEGEND_TEXTS)
    timeline_legend = next(lg for lg in legends if any(t.startswith("kept") for t in lg))
    assert [t.split(" ")[0] for t in timeline_legend[:4]] == list(STATUSES)
    assert page.locator("[data-testid=stException]").count() == 0


def test_bad_upload_shows_an_error_and_keeps_the_session(page, app_url, tmp_path):
    page.goto(app_url)
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    bad = tmp_path / "not-a-transcript.json"
    bad.write_text('{"hello": "world"}', encoding="utf-8")
    page.get_by_text("Upload", exact=True).click()
    page.locator("input[type=file]").set_input_files(str(bad))
    alert = page.locator("[data-testid=stAlertContentError]").first
    alert.wait_for(state="visible")
    assert "unknown format" in alert.inner_text()
    assert "Traceback" not in page.content()
    wait_for_text(page, "native_demo.jsonl · sample")  # the previous session is still shown


def test_compaction_page_compacts_offline(page, app_url):
    page.goto(f"{app_url}/compaction")
    page.get_by_text("Where the cut falls").wait_for()
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    page.get_by_role("button", name="Compact", exact=True).click()
    page.get_by_text("Summary, section by section").wait_for()
    for heading in ("Goal", "Progress", "Next Steps", "Critical Context"):
        page.get_by_role("heading", name=heading, exact=True).first.wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    save_screenshot(page, "compaction", height=1500)
    page.get_by_role("heading", name="Result").first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    save_screenshot(page, "compaction-result", height=1500)


def test_benchmarks_and_guide_pages_render(page, app_url):
    page.goto(f"{app_url}/benchmarks")
    page.get_by_role("heading", name="Benchmarks").first.wait_for()
    if (SAMPLES / "bench" / "results.json").exists():
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4")
        page.wait_for_timeout(1000)
        save_screenshot(page, "benchmarks", height=1500)
    assert page.locator("[data-testid=stException]").count() == 0
    page.goto(f"{app_url}/guide")
    page.wait_for_function(TIMELINE_DRAWN, arg=1)
    page.get_by_role("button", name="Next ▶").click()
    page.get_by_text("What changed, and why").wait_for()
    page.locator("[data-testid=stDataFrame]").first.wait_for()
    page.wait_for_timeout(1500)  # the table draws on a canvas after it is attached
    save_screenshot(page, "guide", height=1300)


def test_time_until_a_2000_turn_timeline_is_drawn(page, app_url):
    """Prints the time from navigation until the timeline of a generated 2,000-turn session is drawn.

    Also prints the bytes the page received over Streamlit's websocket (the
    figures and tables sent to the browser), a measure that does not depend on
    the machine's load.
    """
    workloads = pytest.importorskip("pruner.bench.workloads")
    messages = len(workloads.generate("tool_agent", turns=LARGE_TURNS, seed=0).messages)
    received = [0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.__setitem__(
        0, received[0] + len(payload))))
    start = time.perf_counter()
    page.goto(f"{app_url}/?workload=tool_agent&turns={LARGE_TURNS}&seed=0")
    page.wait_for_function(TIMELINE_DRAWN, arg=messages)  # the legend counts every message
    first = time.perf_counter() - start
    # let the rest of the page arrive, so the reload is not timed while the first run still draws
    page.locator("[data-testid=stDataFrame]").first.wait_for()
    page.get_by_text("Message inspector").first.wait_for()
    page.wait_for_timeout(2000)
    first_bytes, received[0] = received[0], 0
    start = time.perf_counter()
    page.reload()
    page.wait_for_function(TIMELINE_DRAWN, arg=messages)
    cached = time.perf_counter() - start
    page.get_by_text("Message inspector").first.wait_for()
    page.wait_for_timeout(2000)
    print(f"\n[browser] tool_agent {LARGE_TURNS} turns ({messages:,} messages): timeline drawn "
          f"{first:.1f} s after navigation (first load: generate + prune), {cached:.1f} s after a reload (cached); "
          f"page data received {first_bytes:,} bytes (first load), {received[0]:,} bytes (reload)")


def test_nothing_leaves_the_machine(page, server):
    """Runs last: every page visited by the tests above (and each page once more here) made no
    request to another host, from the browser or from the server process."""
    for path in ("", "benchmarks", "compaction", "guide"):
        page.goto(f"{server.url}/{path}")
        page.locator("h1").first.wait_for()
        page.wait_for_timeout(1500)
    assert OUTSIDE_REQUESTS == []
    assert server.outbound_attempts() == []
    assert "External URL" not in server.log.read_text(errors="replace")
