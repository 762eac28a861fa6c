"""The Guide's steps, from its logic: each step's own effect, and compaction that shrinks the demo."""

from __future__ import annotations

import pytest

from dashboard import loading
from dashboard.logic import guide as logic
from dashboard.logic import guide_demo
from pruner import prune
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")


def step_of(name: str) -> logic.CompactionStep:
    loaded = loading.load_sample(name)
    window = logic.default_window(loaded) if logic.needs_window(loaded) else None
    return logic.compaction_step(logic.windowed(loaded, window))


def test_on_the_default_demo_compaction_shrinks_the_context_and_says_why_it_compacts_a_longer_chat():
    step = step_of(guide_demo.DEMO_SAMPLE)
    r = step.result
    assert step.continued and r.compacted_any
    assert r.tokens_after < r.tokens_before, "compaction must shrink what the demo's step compacts"
    # the demo alone is too short: the step says so with the library's own figures
    assert step.short.tokens_after >= step.short.tokens_before
    notes = logic.compaction_notes(step)
    assert f"({step.short.tokens_before:,} → {step.short.tokens_after:,} tokens)" in notes[0]
    assert "too short to compact" in notes[0]
    # the continued chat starts with the demo, message for message
    demo = loading.load_sample(guide_demo.DEMO_SAMPLE).session.messages
    assert step.source.session.messages[:len(demo)] == demo
    assert len(step.source.session.messages) == len(demo) + len(guide_demo.CONTINUATION)


def test_the_cache_explanation_is_always_there_when_something_was_compacted():
    for name in (guide_demo.DEMO_SAMPLE, "pi_session.jsonl", "workload-tool_agent-50.jsonl"):
        step = step_of(name)
        assert step.result.compacted_any, name
        notes = " ".join(logic.compaction_notes(step))
        assert "Why compaction breaks the prompt cache" in notes, name
        assert f"the {step.result.cache_invalidated_tokens:,} tokens of the previous prompt" in notes, name
        if step.result.tokens_saved > 0:
            assert "evens out after about" in notes, name
        else:
            assert "never paid back" in notes, name


def test_on_a_session_that_already_compacted_the_note_names_the_recorded_compaction_not_placeholders():
    step = step_of("pi_session.jsonl")
    assert step.recorded_messages > 0 and step.placeholder_tokens == 0
    note = next(n for n in logic.compaction_notes(step) if n.startswith("It starts from"))
    assert "recorded compaction" in note and "replaced" in note and "placeholders" not in note
    # what the recorded compaction replaced accounts for the whole difference from step 4
    assert step.step4_tokens - step.placeholder_tokens - step.recorded_tokens == step.result.tokens_before


def test_the_keep_recent_budget_comes_from_what_compaction_starts_from():
    """A session whose recorded compaction left less than the library's keep-recent budget still compacts
    (the issue's Pi file: 115,730 tokens sent at step 4, 14,505 after its summary, then 'nothing to compact')."""
    from pruner.model import Message, Session

    def text(i: int, words: int) -> str:
        return " ".join(f"w{i}x{j}" for j in range(words))
    old = [Message(id=f"o{i}", role="user" if i % 2 == 0 else "assistant", content=text(i, 1500)) for i in range(20)]
    summary = Message(id="s", role="user", content="<summary>\n## Goal\n- earlier work\n</summary>",
                      metadata={"kind": "compaction_summary"})
    recent = [Message(id=f"r{i}", role="user" if i % 2 == 0 else "assistant", content=text(100 + i, 400))
              for i in range(12)]
    session = Session.of([Message(id="sys", role="system", content="Be brief.")] + old + [summary] + recent)
    loaded = loading.LoadedSession(key="guide-recorded-compaction", label="synthetic", origin="upload",
                                   format="native", detected=False, session=session)
    step = logic.compaction_step(loaded)
    assert step.step4_tokens > 40_000 > 20_000 > step.result.tokens_before  # the library's budget is 20,000
    assert step.recorded_messages == len(old)
    assert step.result.compacted_any, step.result.cut_reason
    assert step.result.tokens_after < step.result.tokens_before


def test_the_demo_continuation_is_only_used_for_the_demo_sample():
    loaded = loading.load_sample("workload-tool_agent-50.jsonl")
    assert not guide_demo.is_demo(loaded)
    assert guide_demo.is_demo(loading.load_sample(guide_demo.DEMO_SAMPLE))
    assert (SAMPLES / guide_demo.DEMO_SAMPLE).exists()
    # the continuation is pruned like any session: every pass still has work in it
    statuses = prune(guide_demo.continued(loading.load_sample(guide_demo.DEMO_SAMPLE)).session).stats.by_status
    assert all(statuses[s] for s in ("expired", "duplicate", "restored")), statuses


def test_each_pruning_step_shows_its_own_effect_against_the_step_before():
    from streamlit.testing.v1 import AppTest

    from tests.support.paths import ROOT

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=180).run()
    at = at.switch_page("app_pages/guide.py").run()
    session = loading.load_sample(guide_demo.DEMO_SAMPLE).session
    previous = None
    for _, config, _ in logic.STEPS[:4]:
        assert config is not None
        tokens = prune(session, config).stats.tokens_after
        shown = next(m for m in at.metric if m.label == "Tokens sent")
        assert shown.value == f"{tokens:,}"
        if previous is not None and tokens != previous:
            assert shown.proto.delta == f"{tokens - previous:+,} in this step"
        previous = tokens
        at.button(key="guide_next").click().run()
    shown = next(m for m in at.metric if m.label == "Context compacted")
    step = logic.compaction_step(loading.load_sample(guide_demo.DEMO_SAMPLE))
    assert shown.value == f"{step.result.tokens_before:,} → {step.result.tokens_after:,}"
    assert shown.proto.delta.startswith("-")


def test_the_compaction_timeline_counts_what_this_compaction_summarises_and_what_was_compacted_before():
    from dashboard import tables
    from dashboard.timeline import timeline_figure

    step = step_of("pi_session.jsonl")
    r, pruned = step.result, step.pruned
    frame = tables.messages_frame(pruned.kept, pruned.decisions, [0] * len(pruned.kept.messages))
    fig = timeline_figure(frame, cut=r.cut_index, summarised_positions=step.replaced, earlier=step.earlier)
    names = [t.name for t in fig.data]
    assert f"summarised ({len(r.to_summarize) + len(r.turn_prefix):,})" in names
    assert f"compacted before ({step.recorded_messages:,})" in names
    kept = next(t for t in fig.data if t.legendgroup == "kept")
    assert kept.name == f"kept ({len(frame) - len(step.replaced) - len(step.earlier):,})"
