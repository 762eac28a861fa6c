"""Regression tests for the dashboard's defects in issue 12 (5, 6, 12, 14, 16, 17) and issue 14's logic.

Each test is named after the defect it keeps fixed. They drive the app with
Streamlit's AppTest (no browser needed) or call the page's logic directly.
"""

from __future__ import annotations

import json
import time
import tomllib

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import loading, session_state, tables, ui
from dashboard.analysis import Analysis
from dashboard.logic import compaction as compaction_logic
from dashboard.logic import explorer as explorer_logic
from pruner import PruneConfig, load_session, prune
from pruner.errors import ExportError
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

APP = ROOT / "dashboard" / "app.py"
DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"
SECRET = "sk-typed-in-the-page-0123456789"


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP), default_timeout=180).run().switch_page("app_pages/explorer.py").run()


def upload(at: AppTest, name: str, data: bytes, *, skip_bad_lines: bool = False) -> AppTest:
    if at.radio(key="source_kind").value != "Upload":
        at.radio(key="source_kind").set_value("Upload").run()
    if skip_bad_lines:
        at.checkbox(key="upload_skip_bad").check()
    at.file_uploader(key="upload_file").set_value((name, data, "application/octet-stream")).run()
    return at


def shown_text(at: AppTest) -> str:
    parts = [str(getattr(e, "value", "")) for kind in ("error", "warning", "info", "caption", "text", "markdown")
             for e in getattr(at, kind)]
    return "\n".join(parts)


def tau_bench_like(dialogues: int = 3) -> bytes:
    """A small file shaped like the real tau-bench one: a list of records, each with a ``traj``."""
    records = []
    for d in range(dialogues):
        traj = [{"role": "system", "content": "You are an airline agent."},
                {"role": "user", "content": f"Hello, I am customer {d}. Please look up my booking."},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{d}", "type": "function",
                     "function": {"name": "get_booking", "arguments": json.dumps({"customer": d})}}]},
                {"role": "tool", "tool_call_id": f"c{d}", "content": f"booking {d}: flight to Lisbon " * 4},
                {"role": "assistant", "content": "Here it is."}]
        records.append({"task_id": d, "reward": 1.0, "info": {}, "traj": traj, "trial": 0})
    return json.dumps(records).encode()


# ------------------------------------------------------------------ defect 5: downloads never fail silently

def test_a_download_that_cannot_be_written_says_why_instead_of_doing_nothing(app, monkeypatch):
    """Defect 5."""
    def refuse(source, *, to):
        raise ExportError(f"cannot export to {to}: the header's metadata is not an object")
    monkeypatch.setattr(explorer_logic, "dumps", refuse)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=180).run().switch_page("app_pages/explorer.py").run()
    assert not at.exception
    assert [b.label for b in at.get("download_button")] == ["Decisions (CSV)"]
    errors = [e.value for e in at.error]
    assert any("Pruned session (native JSONL): cannot be written" in e and "metadata is not an object" in e
               for e in errors)


def test_text_that_is_not_unicode_is_refused_with_a_reason():
    """Defect 5."""
    loaded = loading.LoadedSession(key="k", label="x", origin="upload", format="native", detected=True,
                                   session=load_session(DEMO))
    result = prune(loaded.session)
    frame = tables.messages_frame(loaded.session, result.decisions, [1] * len(loaded.session.messages))
    real = explorer_logic.dumps
    try:
        explorer_logic.dumps = lambda source, *, to: "ok \ud800"
        exports = explorer_logic.exports(loaded, PruneConfig(), Analysis(result=result, frame=frame))
    finally:
        explorer_logic.dumps = real
    native = next(e for e in exports if e.key == "dl_native")
    assert native.data is None and "not valid Unicode" in native.error
    assert next(e for e in exports if e.key == "dl_csv").data  # the CSV is still offered


# ------------------------------------------------------------------ defect 6: a garbage base URL

def compaction_page(at: AppTest) -> AppTest:
    return at.switch_page("app_pages/compaction.py").run()


def test_a_garbage_base_url_gives_a_clear_error_and_the_offline_summary(app):
    """Defect 6."""
    at = compaction_page(app)
    at.radio(key="cmp_summarizer").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="cmp_base_url").set_value("::not a url::")
    at.text_input(key="cmp_api_key").set_value(SECRET)
    at.button(key="compact_button").click().run()
    assert not at.exception
    assert ui.GENERIC_ERROR not in [e.value for e in at.error]
    error = at.error[0].value.replace("\\", "")
    assert "not a url" in error and "http" in error  # names the setting and what it must look like
    assert any("offline summary below is still available" in i.value for i in at.info)
    assert any(m.value.startswith("#### ") for m in at.markdown)  # the offline summary's sections
    assert SECRET not in shown_text(at)


