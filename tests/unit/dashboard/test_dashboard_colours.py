"""The four status colours mean the four statuses, and nothing else, in every chart the dashboard draws.

Every page is run through Streamlit's AppTest on samples (the demo, the Pi session that compacted, a Claude
Code log, a generated agent session, a batch folder), every Guide step, the Compaction result and the
Benchmarks page; each Plotly figure's spec is read, and every colour in it that is a status colour must
belong to that status: a trace whose legend group or name is the status, or a bar whose own label (x, y or
custom data) is the status. Anything else (a role, a kind of context, a strategy, a cache miss, a shape)
painted kept-blue, expired-vermillion, duplicate-orange or restored-green fails, naming the chart.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.logic import guide as guide_logic
from dashboard.theme import STATUS_COLOURS
from pruner import STATUSES
from pruner.batch import run_batch
from tests.support.paths import ROOT, SAMPLES

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

APP = ROOT / "dashboard" / "app.py"
STATUS_OF = {colour.upper(): status for status, colour in STATUS_COLOURS.items()}
COLOUR_KEYS = ("color", "fillcolor", "bgcolor", "bordercolor")


def _colours(value, path: str) -> Iterator[tuple[str, object]]:
    """(path, colour value) for every colour key under ``value`` (a trace or a layout part)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in COLOUR_KEYS:
                yield f"{path}.{key}", inner
            elif key != "arrowcolor":  # an arrow links a message to the one its status names: that status's colour
                yield from _colours(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            if isinstance(inner, (dict, list)):
                yield from _colours(inner, f"{path}[{i}]")


def _status(colour: object) -> str | None:
    return STATUS_OF.get(colour.upper()) if isinstance(colour, str) else None


def _labels(trace: dict, i: int) -> set[str]:
    """What point ``i`` of ``trace`` is labelled: its x, y and custom data (plain values only)."""
    out = set()
    for key in ("x", "y", "customdata"):
        values = trace.get(key)
        if isinstance(values, list) and i < len(values) and isinstance(values[i], str):
            out.add(values[i])
    return out


def misuses(spec: dict) -> list[str]:
    """Every status colour in ``spec`` that does not mean its status."""
    title = (spec.get("layout", {}).get("title") or {}).get("text", "") or "(untitled chart)"
    bad = []
    for n, trace in enumerate(spec.get("data", [])):
        name = str(trace.get("name") or "")
        meaning = {str(trace.get("legendgroup") or ""), name.split(" (")[0]}
        for path, colour in _colours(trace, f"data[{n}]"):
            if isinstance(colour, list):
                for i, c in enumerate(colour):
                    status = _status(c)
                    if status and status not in _labels(trace, i) | meaning:
                        bad.append(f"{title}: {path}[{i}] is {status}'s colour on {sorted(_labels(trace, i))}")
            elif (status := _status(colour)) and status not in meaning:
                bad.append(f"{title}: {path} is {status}'s colour on trace {name!r}")
    for path, colour in _colours({k: v for k, v in spec.get("layout", {}).items() if k != "template"}, "layout"):
        if _status(colour):
            bad.append(f"{title}: {path} is {_status(colour)}'s colour in the layout")
    return bad


def specs(at: AppTest) -> list[dict]:
    assert not at.exception, [e.value for e in at.exception]
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def visit(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run().switch_page(f"app_pages/{page}.py").run()


def test_the_check_finds_a_status_colour_used_for_another_meaning():
    wrong = {"layout": {"title": {"text": "roles"}}, "data": [
        {"name": "assistant", "line": {"color": STATUS_COLOURS["kept"]}},
        {"name": "kept (3)", "legendgroup": "kept", "marker": {"color": STATUS_COLOURS["kept"]}},
        {"x": ["kept", "tool: write"], "marker": {"color": [STATUS_COLOURS["kept"], STATUS_COLOURS["expired"]]}}]}
    assert misuses(wrong) == ["roles: data[0].line.color is kept's colour on trace 'assistant'",
                              "roles: data[2].marker.color[1] is expired's colour on ['tool: write']"]
    shape = {"layout": {"shapes": [{"line": {"color": STATUS_COLOURS["restored"]}}]}, "data": []}
    assert misuses(shape) == ["(untitled chart): layout.shapes[0].line.color is restored's colour in the layout"]


@pytest.mark.parametrize("page, params", [
    ("explorer", {}),
    ("explorer", {"sample": "pi_session.jsonl"}),
    ("explorer", {"sample": "claude_code.jsonl"}),
    ("replay", {}),
    ("replay", {"sample": "pi_session.jsonl"}),
    ("replay", {"sample": "workload-tool_agent-50.jsonl"}),
    ("benchmarks", {}),
])
def test_every_chart_on_the_page_keeps_the_status_colours_for_the_statuses(page, params):
    charts = specs(visit(page, **params))
    assert charts, f"{page} drew no chart"
    assert [m for spec in charts for m in misuses(spec)] == []


def test_the_timeline_draws_all_four_statuses_in_their_colours():
    charts = specs(visit("explorer"))
    timeline = next(s for s in charts if any(t.get("legendgroup") in STATUSES for t in s["data"]))
    drawn = {t["legendgroup"]: t["marker"]["color"] for t in timeline["data"] if t.get("legendgroup") in STATUSES}
    assert drawn == STATUS_COLOURS


def test_compaction_marks_summarised_messages_as_summarised_not_kept():
    at = visit("compaction", sample="pi_session.jsonl")
    at.button(key="compact_button").click().run()
    charts = specs(at)
    assert [m for spec in charts for m in misuses(spec)] == []
    timeline = next(s for s in charts if any(t.get("legendgroup") == "summarised" for t in s["data"]))
    summarised = next(t for t in timeline["data"] if t.get("legendgroup") == "summarised")
    assert summarised["name"].startswith("summarised (") and summarised["name"] != "summarised (0)"
    assert summarised["marker"]["color"].upper() not in STATUS_OF


def test_every_guide_step_keeps_the_status_colours_for_the_statuses():
    at = visit("guide")
    for step in guide_logic.TITLES:
        assert [m for spec in specs(at) for m in misuses(spec)] == [], step
        if step != guide_logic.TITLES[-1]:
            at.button(key="guide_next").click().run()
    timeline = next(s for s in specs(at) if any(t.get("legendgroup") == "summarised" for t in s["data"]))
    assert any(t["name"] != "summarised (0)" for t in timeline["data"] if t.get("legendgroup") == "summarised")


def test_the_corpus_charts_keep_the_status_colours_for_the_statuses(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for name in ("native_demo.jsonl", "pi_session.jsonl", "claude_code.jsonl", "workload-tool_agent-50.jsonl"):
        shutil.copy(SAMPLES / name, src / name)
    out = tmp_path / "out"
    run_batch([str(src)], out, workers=1)
    at = visit("corpus")
    at.text_input(key="corpus_folder_input").set_value(str(out))
    at.button[0].click().run()
    charts = specs(at)
    assert len(charts) >= 4
    assert [m for spec in charts for m in misuses(spec)] == []
