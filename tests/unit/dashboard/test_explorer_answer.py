"""Issue 42: "The Explorer leads with the same three lines and the visibility warning". The page is run through
Streamlit's AppTest and its strings are read: the first box under the title is the verdict ``pruner replay``
prints for the same file (run here through the CLI, a separate surface), the warning is the CLI's visibility
sentence, a session ``pruner replay`` refuses is refused in the same words, and a long session waits for a click.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import ui
from dashboard.logic import explorer_answer, replay_bound
from pruner.cli import main
from pruner.formats.copilot_cli import lump_usage
from pruner import load_session
from tests.support.paths import ROOT, SAMPLES
from tests.unit.replay.test_answer_three_lines import FRAGMENTS, _strings

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

APP = ROOT / "dashboard" / "app.py"
PAGE = ROOT / "dashboard" / "app_pages" / "explorer.py"


def open_explorer(sample: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["sample"] = sample
    at.run()
    at = at.switch_page("app_pages/explorer.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def in_order(at: AppTest) -> list[tuple[str, str]]:
    """The page's elements under its main block, in the order they are drawn: (type, value or label)."""
    out: list[tuple[str, str]] = []

    def walk(node) -> None:
        out.append((getattr(node, "type", ""), str(getattr(node, "value", getattr(node, "label", "")))))
        for k in sorted(getattr(node, "children", None) or {}):
            walk(node.children[k])

    walk(at.main)
    return out


def cli_answer(sample: str, capsys) -> tuple[list[str], dict]:
    """``pruner replay SAMPLE --json``: the verdict's lines and the answer's figures as the CLI writes them."""
    capsys.readouterr()
    assert main(["replay", str(SAMPLES / sample), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return doc["verdict"]["lines"], doc["answer"]


def test_the_explorer_leads_with_the_verdict_pruner_replay_prints_and_its_visibility_warning(capsys):
    sample = "pi_session.jsonl"  # 7 requests: answered as the page opens; the transcript holds 1.8 % of the bill
    lines, figures = cli_answer(sample, capsys)
    assert 2 <= len(lines) <= 3 and figures["visibility"]["warn"], "the case is real: a verdict and a warning"
    at = open_explorer(sample)
    drawn = in_order(at)
    kinds = [k for k, _ in drawn]
    verdict = "  \n".join(ui.escape_markdown(line) for line in lines)  # a line each, one paragraph
    assert ("info", verdict) in drawn
    first = kinds.index("info")
    assert drawn[first] == ("info", verdict), "the verdict is the page's first box"
    assert drawn[first + 1] == ("warning", ui.escape_markdown(figures["visibility"]["sentence"]))
    assert kinds.index("title") < first < kinds.index("metric"), "under the title, above the headline metrics"
    assert any(k == "page_link" and "Replay page" in v for k, v in drawn[first:kinds.index("metric")])


def test_a_session_pruner_replay_refuses_is_refused_on_the_explorer_in_the_same_words(capsys):
    sample = "copilot_cli.jsonl"  # usage one total per run (session.shutdown)
    why = lump_usage(load_session(SAMPLES / sample))
    assert why is not None, "the case is real: the CLI refuses this sample"
    capsys.readouterr()
    assert main(["replay", str(SAMPLES / sample)]) == 2
    said = capsys.readouterr().err
    billed = said.split("(billed ", 1)[1].split(";", 1)[0]  # the CLI's bill, e.g. $0.0415
    at = open_explorer(sample)
    shown = [i.value.replace("\\", "") for i in at.info]
    assert shown[0] == f"{why} (billed {billed}).", shown[0]
    assert why in said
    assert not any("would have" in s or "schedule could" in s for s in shown)  # no verdict beside the refusal


def test_the_replay_page_refuses_that_session_too_and_replays_nothing():
    sample = "copilot_cli.jsonl"
    why = lump_usage(load_session(SAMPLES / sample))
    assert why is not None
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["sample"] = sample
    at.run()
    at = at.switch_page("app_pages/replay.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [i.value.replace("\\", "") for i in at.info]
    assert any(s.startswith(why + " (billed $") for s in shown), shown
    assert not at.dataframe and not at.get("plotly_chart"), "no strategy's table or chart beside the refusal"


def test_a_long_session_is_replayed_for_the_lead_only_when_asked(monkeypatch, capsys):
    sample = "pi_session.jsonl"
    lines, _ = cli_answer(sample, capsys)
    monkeypatch.setattr(explorer_answer, "AT_ONCE_MAX_REQUESTS", 3)  # the 7-request sample counts as long
    monkeypatch.setattr(replay_bound, "AT_ONCE_MAX_REQUESTS", 3)  # and so its bound waits for the Replay page
    at = open_explorer(sample)
    assert not any(line.replace("\\", "") in i.value.replace("\\", "") for i in at.info for line in lines)
    at.button(key="explorer_lead_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    verdict = next(i.value.replace("\\", "") for i in at.info if "Billed" in i.value).split("  \n")
    assert verdict[:2] == lines[:2]  # the bill and the strategy as the CLI says them
    assert "was not computed (not yet" in verdict[2] and "on the Replay page" in verdict[2], verdict[2]


def test_the_explorer_page_draws_the_lead_it_is_given():
    """The page draws ``explorer_answer.lead``'s lines (``Answer.lines()``) and composes none of its own; the
    fragments of the verdict's sentences are looked for in its strings by
    ``test_answer_three_lines.test_no_surface_composes_a_verdict_sentence_of_its_own``."""
    from tests.unit.replay.test_answer_three_lines import SURFACES

    assert {"dashboard/app_pages/explorer.py", "dashboard/logic/explorer_answer.py"} <= set(SURFACES)
    page = _strings(PAGE)
    assert not [f for f in FRAGMENTS if f in page]
    code = PAGE.read_text(encoding="utf-8")
    assert "explorer_answer.lead(said)" in code and "for line in lead.lines" in code