# ------------------------------------------------------------------ defect 12: no CLI flag for a dashboard user

def test_a_file_with_many_dialogues_opens_a_picker_instead_of_naming_a_flag(app):
    """Defect 12."""
    at = upload(app, "airline.json", tau_bench_like(3))
    assert not at.exception and not at.error
    assert "--dialogue" not in shown_text(at)
    picker = next(d.value for d in at.dataframe if "reduction %" in d.value.columns)
    assert list(picker["dialogue"]) == [0, 1, 2] and list(picker["messages"]) == [5, 5, 5]
    at.number_input(key="dialogue_number").set_value(2)
    at.button(key="open_dialogue").click().run()
    loaded = at.session_state[session_state.LOADED]
    assert (loaded.dialogue, loaded.label) == (2, "airline.json · dialogue 2")
    assert "customer 2" in loaded.session.messages[1].content


@pytest.mark.parametrize("name, data", [
    ("unknown.json", b'{"hello": "world"}'),
    ("broken.jsonl", b'{"pruner_session": 1}\n{"id": "m1", "role": "user", "content": "x"}\nnot json\n'),
    ("big.jsonl", DEMO.read_bytes()),
])
def test_no_load_error_names_a_command_line_flag(app, monkeypatch, name, data):
    """Defect 12."""
    monkeypatch.setattr(loading, "max_upload_bytes", lambda: 1_000)
    at = upload(app, name, data)
    assert not at.exception
    assert len(at.error) == 1
    assert "--" not in at.error[0].value


# ------------------------------------------------------------------ defect 14: misleading messages

