"""The dashboard's plotly figure builders (dashboard/charts.py), checked through their JSON spec."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

from dashboard import charts, tables  # noqa: E402
from dashboard.theme import STATUS_COLOURS, STATUS_SYMBOLS  # noqa: E402
from pruner import ROLES, STATUSES, Decision, Message, Session, get_counter, load_session, message_tokens, prune  # noqa: E402

DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"


def _decode(value):
    """A plotly typed-array spec (``{"dtype", "bdata", "shape"}``, how numpy arrays are sent) as lists."""
    if not (isinstance(value, dict) and "bdata" in value):
        return value
    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    if "shape" in value:
        array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
    return array.tolist()


def spec(fig) -> dict:
    """The figure's JSON as the browser gets it, with typed arrays decoded back to lists."""
    figure = json.loads(fig.to_json())
    for trace in figure["data"]:
        for key in ("x", "y", "customdata"):
            if key in trace:
                trace[key] = _decode(trace[key])
    return figure


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
    figure = spec(charts.timeline_figure(frame))
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
    figure = spec(charts.timeline_figure(frame, webgl_threshold=len(frame) - 1))
    assert {t["type"] for t in status_traces(figure)} == {"scattergl"}


def test_absent_status_keeps_its_legend_entry():
    s = Session.of([Message(id="u", role="user", content="hello")])
    frame = tables.messages_frame(s, None, [1])
    traces = status_traces(spec(charts.timeline_figure(frame)))
    restored = [t for t in traces if t["legendgroup"] == "restored"][0]
    assert restored["name"] == "restored (0)" and restored["x"] == [None]


def test_hover_text_from_the_transcript_is_html_escaped():
    evil = '<a href="https://evil.example/x">click</a>'
    s = Session.of([Message(id=evil, role="user", content="<img src=https://evil.example/i.png>"),
                    Message(id="u2", role="user", content="x")])
    frame = tables.messages_frame(s, [Decision(evil, "expired", "ttl", f"see {evil}"),
                                      Decision("u2", "expired", "ttl", "timed out")], [1, 1])
    text = charts.timeline_figure(frame).to_json()
    assert "<a href" not in text and "<img" not in text
    expired = status_traces(spec(charts.timeline_figure(frame)))[1]
    assert expired["text"][0] == 'user | rule: ttl<br>see &lt;a href="https://evil.example/x"&gt;click&lt;/a&gt;'


def test_hover_shows_role_tokens_rule_and_a_shortened_reason(demo_frame):
    _, result, frame = demo_frame
    long_reason = "superseded by " + "x" * 500
    frame = frame.assign(reason=[long_reason if st_ != "kept" else r
                                 for st_, r in zip(frame["status"], frame["reason"])])
    figure = spec(charts.timeline_figure(frame))
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
            assert len(reason) <= charts.HOVER_REASON_CHARS
            full = " ".join(row["reason"].split())
            assert reason == full or (reason.endswith("...") and full.startswith(reason[:-3]))
        assert "%{customdata[1]:,} tokens" in t["hovertemplate"] and "%{x:.0f}" in t["hovertemplate"]


def test_the_hover_turn_is_the_rounded_slot(demo_frame):
    _, _, frame = demo_frame
    assert (frame["slot"].round().astype(int) == frame["turn"]).all()


def test_timeline_payload_stays_small_for_10000_messages():
    """The figure JSON the browser receives is bounded per message (deterministic, not a timing)."""
    n, removed_every, reason = 10_000, 4, "superseded by a newer result of " + "read_file(" + '{"path":"a"}' * 30 + ")"
    roles = ["user", "assistant", "tool", "retrieved_doc"]
    messages = [Message(id=f"m{i}", role=roles[i % 4], content="x", turn=i // 5) for i in range(n)]
    s = Session.of(messages, number_turns=False)
    decisions = [Decision(f"m{i}", "expired", "superseded_call", reason) if i % removed_every == 0
                 else Decision(f"m{i}", "kept", "", "") for i in range(n)]
    frame = tables.messages_frame(s, decisions, [1_000 + i for i in range(n)])
    size = len(charts.timeline_figure(frame).to_json())
    # per mark: x (float32, base64) ~6 B, y (int8, base64) ~2 B, customdata "[1234,5678]," ~12 B,
    # role text ~16 B; per removed mark also its rule and a reason cut to HOVER_REASON_CHARS (JSON
    # escaping can double the quotes); plus a fixed layout.
    per_mark, per_removed = 40, 40 + 2 * charts.HOVER_REASON_CHARS
    bound = n * per_mark + (n // removed_every) * per_removed + 20_000
    assert size <= bound, f"{size:,} bytes for {n:,} messages (bound {bound:,})"
    assert size < 60 * n  # the old per-point strings took over 110 B per message


def test_selected_removed_message_points_at_its_replacement(demo_frame):
    _, result, frame = demo_frame
    removed = next(i for i, d in enumerate(result.decisions) if d.status == "expired" and d.related)
    related = [d.id for d in result.decisions].index(result.decisions[removed].related)
    figure = spec(charts.timeline_figure(frame, selected=removed))
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
    figure = spec(charts.timeline_figure(frame, selected=target))
    assert len(figure["layout"]["annotations"]) == counts.iloc[0] + own
    assert any(t["name"] == "selected" for t in figure["data"])


def test_restored_message_points_at_the_message_that_needed_it(demo_frame):
    _, result, frame = demo_frame
    restored = [i for i, d in enumerate(result.decisions) if d.status == "restored"]
    if not restored:
        pytest.skip("the demo has no restored message")
    figure = spec(charts.timeline_figure(frame, selected=restored[0]))
    needed_by = [d.id for d in result.decisions].index(result.decisions[restored[0]].related)
    slot = dict(zip(frame["position"], frame["slot"]))
    assert any(a["ax"] == slot[restored[0]] and a["x"] == slot[needed_by] and
               a["arrowcolor"] == STATUS_COLOURS["restored"] for a in figure["layout"]["annotations"])


def test_cut_line_falls_between_the_last_summarised_and_first_kept_message(demo_frame):
    _, _, frame = demo_frame
    cut = 10
    figure = spec(charts.timeline_figure(frame, cut=cut, recorded_cut=5))
    lines = [s for s in figure["layout"]["shapes"] if s["type"] == "line"]
    x = (frame.loc[cut - 1, "slot"] + frame.loc[cut, "slot"]) / 2
    assert lines[0]["x0"] == pytest.approx(x)
    assert lines[1]["line"]["dash"] == "dash"  # the recorded cut
    rect = [s for s in figure["layout"]["shapes"] if s["type"] == "rect"][0]
    assert rect["x1"] == pytest.approx(x) and rect["x0"] < frame["slot"].min()


def test_highlight_rings_exactly_the_given_positions(demo_frame):
    _, _, frame = demo_frame
    figure = spec(charts.timeline_figure(frame, highlight=[1, 4]))
    ring = [t for t in figure["data"] if t["name"] == "changed in this step"][0]
    assert ring["x"] == [frame.loc[1, "slot"], frame.loc[4, "slot"]]


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(ROLES), st.sampled_from(STATUSES)), max_size=60),
       st.integers(0, 80))
