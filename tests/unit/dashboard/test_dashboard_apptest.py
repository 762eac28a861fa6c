"""Every dashboard page through Streamlit's AppTest: default views, uploads, settings, errors.

The app runs in-process, so ``dashboard.loading``, ``analysis`` and
``session_state`` here are the modules the pages use; expected numbers are computed by calling the library directly.
"""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import analysis, loading, session_state, ui
from dashboard.logic import benchmarks as bench_logic
from pruner import PruneConfig, STATUSES, load_session, prune
from pruner.formats import detect_format
from tests.support.paths import ROOT, SAMPLES

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")


APP = ROOT / "dashboard" / "app.py"
DEMO = SAMPLES / "native_demo.jsonl"
#: One sample of each supported format (the contract's names).
FORMAT_SAMPLES = ("openai_chat.json", "openai_responses.json", "anthropic_messages.json", "claude_code.jsonl",
                  "pi_session.jsonl", "codex_rollout.jsonl", "swe_agent.traj", "native_demo.jsonl")
SECRET = "sk-test-0123456789-do-not-echo"


@pytest.fixture
def app() -> AppTest:
    if not DEMO.exists():
        pytest.skip("sample_sessions/native_demo.jsonl is missing")
    return AppTest.from_file(str(APP), default_timeout=180).run().switch_page("app_pages/explorer.py").run()


def assert_clean(at: AppTest) -> None:
    """No exception element, no generic error, and no traceback text anywhere."""
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert ui.GENERIC_ERROR not in errors
    assert not any("Traceback" in e for e in errors)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def headline_of(result) -> dict[str, str]:
    """The headline metrics for ``result``: compact values (the exact figures are in their tooltips)."""
    s, n = result.stats, ui.compact_number
    return {"Messages before → after": f"{n(s.messages_before)} → {n(s.messages_after)}",
            "Tokens before → after": f"{n(s.tokens_before)} → {n(s.tokens_after)}"}


def assert_headline(at: AppTest, result) -> None:
    shown = metrics(at)
    for label, value in headline_of(result).items():
        assert shown[label] == value, label
    s = result.stats
    counts = " · ".join(f"{status} {s.by_status[status]:,}" for status in STATUSES)
    assert any(f"Messages per status: {counts}" in c.value for c in at.caption)