def test_the_dropzone_limit_is_the_apps_limit():
    """Defect 14."""
    config = tomllib.loads((ROOT / "dashboard" / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    megabytes = config["server"]["maxUploadSize"]
    original = st.get_option
    try:
        st.get_option = lambda name: megabytes if name == "server.maxUploadSize" else original(name)
        assert loading.max_upload_bytes() == megabytes * 1024 * 1024
        assert ui.upload_limit_text() == f"{megabytes} MB"
    finally:
        st.get_option = original


def test_the_previous_session_is_mentioned_once_and_a_place_only_when_one_is_named(app):
    """Defect 14."""
    at = upload(app, "unknown.json", b'{"hello": "world"}')
    error = at.error[0].value
    assert error.count("previous session is still loaded") == 1
    assert "place named above" not in error
    at = upload(at, "broken.jsonl", b'{"pruner_session": 1}\n{"id": "m1", "role": "user", "content": 3}\n')
    error = at.error[0].value.replace("\\", "")
    assert ":2:" in error and "place named above" in error
    assert error.count("previous session is still loaded") == 1


def test_a_401_names_the_typed_key_not_an_environment_variable(app, openai_server, monkeypatch):
    """Defect 14."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = openai_server(["unauthorized"])
    at = compaction_page(app)
    at.radio(key="cmp_summarizer").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="cmp_base_url").set_value(server.url)
    at.text_input(key="cmp_api_key").set_value(SECRET)
    at.button(key="compact_button").click().run()
    error = at.error[0].value.replace("\\", "")
    assert "401" in error and "OPENAI_API_KEY" not in error and "API key" in error
    assert SECRET not in shown_text(at)


# ------------------------------------------------------------------ defect 16: bounded and cancellable

def test_the_endpoint_timeout_and_retries_are_settable_and_short_by_default(app, openai_server):
    """Defect 16."""
    at = compaction_page(app)
    at.radio(key="cmp_summarizer").set_value("OpenAI-compatible endpoint").run()
    assert at.number_input(key="cmp_timeout").value == compaction_logic.DEFAULT_TIMEOUT_S <= 15
    assert at.number_input(key="cmp_retries").value == compaction_logic.DEFAULT_RETRIES == 0
    server = openai_server(["hang"], hang_seconds=30)
    at.text_input(key="cmp_base_url").set_value(server.url)
    at.text_input(key="cmp_api_key").set_value(SECRET)
    at.number_input(key="cmp_timeout").set_value(1.0)
    at.button(key="compact_button").click().run()
    assert not at.exception
    assert len(server.requests) == 1  # no retry
    assert "offline summary below is still available" in shown_text(at)
    assert any("1 s" in c.value or "at most about 1 s" in c.value for c in at.caption)


def test_cancel_stops_waiting_and_shows_the_offline_summary(openai_server):
    """Defect 16."""
    server = openai_server(["hang"], hang_seconds=30)
    loaded = loading.load_sample(DEMO.name)
    session_state.set_current(loaded)
    preview = compaction_logic.default_settings(prune(loaded.session).stats.tokens_before)
    compact_input = compaction_logic.compaction_input(loaded, preview)
    choice = compaction_logic.SummarizerChoice(kind="endpoint", base_url=server.url, model="m", timeout_s=30)
    job = compaction_logic.start_compaction(compact_input, preview, choice, api_key=SECRET)
    started = time.monotonic()
    while not server.requests and time.monotonic() - started < 20:
        time.sleep(0.05)  # the request is out and the endpoint is silent
    assert not job.future.done()
    compaction_logic.cancel(compact_input, preview, choice)
    assert compaction_logic.running_job() is None
    outcome = compaction_logic.outcome_for(loaded, preview, choice)
    assert outcome.error.startswith("cancelled") and outcome.result.summarizer_name.startswith("offline")
    assert outcome.result.compacted_any
    server.close()  # wakes the abandoned request so nothing outlives the test


# ------------------------------------------------------------------ defect 17: repaired lines get a notice

def test_skipped_or_repaired_lines_get_a_dashboard_notice(app):
    """Defect 17."""
    good = DEMO.read_bytes().splitlines()
    data = b"\n".join(good[:3] + [b"this line is not JSON"] + good[3:]) + b"\n"
    at = upload(app, "damaged.jsonl", data, skip_bad_lines=True)
    assert not at.exception and not at.error
    notices = [w.value for w in at.warning]
    assert any("skipped 1 unreadable line" in n or "skipped 1 line that is not a JSON object" in n
               for n in notices)
    assert explorer_logic.repairs_notice(load_session(DEMO)) is None  # a clean file gets no notice


def test_the_notice_says_what_the_library_recorded():
    """The reader's own sentences (metadata["repairs"]) are what the notice says, every one of them.

    Defect 17."""
    from pruner import Message, Session
    repairs = [{"kind": "repeated_lines", "count": 2, "message": "dropped 2 exact repeats of an earlier line "
                "(lines 7, 9)", "lines": [7, 9]},
               {"kind": "renamed_ids", "count": 1, "message": "1 line reuses an earlier line's id with different "
                "content; kept under a new id: u1 -> u1#2", "lines": [12]}]
    session = Session.of([Message(id="u1", role="user", content="hi")], metadata={"repairs": repairs})
    notice = explorer_logic.repairs_notice(session)
    assert notice.startswith("Repairs made to open this file: dropped 2 exact repeats")
    assert "kept under a new id: u1 -> u1#2" in notice


def test_the_early_key_listener_names_every_stepper_button_the_pages_draw():
    # The listener that turns ← / → into a click of a page's button (dashboard/early_keys.py) names each
    # page's buttons by widget key: a renamed key would silently lose the keys, and a button that also had
    # a Streamlit ``shortcut`` would step twice per press (or lose presses made before it mounts, as in CI).
    import ast

    from dashboard.early_keys import STEPPERS
    keys: dict[str, set[str]] = {}
    for path in sorted((ROOT / "dashboard" / "app_pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "button":
                kw = {k.arg: k.value for k in node.keywords}
                assert "shortcut" not in kw, f"{path.name}:{node.lineno}: the early-key listener handles the keys"
                if isinstance(kw.get("key"), ast.Constant):
                    keys.setdefault(path.stem, set()).add(kw["key"].value)
    for page, buttons in STEPPERS.items():
        assert set(buttons) == {"ArrowLeft", "ArrowRight"}
        assert set(buttons.values()) <= keys.get(page, set()), (page, buttons, keys.get(page))


def test_a_repair_said_as_a_whole_clause_reads_as_a_sentence():
    """Issue 42: "To open this file the reader 2 lines are timed more than a second before …".

    Defect 42."""
    from pruner import Message, Session
    repairs = [{"kind": "timestamps_out_of_order", "count": 2, "message": "2 lines are timed more than a second "
                "before the line before it in its conversation", "lines": [3, 4]}]
    session = Session.of([Message(id="u1", role="user", content="hi")], metadata={"repairs": repairs})
    assert explorer_logic.repairs_notice(session) == ("Repairs made to open this file: 2 lines are timed more than a "
                                                      "second before the line before it in its conversation.")


def test_the_upload_limit_is_said_in_words_beside_every_uploader():
    """Issue 42: a file over the limit showed only a red icon (the browser refuses it before the app sees it).

    Defect 42."""
    from streamlit.testing.v1 import AppTest

    from dashboard import ui
    from tests.support.paths import ROOT

    sentence = ui.upload_limit_sentence()
    assert sentence.startswith(f"Files up to {ui.upload_limit_text()}.") and "pruner replay FILE" in sentence
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=180).run()
    assert sentence in [c.value for c in at.caption]  # the Start page
    at.switch_page("app_pages/explorer.py").run()
    at.radio(key="source_kind").set_value("Upload").run()
    assert sentence in [c.value for c in at.sidebar.caption]