def test_every_message_is_drawn_once_in_its_status_trace(rows, threshold):
    rows = sorted(rows, key=lambda r: r[0])
    s = Session.of([Message(id=f"m{i}", role=role, content="x", turn=turn)
                    for i, (turn, role, _) in enumerate(rows)], number_turns=False)
    decisions = [Decision(f"m{i}", status, "", "") for i, (_, _, status) in enumerate(rows)]
    frame = tables.messages_frame(s, decisions, [1] * len(rows))
    figure = spec(charts.timeline_figure(frame, webgl_threshold=threshold))
    drawn = {}
    for t in status_traces(figure):
        for c in t["customdata"]:
            if c[0] is not None:
                drawn[c[0]] = t["legendgroup"]
    assert drawn == {i: status for i, (_, _, status) in enumerate(rows)}
    assert {t["type"] for t in status_traces(figure)} == {"scattergl" if len(rows) > threshold else "scatter"}


def test_context_figure_skips_an_uncomputed_stage():
    totals = pd.DataFrame({"turn": [0, 1, 2], "before": [10, 20, 30], "after": [None, None, 25]})
    figure = spec(charts.context_figure(totals))
    assert [t["name"] for t in figure["data"]] == ["before pruning", "after pruning"]
    assert figure["data"][0]["y"] == [10, 20, 30] and figure["data"][1]["x"] == [2]
    figure = spec(charts.context_figure(totals.assign(after=None)))
    assert [t["name"] for t in figure["data"]] == ["before pruning"]


def test_composition_stacks_only_roles_with_tokens():
    context = tables.context_frame([{"turn": 1, "after": {"user": 5, "tool": 0}},
                                    {"turn": 2, "after": {"user": 6, "tool": 3}}])
    figure = spec(charts.composition_figure(context))
    assert [t["name"] for t in figure["data"]] == ["user", "tool"]
    assert {t["stackgroup"] for t in figure["data"]} == {"roles"}
    assert figure["data"][1]["y"] == [0, 3]


def test_line_by_group_uses_log_axes_when_asked():
    frame = pd.DataFrame({"size": [50, 200, 50, 200], "ms": [1.0, 4.0, 2.0, 9.0], "w": ["a", "a", "b", "b"]})
    figure = spec(charts.line_by_group_figure(frame, x="size", y="ms", group="w", title="t", x_title="turns",
                                              y_title="ms", log_x=True, log_y=True))
    assert figure["layout"]["xaxis"]["type"] == "log" and figure["layout"]["yaxis"]["type"] == "log"
    assert [t["name"] for t in figure["data"]] == ["a", "b"] and figure["data"][1]["y"] == [2.0, 9.0]


def test_compaction_and_status_bars():
    figure = spec(charts.compaction_tokens_figure(100, 40, 90))
    assert figure["data"][0]["y"] == [100, 40, 90]
    bars = spec(charts.status_bar_figure({"kept": 3, "expired": 1}))
    assert bars["data"][0]["y"] == [3, 1, 0, 0]
    assert bars["data"][0]["marker"]["color"] == [STATUS_COLOURS[s] for s in STATUSES]


def test_selected_position_reads_the_streamlit_selection_event():
    event = {"selection": {"points": [{"curve_number": 1, "point_index": 0, "customdata": [7, "m08", 2]}],
                           "point_indices": [0], "box": [], "lasso": []}}
    assert charts.selected_position(event) == 7
    assert charts.selected_position({"selection": {"points": []}}) is None
    assert charts.selected_position({"selection": {"points": [{"customdata": [None] * 7}]}}) is None
    assert charts.selected_position(None) is None
    # a typed-array row serialised by the browser, or a bare number
    assert charts.selected_position({"selection": {"points": [{"customdata": {"0": 12, "1": 40}}]}}) == 12
    assert charts.selected_position({"selection": {"points": [{"customdata": 5}]}}) == 5
