"""The timeline (dashboard/timeline.py), checked through its JSON spec: exact marks, bins, selection."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard import tables, timeline
from dashboard.theme import STATUS_COLOURS, STATUS_SYMBOLS
from pruner import ROLES, STATUSES, Decision, Message, Session, get_counter, load_session, message_tokens, prune
from tests.support.figures import spec
from tests.support.paths import ROOT

DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"


def status_traces(figure: dict) -> list[dict]:
    return [t for t in figure["data"] if t.get("legendgroup") in STATUSES]


@pytest.fixture(scope="module")
def demo_frame():
    if not DEMO.exists():
        pytest.skip("sample_sessions/native_demo.jsonl is missing")
    session = load_session(DEMO)
    result = prune(session)
    counter = get_counter()
    frame = tables.messages_frame(session, result.decisions, [message_tokens(m, counter) for m in session.messages])
    return session, result, frame


def test_timeline_has_the_four_statuses_in_theme_colours(demo_frame):
    _, result, frame = demo_frame
    figure = spec(timeline.timeline_figure(frame))
    traces = status_traces(figure)
    assert [t["legendgroup"] for t in traces] == list(STATUSES)
    for t in traces:
        status = t["legendgroup"]
        assert t["name"] == f"{status} ({result.stats.by_status[status]:,})"
        assert t["marker"]["color"] == STATUS_COLOURS[status]
        assert t["marker"]["symbol"] == STATUS_SYMBOLS[status]
        assert t["type"] == "scatter"
        positions = [c[0] for c in t["customdata"]]
        assert [result.decisions[p].status for p in positions] == [status] * len(positions)
    assert figure["layout"]["yaxis"]["ticktext"] == list(ROLES)


def test_timeline_switches_to_webgl_for_large_sessions(demo_frame):
    _, _, frame = demo_frame
    figure = spec(timeline.timeline_figure(frame, webgl_threshold=len(frame) - 1))
    assert {t["type"] for t in status_traces(figure)} == {"scattergl"}


def test_absent_status_keeps_its_legend_entry():
    s = Session.of([Message(id="u", role="user", content="hello")])
    frame = tables.messages_frame(s, None, [1])
    traces = status_traces(spec(timeline.timeline_figure(frame)))
    restored = [t for t in traces if t["legendgroup"] == "restored"][0]
    assert restored["name"] == "restored (0)" and restored["x"] == [None]


def test_hover_text_from_the_transcript_is_html_escaped():
    evil = '<a href="https://evil.example/x">click</a>'
    s = Session.of([Message(id=evil, role="user", content="<img src=https://evil.example/i.png>"),
                    Message(id="u2", role="user", content="x")])
    frame = tables.messages_frame(s, [Decision(evil, "expired", "ttl", f"see {evil}"),
                                      Decision("u2", "expired", "ttl", "timed out")], [1, 1])
    text = timeline.timeline_figure(frame).to_json()
    assert "<a href" not in text and "<img" not in text
    expired = status_traces(spec(timeline.timeline_figure(frame)))[1]
    assert expired["text"][0] == 'user | rule: ttl<br>see &lt;a href="https://evil.example/x"&gt;click&lt;/a&gt;'


def test_hover_shows_role_tokens_rule_and_a_shortened_reason(demo_frame):
    _, result, frame = demo_frame
    long_reason = "superseded by " + "x" * 500
    frame = frame.assign(reason=[long_reason if st_ != "kept" else r
                                 for st_, r in zip(frame["status"], frame["reason"])])
    figure = spec(timeline.timeline_figure(frame))
    for t in status_traces(figure):
        rows = frame.set_index("position")
        for custom, text in zip(t["customdata"], t["text"]):
            if custom[0] is None:
                continue
            row = rows.loc[custom[0]]
            assert custom[1] == row["tokens"]
            assert text.startswith(row["role"])
            if t.get("meta"):  # a rule and reason shared by the whole trace are sent once
                rule, reason = t["meta"]
                assert "%{meta[0]}" in t["hovertemplate"] and "%{meta[1]}" in t["hovertemplate"]
            else:
                rule, reason = text.split(" | rule: ", 1)[1].split("<br>", 1)
            assert rule == (row["rule"] or "none")
            assert len(reason) <= timeline.HOVER_REASON_CHARS
            full = " ".join(row["reason"].split())
            assert reason == full or (reason.endswith("...") and full.startswith(reason[:-3]))
        assert "%{customdata[1]:,} tokens" in t["hovertemplate"] and "%{x:.0f}" in t["hovertemplate"]


def test_the_hover_turn_is_the_rounded_slot(demo_frame):
    _, _, frame = demo_frame
    assert (frame["slot"].round().astype(int) == frame["turn"]).all()


def test_exact_timeline_payload_stays_small_for_5000_marks():
    """The figure JSON the browser receives is bounded per mark (deterministic, not a timing)."""
    n, removed_every = timeline.MAX_EXACT_MARKS - 1000, 4
    reason = "superseded by a newer result of " + "read_file(" + '{"path":"a"}' * 30 + ")"
    roles = ["user", "assistant", "tool", "retrieved_doc"]
    messages = [Message(id=f"m{i}", role=roles[i % 4], content="x", turn=i // 5) for i in range(n)]
    s = Session.of(messages, number_turns=False)
    decisions = [Decision(f"m{i}", "expired", "superseded_call", reason) if i % removed_every == 0
                 else Decision(f"m{i}", "kept", "", "") for i in range(n)]
    frame = tables.messages_frame(s, decisions, [1_000 + i for i in range(n)])
    wide = 1e7  # wide enough that every mark fits: the exact view
    assert not timeline.plan_view(frame, width_px=wide).binned
    size = len(timeline.timeline_figure(frame, width_px=wide).to_json())
    # per mark: x (float32, base64) ~6 B, y (int8, base64) ~2 B, customdata "[1234,5678]," ~12 B,
    # role text ~16 B; per removed mark also its rule and a reason cut to HOVER_REASON_CHARS (JSON
    # escaping can double the quotes); plus a fixed layout.
    per_mark, per_removed = 40, 40 + 2 * timeline.HOVER_REASON_CHARS
    bound = n * per_mark + (n // removed_every) * per_removed + 20_000
    assert size <= bound, f"{size:,} bytes for {n:,} messages (bound {bound:,})"
    assert size < 60 * n  # the old per-point strings took over 110 B per message


def test_selected_removed_message_points_at_its_replacement(demo_frame):
    _, result, frame = demo_frame
    removed = next(i for i, d in enumerate(result.decisions) if d.status == "expired" and d.related)
    related = [d.id for d in result.decisions].index(result.decisions[removed].related)
    figure = spec(timeline.timeline_figure(frame, selected=removed))
    arrows = figure["layout"]["annotations"]
    slot = dict(zip(frame["position"], zip(frame["slot"], frame["lane"])))
    assert {"ax": slot[removed][0], "ay": slot[removed][1], "x": slot[related][0], "y": slot[related][1]} \
        in [{k: a[k] for k in ("ax", "ay", "x", "y")} for a in arrows]
    assert arrows[0]["arrowcolor"] == STATUS_COLOURS["expired"]


def test_selected_message_gets_arrows_from_everything_pointing_at_it(demo_frame):
    _, result, frame = demo_frame
    counts = pd.Series([d.related for d in result.decisions if d.related]).value_counts()
    target_id = counts.index[0]
    target = [d.id for d in result.decisions].index(target_id)
    own = 1 if result.decisions[target].related else 0
    figure = spec(timeline.timeline_figure(frame, selected=target))
    assert len(figure["layout"]["annotations"]) == counts.iloc[0] + own
    assert any(t["name"] == "selected" for t in figure["data"])


def test_restored_message_points_at_the_message_that_needed_it(demo_frame):
    _, result, frame = demo_frame
    restored = [i for i, d in enumerate(result.decisions) if d.status == "restored"]
    if not restored:
        pytest.skip("the demo has no restored message")
    figure = spec(timeline.timeline_figure(frame, selected=restored[0]))
    needed_by = [d.id for d in result.decisions].index(result.decisions[restored[0]].related)
    slot = dict(zip(frame["position"], frame["slot"]))
    assert any(a["ax"] == slot[restored[0]] and a["x"] == slot[needed_by] and
               a["arrowcolor"] == STATUS_COLOURS["restored"] for a in figure["layout"]["annotations"])


def test_cut_line_falls_between_the_last_summarised_and_first_kept_message(demo_frame):
    _, _, frame = demo_frame
    cut = 10
    figure = spec(timeline.timeline_figure(frame, cut=cut, recorded_cut=5))
    lines = [s for s in figure["layout"]["shapes"] if s["type"] == "line"]
    x = (frame.loc[cut - 1, "slot"] + frame.loc[cut, "slot"]) / 2
    assert lines[0]["x0"] == pytest.approx(x)
    assert lines[1]["line"]["dash"] == "dash"  # the recorded cut
    rect = [s for s in figure["layout"]["shapes"] if s["type"] == "rect"][0]
    assert rect["x1"] == pytest.approx(x) and rect["x0"] < frame["slot"].min()


def test_highlight_rings_exactly_the_given_positions(demo_frame):
    _, _, frame = demo_frame
    figure = spec(timeline.timeline_figure(frame, highlight=[1, 4]))
    ring = [t for t in figure["data"] if t["name"] == "changed in this step"][0]
    assert ring["x"] == [frame.loc[1, "slot"], frame.loc[4, "slot"]]


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(ROLES), st.sampled_from(STATUSES)), max_size=60),
       st.integers(0, 80))
def test_every_message_is_drawn_once_in_its_status_trace(rows, threshold):
    rows = sorted(rows, key=lambda r: r[0])
    frame = frame_of(rows)
    figure = spec(timeline.timeline_figure(frame, webgl_threshold=threshold, width_px=1e7))
    drawn = {}
    for t in status_traces(figure):
        for c in t["customdata"]:
            if c[0] is not None:
                drawn[c[0]] = t["legendgroup"]
    assert drawn == {i: status for i, (_, _, status) in enumerate(rows)}
    assert {t["type"] for t in status_traces(figure)} == {"scattergl" if len(rows) > threshold else "scatter"}


def test_selected_position_reads_the_streamlit_selection_event():
    event = {"selection": {"points": [{"curve_number": 1, "point_index": 0, "customdata": [7, "m08", 2]}],
                           "point_indices": [0], "box": [], "lasso": []}}
    assert timeline.selected_position(event) == 7
    assert timeline.selected_position({"selection": {"points": []}}) is None
    assert timeline.selected_position({"selection": {"points": [{"customdata": [None] * 7}]}}) is None
    assert timeline.selected_position(None) is None
    # a typed-array row serialised by the browser, or a bare number
    assert timeline.selected_position({"selection": {"points": [{"customdata": {"0": 12, "1": 40}}]}}) == 12
    assert timeline.selected_position({"selection": {"points": [{"customdata": 5}]}}) == 5


# ------------------------------------------------------------------ bins: no status hides another

def frame_of(rows) -> pd.DataFrame:
    """A messages frame from (turn, role, status) rows (turns ascending)."""
    s = Session.of([Message(id=f"m{i}", role=role, content="x", turn=turn)
                    for i, (turn, role, _) in enumerate(rows)], number_turns=False)
    decisions = [Decision(f"m{i}", status, "", "") for i, (_, _, status) in enumerate(rows)]
    return tables.messages_frame(s, decisions, [1] * len(rows))


def drawn_counts(figure: dict) -> dict[tuple, dict[str, int]]:
    """What the figure says per (bin x0, lane) or per exact mark: status -> count."""
    cells: dict[tuple, dict[str, int]] = {}
    for t in status_traces(figure):
        for custom in t.get("customdata") or []:
            if custom[0] is None:
                continue
            if custom[0] == timeline.BIN_MARK:
                key = ("bin", custom[9], custom[7])  # x0 and the first position identify a cell
                cells[key] = dict(zip(STATUSES, (int(c) for c in custom[3:7])))
            else:
                cells[("mark", custom[0])] = {t["legendgroup"]: 1}
    return cells


def status_totals(cells: dict) -> dict[str, int]:
    totals = dict.fromkeys(STATUSES, 0)
    for counts in cells.values():
        for status, n in counts.items():
            totals[status] += n
    return totals


@given(st.lists(st.tuples(st.integers(0, 400), st.sampled_from(ROLES), st.sampled_from(STATUSES)),
                min_size=1, max_size=400),
       st.floats(200, 3000), st.integers(0, 400), st.integers(1, 400))
def test_every_status_is_counted_and_visible_in_every_view(rows, width, start, span):
    """Exact or binned, whole session or zoomed: the counts shown are the counts, and every status
    present in a bin has a segment at least MIN_SHARE of the bar (nothing hides)."""
    rows = sorted(rows, key=lambda r: r[0])
    frame = frame_of(rows)
    x_range = (start - 0.5, start + span + 0.5)
    view = timeline.plan_view(frame, x_range, width_px=width)
    figure = spec(timeline.timeline_figure(frame, x_range=x_range, width_px=width))
    inside = frame[(frame["slot"] >= view.x0) & (frame["slot"] <= view.x1)]
    expected = {s: int((inside["status"] == s).sum()) for s in STATUSES}
    assert status_totals(drawn_counts(figure)) == expected
    assert [t["name"] for t in status_traces(figure)] == [f"{s} ({expected[s]:,})" for s in STATUSES]
    if view.binned:
        for t in status_traces(figure):
            if t.get("customdata") and t["customdata"][0][0] is not None:
                assert min(t["y"]) >= timeline.MIN_SHARE * timeline.BAND - 1e-9
    else:
        assert timeline.fits(inside, view.x0, view.x1, width_px=width)


@given(st.lists(st.lists(st.integers(0, 1000), min_size=4, max_size=4), min_size=1, max_size=30))
def test_segment_heights_fill_the_band_keep_the_order_and_show_every_present_status(rows):
    counts = [r for r in rows if sum(r) > 0] or [[1, 0, 0, 0]]
    heights = timeline.segment_heights(counts)
    for row, h in zip(counts, heights):
        assert sum(h) == pytest.approx(timeline.BAND)
        for c, x in zip(row, h):
            assert (x >= timeline.MIN_SHARE * timeline.BAND - 1e-9) if c else x == 0
        for a in range(4):
            for b in range(4):
                if row[a] > row[b]:
                    assert h[a] >= h[b] - 1e-9


def test_removed_marks_no_longer_hide_kept_ones_on_a_long_session():
    """Regression (issue 13): drawn as marks, the 2,000-turn workload's retrieved-doc lane looked all
    duplicate though most documents are kept. Binned, each lane shows every status with its count."""
    path = ROOT / "sample_sessions" / "workload-tool_agent-200.jsonl"
    session = load_session(path)
    result = prune(session)
    frame = tables.messages_frame(session, result.decisions, [1] * len(session.messages))
    figure = spec(timeline.timeline_figure(frame))
    assert figure["layout"]["meta"]["binned"]
    docs = frame[frame["role"] == "retrieved_doc"]
    lane = ROLES.index("retrieved_doc")
    cells = {}
    for t in status_traces(figure):
        for custom, base in zip(t["customdata"], t["base"]):
            if lane - timeline.BAND / 2 - 1e-6 <= base <= lane + timeline.BAND / 2:
                cells[(custom[9], custom[7])] = custom[3:7]
    totals = [sum(int(c[k]) for c in cells.values()) for k in range(4)]
    assert totals == [int((docs["status"] == s).sum()) for s in STATUSES]
    assert totals[0] > 0 and totals[2] > 0  # kept and duplicate documents both shown


def test_clicking_a_bin_zooms_down_to_exact_marks():
    path = ROOT / "sample_sessions" / "workload-tool_agent-200.jsonl"
    session = load_session(path)
    result = prune(session)
    frame = tables.messages_frame(session, result.decisions, [1] * len(session.messages))
    figure = spec(timeline.timeline_figure(frame))
    bar = next(t for t in status_traces(figure) if t.get("customdata") and t["customdata"][0][0] is not None)
    event = {"selection": {"points": [{"customdata": bar["customdata"][0]}]}}
    assert timeline.selected_position(event) is None
    x0, x1 = timeline.selected_bin(event)
    view = timeline.plan_view(frame, (x0, x1))
    assert not view.binned and view.marks > 0
    zoomed = spec(timeline.timeline_figure(frame, x_range=(x0, x1)))
    assert zoomed["layout"]["xaxis"]["range"] == [x0, x1]


def test_turn_ticks_are_whole_turns():
    """Regression (issue 14): a 3-turn session had ticks at 1.5 and 2.5."""
    for turns in (1, 2, 3, 7, 60, 2000):
        frame = frame_of([(t, "user", "kept") for t in range(turns)])
        axis = spec(timeline.timeline_figure(frame))["layout"]["xaxis"]
        assert axis["tickformat"] == ",d" and axis["dtick"] >= 1 and float(axis["dtick"]).is_integer()