def frame_with(at: AppTest, column: str):
    """The first table on the page that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def timeline_spec(at: AppTest) -> dict:
    for spec in chart_specs(at):
        if spec["layout"].get("yaxis", {}).get("ticktext") and any(
                t.get("legendgroup") in STATUSES for t in spec["data"]):
            return spec
    raise AssertionError("no timeline chart on the page")


def all_text(at: AppTest) -> str:
    """Every string the page shows, for checking a secret never appears."""
    parts = []
    for kind in ("text", "code", "markdown", "caption", "error", "info", "warning", "success", "metric",
                 "subheader", "header", "title"):
        for el in getattr(at, kind):
            parts.append(str(getattr(el, "value", "")))
            parts.append(str(getattr(el, "label", "")))
    for el in at.get("plotly_chart"):
        parts.append(el.proto.spec)
    return "\n".join(parts)


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    if at.radio(key="source_kind").value != "Upload":
        at.radio(key="source_kind").set_value("Upload").run()
    at.file_uploader(key="upload_file").set_value((name, data, "application/octet-stream")).run()
    return at


# ------------------------------------------------------------------ explorer

def test_explorer_opens_on_the_pruned_demo_without_upload(app):
    assert_clean(app)
    assert_headline(app, prune(load_session(DEMO)))
    spec = timeline_spec(app)
    legend = [t["name"] for t in spec["data"] if t.get("legendgroup") in STATUSES]
    assert [n.split(" ")[0] for n in legend] == list(STATUSES)
    assert any("tiktoken/o200k_base" in c.value for c in app.caption)  # the counter is named
    assert [b.label for b in app.get("download_button")] == [
        "Pruned session (native JSONL)", "Pruned messages (OpenAI JSON)", "Decisions (CSV)"]


def test_upload_one_sample_of_each_format(app):
    present = [n for n in FORMAT_SAMPLES if (SAMPLES / n).exists()]
    if len(present) < 2:
        pytest.skip("format samples are missing")
    for name in present:
        path = SAMPLES / name
        upload(app, name, path.read_bytes())
        assert_clean(app)
        assert not app.session_state["load_error"], name
        loaded = app.session_state[session_state.LOADED]
        assert (loaded.label, loaded.origin) == (name, "upload")
        assert loaded.format == detect_format(path.read_text(encoding="utf-8")) and loaded.detected
        assert_headline(app, prune(load_session(path)))
        assert any(name in t.value and "detected" in t.value for t in app.text)


def test_format_can_be_overridden(app):
    upload(app, "demo.txt", DEMO.read_bytes())
    assert app.session_state[session_state.LOADED].detected
    app.selectbox(key="upload_format").set_value("native").run()
    assert_clean(app)
    loaded = app.session_state[session_state.LOADED]
    assert loaded.format == "native" and not loaded.detected
    assert any("(chosen)" in t.value for t in app.text)


@pytest.mark.parametrize("name, data, expected", [
    ("binary.jsonl", b"\x00\x01\x02 not text", "binary"),
    ("unknown.json", b'{"hello": "world"}', "unknown format"),
    ("broken.jsonl", b'{"pruner_session": 1}\n{"id": "m1", "role": "user", "content": 3}\n', ":2:"),
    ("empty.json", b"   ", "empty"),
])
def test_bad_upload_keeps_the_previous_session_and_says_what_to_do(app, name, data, expected):
    before = metrics(app)
    upload(app, name, data)
    assert_clean(app)
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and expected in errors[0].replace("\\", "")
    assert "previous session is still loaded" in errors[0]
    assert app.session_state[session_state.LOADED].label == DEMO.name
    assert metrics(app) == before


def test_a_session_without_messages_and_one_with_markup_render_safely(app):
    upload(app, "empty.jsonl", b'{"pruner_session": 1, "name": "empty"}\n')
    assert_clean(app)
    assert any("no messages" in i.value for i in app.info)
    compaction_page(app)
    assert any("no messages" in i.value for i in app.info)
    app.switch_page("app_pages/explorer.py").run()
    evil = "**bold** <img src=https://evil.example/i.png> [link](https://evil.example)"
    line = json.dumps({"id": "m1", "role": "user", "content": evil})
    upload(app, "<b>evil</b>.jsonl", b'{"pruner_session": 1}\n' + line.encode() + b"\n")
    assert_clean(app)
    app.number_input(key="inspect_pos").set_value(0).run()  # a new upload starts with nothing selected
    assert evil in [t.value for t in app.text]  # inert: plain text, not Markdown
    shown = [m.value for m in app.markdown] + [c.value for c in app.caption]
    assert not any("evil.example" in v for v in shown)
    assert any("<b>evil</b>.jsonl" in t.value for t in app.text)  # the file name as plain text


def test_file_over_the_limit_is_refused(app, monkeypatch):
    monkeypatch.setattr(loading, "max_upload_bytes", lambda: 100)
    upload(app, "big.jsonl", DEMO.read_bytes())
    assert_clean(app)
    error = app.error[0].value.replace("\\", "")
    assert "over the dashboard's 100-byte limit" in error and "files up to 100 bytes" in error
    assert "--" not in error  # no command-line flag for a dashboard user (issue 12, defect 14)
    assert app.session_state[session_state.LOADED].label == DEMO.name


def test_wrong_format_override_is_an_error_not_a_crash(app):
    upload(app, "demo.jsonl", DEMO.read_bytes())
    app.selectbox(key="upload_format").set_value("openai_chat").run()
    assert_clean(app)
    assert len(app.error) == 1
    assert app.session_state[session_state.LOADED].format == "native"  # the good upload is still loaded


def test_switching_the_source_to_a_generated_workload(app):
    from pruner.bench import workloads
    app.radio(key="source_kind").set_value("Generated workload").run()
    app.selectbox(key="workload_name").set_value("tool_agent")
    app.number_input(key="workload_turns").set_value(20)
    app.number_input(key="workload_seed").set_value(3)
    next(b for b in app.button if b.label == "Generate").click().run()
    assert_clean(app)
    assert_headline(app, prune(workloads.generate("tool_agent", turns=20, seed=3)))
    assert app.session_state[session_state.LOADED].origin == "workload"


def link_visit(**params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    for name, value in params.items():
        at.query_params[name] = str(value)
    return at.run()


def test_a_link_opens_a_workload_and_a_second_visit_reuses_the_pruning(monkeypatch):
    from pruner.bench import workloads
    params = {"workload": "tool_agent", "turns": 12, "seed": 4}
    key = loading.workload_key("tool_agent", turns=12, seed=4)
    assert not analysis.is_analysed(key, PruneConfig())
    first = link_visit(**params)
    assert_clean(first)
    assert_headline(first, prune(workloads.generate("tool_agent", turns=12, seed=4)))
    # the placeholder chart sent while pruning is gone: the timeline is the first chart
    assert "Loading and pruning" not in all_text(first)
    assert chart_specs(first)[0] == timeline_spec(first)
    assert analysis.is_analysed(key, PruneConfig())

    calls = []
    real = analysis.prune
    monkeypatch.setattr(analysis, "prune", lambda *a, **k: calls.append(1) or real(*a, **k))
    second = link_visit(**params)  # a reload: a new browser session, same process
    assert_clean(second)
    assert calls == []
    assert timeline_spec(second) == timeline_spec(first)


def test_switching_the_sample(app):
    other = next((n for n in loading.list_samples() if n != DEMO.name), None)
    if other is None:
        pytest.skip("only one sample")
    app.selectbox(key="sample_choice").set_value(other).run()
    assert_clean(app)
    assert_headline(app, prune(load_session(SAMPLES / other)))


def test_settings_form_applies_only_on_submit(app):
    default = metrics(app)
    app.checkbox(key="set_restore").uncheck()
    app.checkbox(key="set_deduplicate").uncheck()
    app.run()  # a rerun without submitting changes nothing
    assert metrics(app) == default
    app.checkbox(key="set_restore").uncheck()
    app.checkbox(key="set_deduplicate").uncheck()
    app.button(key="FormSubmitter:prune_settings-Apply settings").click().run()
    assert_clean(app)
    assert_headline(app, prune(load_session(DEMO), PruneConfig(restore=False, deduplicate=False)))


def test_filters_reuse_the_cached_pruning_result(app, monkeypatch):
    calls = []
    real = analysis.prune
    monkeypatch.setattr(analysis, "prune", lambda *a, **k: calls.append(1) or real(*a, **k))
    app.toggle(key="filter_changed").set_value(True).run()
    app.multiselect(key="filter_role").set_value(["tool"]).run()
    app.text_input(key="filter_text").set_value("order").run()
    assert_clean(app)
    assert calls == []  # the result (and the per-turn context) came from the cache
    result = prune(load_session(DEMO))
    table = app.dataframe[0].value
    by_id = {m.id: m for m in result.session.messages}
    expected = [d.id for d in result.decisions if d.status != "kept" and by_id[d.id].role == "tool"
                and "order" in by_id[d.id].content.lower()]
    assert list(table["id"]) == expected and expected


def test_inspector_shows_inert_content_and_follows_related_links(app):
    result = prune(load_session(DEMO))
    restored = next(i for i, d in enumerate(result.decisions) if d.status == "restored")
    needed_by = [d.id for d in result.decisions].index(result.decisions[restored].related)
    app.number_input(key="inspect_pos").set_value(restored).run()
    assert_clean(app)
    message = result.session.messages[restored]
    assert message.content in [t.value for t in app.text]  # shown as plain text, not Markdown
    assert not any(message.content in m.value for m in app.markdown)
    assert result.decisions[restored].reason in [t.value for t in app.text]
    app.button(key="go_related").click().run()
    assert app.session_state["inspect_pos"] == needed_by
    spec = timeline_spec(app)
    assert spec["layout"]["annotations"], "the selected message's links are drawn"


def test_unexpected_error_shows_a_generic_message_without_traceback(app, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("internal detail that must not reach the user")
    monkeypatch.setattr(analysis, "prune", boom)
    st.cache_data.clear()
    st.cache_resource.clear()  # pruning results are cached as resources (no pickling per hit)
    at = AppTest.from_file(str(APP), default_timeout=180).run().switch_page("app_pages/explorer.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == [ui.GENERIC_ERROR]
    assert "internal detail" not in all_text(at)


# ------------------------------------------------------------------ compaction

def compaction_page(at: AppTest) -> AppTest:
    at.switch_page("app_pages/compaction.py").run()
    assert_clean(at)
    return at


def test_compaction_page_draws_the_cut_and_compacts_offline(app):
    from dashboard.logic.compaction import default_settings
    from pruner.compaction import OfflineSummarizer, compact

    at = compaction_page(app)
    session = load_session(DEMO)
    preview = default_settings(prune(session).stats.tokens_before)
    expected = compact(session, preview.library("o200k_base"), OfflineSummarizer(), force=True)
    spec = [s for s in chart_specs(at) if s["layout"].get("shapes")][0]
    assert any(s["type"] == "line" for s in spec["layout"]["shapes"])  # the cut
    at.button(key="compact_button").click().run()
    assert_clean(at)
    shown = metrics(at)
    assert shown["Context after (tokens)"] == f"{expected.tokens_after:,}"
    assert shown["Prompt-cache cost (tokens)"] == f"{expected.cache_invalidated_tokens:,}"
    # issue 33: the compaction's dollars around it, at the session's model's list prices (worked out here)
    from pruner.money import money
    from pruner.replay import default_prices
    from pruner.replay.detect import detect

    provider, model, _ = detect(session, default_prices())
    price = default_prices().get(model, provider)
    rewrite = expected.cache_rewrite_tokens
    assert shown["Next request, compacted"] == money(((expected.tokens_after - rewrite) * price.cached_input
                                                      + rewrite * price.write_price("5m")) / 1e6)
    assert shown["Next request, as is"] == money(expected.tokens_before * price.cached_input / 1e6)
    assert shown["Each later request saves"] == money(
        (expected.tokens_before - expected.tokens_after) * price.cached_input / 1e6)
    assert "Summary recall" in shown
    headings = [m.value.removeprefix("#### ").replace("\\", "") for m in at.markdown if m.value.startswith("####")]
    assert headings == list(expected.sections)
    assert expected.request.user_message in [c.value for c in at.code]  # the exact request


def test_compaction_with_the_llm_endpoint(app, openai_server):
    server = openai_server(["ok"])
    at = compaction_page(app)
    at.radio(key="cmp_summarizer").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="cmp_base_url").set_value(server.url)
    at.text_input(key="cmp_model").set_value("test-model")
    at.text_input(key="cmp_api_key").set_value(SECRET)
    at.button(key="compact_button").click().run()
    assert_clean(at)
    assert not at.error
    assert any("Summarised by the local test server" in c.value for c in at.code)
    assert any("openai/test-model" in t.value for t in at.text)
    assert SECRET not in all_text(at)


def test_llm_error_is_shown_beside_the_offline_summary(app, openai_server):
    server = openai_server(["unauthorized"])  # the server echoes the key in its error text
    at = compaction_page(app)
    at.radio(key="cmp_summarizer").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="cmp_base_url").set_value(server.url)
    at.text_input(key="cmp_api_key").set_value(SECRET)
    at.button(key="compact_button").click().run()
    assert_clean(at)
    assert len(at.error) == 1 and "401" in at.error[0].value
    assert any("offline summary below is still available" in i.value for i in at.info)
    assert any(m.value.startswith("#### ") for m in at.markdown)  # the offline sections are there
    assert SECRET not in all_text(at)


def test_recorded_compactions_are_shown_beside_the_computed_cut(app):
    pi = SAMPLES / "pi_session.jsonl"
    if not pi.exists() or not load_session(pi).metadata.get("recorded_compactions"):
        pytest.skip("no Pi sample with a recorded compaction")
    app.selectbox(key="sample_choice").set_value(pi.name).run()
    at = compaction_page(app)
    table = next(d.value for d in at.dataframe if "recorded first kept #" in d.value.columns)
    assert len(table) == len(load_session(pi).metadata["recorded_compactions"])
    spec = [s for s in chart_specs(at) if s["layout"].get("shapes")][0]
    assert any(s.get("line", {}).get("dash") == "dash" for s in spec["layout"]["shapes"])


# ------------------------------------------------------------------ benchmarks and guide

def test_benchmarks_page_opens_on_the_committed_results_and_runs_a_small_benchmark(app):
    at = app.switch_page("app_pages/benchmarks.py").run()
    assert_clean(at)
    if not bench_logic.BENCH_RESULTS.exists():
        assert at.info, "says why there is nothing to show"
        return
    committed = bench_logic.committed_results()
    shown = metrics(at)
    summary = committed.summary
    assert shown["tagged facts preserved"] == \
        f"{summary['tagged_facts_preserved']['count']}/{summary['tagged_facts_preserved']['of']}"
    assert shown["idempotent"] == f"{summary['idempotent']['count']}/{summary['idempotent']['of']}"
    cost_charts = len({r["workload"] for r in committed.rows if r.get("cost")})  # one per workload
    recall_charts = len({r["workload"] for r in committed.rows
                         if any("context_recall" in c for c in (r.get("cost") or {}).values())})
    assert len(at.get("plotly_chart")) == (5 + (2 if bench_logic.SCALING_RESULTS.exists() else 0) + cost_charts
                                           + recall_charts)
    agreement = frame_with(at, "check")
    assert list(agreement["agrees"])[2] == summary["cost"]["recall"]["order_agrees"]
    reference = next(t.value for t in at.table if "reference (published)" in t.value.columns)  # a wrapping table
    assert "33.1–33.7 %" in set(reference["reference (published)"])  # the published tool-agent range
    assert list(frame_with(at, "token reduction %")["workload"]) == list(summary["per_workload"])
    assert len(frame_with(at, "prune_ms")) == len(committed.rows)
    assert [b.label for b in at.get("download_button")] == ["Results (CSV)", "Results (JSON)"]
    # a small run with other settings is drawn over the committed results; the committed file is untouched
    before = bench_logic.BENCH_RESULTS.read_bytes()
    at.multiselect(key="bench_workloads").set_value(["plain_chat"])
    at.multiselect(key="bench_sizes").set_value([50])
    at.number_input(key="bench_timing_runs").set_value(1)
    at.checkbox(key="bench_restore").uncheck()
    at.button(key="FormSubmitter:bench_form-Run benchmark").click().run()
    assert_clean(at)
    assert metrics(at)["configurations"] == str(summary["configurations"])  # the committed run stays
    assert list(frame_with(at, "prune_ms")["turns"]) == [50]  # your run's table comes first
    reduction = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                     if "Token reduction" in json.loads(c.proto.spec)["layout"]["title"]["text"])
    names = [t["name"] for t in reduction["data"]]
    assert "plain_chat (your run)" in names and "plain_chat (committed)" in names
    assert at.session_state["bench_run"].meta["config"]["restore"] is False
    assert bench_logic.BENCH_RESULTS.read_bytes() == before


def test_guide_steps_through_every_pass_and_compaction(app):
    at = app.switch_page("app_pages/guide.py").run()
    assert_clean(at)
    session = load_session(DEMO)
    steps = [PruneConfig(expire=False, deduplicate=False, restore=False),
             PruneConfig(expire=True, deduplicate=False, restore=False),
             PruneConfig(expire=True, deduplicate=True, restore=False), PruneConfig()]
    previous = None
    for config in steps:
        result = prune(session, config)
        assert metrics(at)["Messages sent"] == f"{result.stats.messages_after:,} of {result.stats.messages_before:,}"
        if previous is not None:
            changed = [d.id for d, p in zip(result.decisions, previous.decisions) if d.status != p.status]
            assert list(at.dataframe[0].value["id"]) == changed
        previous = result
        at.button(key="guide_next").click().run()
        assert_clean(at)
    assert any(e.label for e in at.expander)  # the summary sections
    assert "Prompt-cache cost (tokens)" in metrics(at)


@pytest.mark.parametrize("name, settings", [(DEMO.name, PruneConfig()), (DEMO.name, PruneConfig(restore=False)),
                                            ("workload-tool_agent-50.jsonl", PruneConfig())])
def test_context_per_turn_is_the_library_result_for_each_prefix(name, settings):
    """Each turn's pruned context equals prune() of the conversation up to that turn: at every turn when
    the incremental pruner carries the settings, at the sampled ones otherwise."""
    if not (SAMPLES / name).exists():
        pytest.skip(f"sample_sessions/{name} is missing")
    loaded = loading.load_sample(name)
    session = loaded.session
    from pruner import get_counter, message_tokens
    counter = get_counter(settings.encoding)
    tokens = tuple(message_tokens(m, counter) for m in session.messages)
    turns = tuple(range(0, session.last_turn + 1, 2))
    series = analysis._context_series(loaded.key, settings, turns, session, tokens)
    every = analysis.carries(settings)
    assert series.every_turn == every
    present = sorted({m.turn for m in session.messages})
    assert [t for t, _ in series.totals] == (present if every else [t for t in turns if t >= present[0]])
    assert [s["turn"] for s in series.by_role] == [t for t in turns if t >= present[0]]
    by_role = {s["turn"]: s["after"] for s in series.by_role}
    for turn, total in series.totals:
        prefix = session.with_messages([m for m in session.messages if m.turn <= turn])
        result = prune(prefix, settings)
        assert total == result.stats.tokens_after
        if turn in by_role:
            assert sum(by_role[turn].values()) == result.stats.tokens_after
            kept_roles = {m.role for m in result.kept.messages}
            assert {r for r, n in by_role[turn].items() if n} <= kept_roles | {"tool"}
