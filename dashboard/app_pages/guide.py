"""Guide: step through pruning and compaction on a small demo session, one pass at a time."""

from __future__ import annotations

import streamlit as st

from pruner.compaction import compact

from dashboard import analysis, cache, charts, loading, tables, ui
from dashboard.logic import compaction as compaction_logic
from dashboard.logic import guide as logic
from dashboard.theme import STATUS_MEANINGS

DEMO = loading.DEFAULT_SAMPLE
ss = st.session_state



def step_by(delta: int) -> None:
    ss["guide_step"] = logic.moved(ss.get("guide_step"), delta)


def navigation() -> int:
    c1, c2, c3 = st.columns([1, 6, 1])
    c1.button("◀ Previous", on_click=step_by, args=(-1,), key="guide_prev", width="stretch")
    c3.button("Next ▶", on_click=step_by, args=(1,), key="guide_next", width="stretch")
    ss.setdefault("guide_step", logic.TITLES[0])
    with c2:
        title = st.segmented_control("Step", logic.TITLES, key="guide_step", label_visibility="collapsed")
    return logic.TITLES.index(title or logic.TITLES[0])


def pruning_step(demo, index: int) -> None:
    title, settings, text = logic.STEPS[index]
    now = analysis.analyse(demo, settings)
    before = analysis.analyse(demo, logic.STEPS[index - 1][1]) if index > 0 else None
    s = now.result.stats
    c1, c2, c3 = st.columns(3)
    c1.metric("Messages sent", f"{s.messages_after:,} of {s.messages_before:,}")
    c2.metric("Tokens sent", f"{s.tokens_after:,}", f"{s.tokens_after - s.tokens_before:+,} vs as it arrives",
              delta_color="inverse")
    changes = tables.status_changes(before.frame, now.frame) if before is not None else now.frame.iloc[0:0]
    c3.metric("Changed in this step", f"{len(changes):,} messages")
    st.subheader(title)
    fig = charts.timeline_figure(now.frame, highlight=changes["position"].tolist() if len(changes) else (),
                                 revision="guide")
    st.plotly_chart(fig, key=f"guide_timeline_{index}", config={"displaylogo": False})
    if len(changes):
        st.markdown("**What changed, and why**")
        for status in sorted(set(changes["status"])):
            st.caption(f"{status}: {STATUS_MEANINGS[status]}")
        st.dataframe(changes, hide_index=True, width="stretch", key=f"guide_changes_{index}",
                     column_config={"reason": st.column_config.TextColumn("reason", width="large")})
    elif index > 0:
        st.info("This pass changes nothing in the demo with these settings.")


def compaction_step(demo) -> None:
    pruned = analysis.analyse(demo, logic.STEPS[3][1]).result
    counter_tokens = pruned.stats.tokens_after
    preview = compaction_logic.default_settings(counter_tokens)

    def build():
        return compact(pruned.kept, preview.library(logic.STEPS[3][1].encoding), force=True,
                              use_usage=False)
    result = cache.memoised("guide_compaction", (demo.key, preview), build)
    kept_frame = analysis.analyse(demo, logic.STEPS[3][1]).frame
    kept_frame = kept_frame[kept_frame["status"].isin(["kept", "restored"])]
    frame = tables.messages_frame(pruned.kept, pruned.decisions, kept_frame["tokens"].tolist())
    st.subheader("5. Compaction (of the pruned demo)")
    fig = charts.timeline_figure(frame, cut=result.cut_index, split_turn=result.split_turn, revision="guide")
    st.plotly_chart(fig, key="guide_timeline_compaction", config={"displaylogo": False})
    c1, c2, c3 = st.columns(3)
    c1.metric("Tokens before → after", f"{result.tokens_before:,} → {result.tokens_after:,}")
    c2.metric("Messages summarised", f"{len(result.to_summarize) + len(result.turn_prefix):,}")
    c3.metric("Prompt-cache cost", f"{result.cache_invalidated_tokens:,} tokens")
    ui.inert(result.cut_reason)
    st.markdown("**The summary that replaces them, section by section**")
    for name, body in result.sections.items():
        with st.expander(ui.escape_markdown(name)):
            st.code(body.strip() or "(empty)", language=None, wrap_lines=True)


def render() -> None:
    st.title("Guide: how pruning works, step by step")
    try:
        demo = loading.load_sample(DEMO)
    except Exception as exc:
        st.error(f"The guide's demo session {DEMO} could not be loaded: {ui.escape_markdown(ui.error_text(exc))}")
        return
    st.caption(f"The demo: {DEMO}, a short support-agent conversation written to trigger every rule. "
               "Use Next to step through the passes; ringed marks are the messages that changed in the step.")
    index = navigation()
    st.markdown(logic.STEPS[index][2])
    if logic.STEPS[index][1] is not None:
        pruning_step(demo, index)
    else:
        compaction_step(demo)


ui.guarded(render)
