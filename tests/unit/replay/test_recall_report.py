"""The committed recall report (sample_sessions/bench/recall_report.md and .json) is what the command
writes today, and its figures are the replay's (issue 20)."""

from __future__ import annotations

import json

import pytest
from pruner.replay import recall_report


@pytest.mark.slow
def test_committed_recall_report_equals_a_fresh_generation(real_data):
    report = recall_report.build()
    fresh_json = json.dumps(report, ensure_ascii=False, indent=1) + "\n"
    assert recall_report.OUT_JSON.read_text(encoding="utf-8") == fresh_json, \
        "run: python -m pruner.replay.recall_report"
    assert recall_report.OUT_MD.read_text(encoding="utf-8") == recall_report.markdown(report)


def test_report_lists_every_shared_session_with_ten_lost_terms_from_real_messages(real_data):
    from pruner import load_session

    data = json.loads(recall_report.OUT_JSON.read_text(encoding="utf-8"))
    files = {s["file"] for s in data["sessions"]}
    assert {"pi/large-session.jsonl", "codex/codemie-rollout-2026-05-11.jsonl",
            "tau-bench/gpt-4o-airline.json", "swe-agent/marshmallow-1867.function_calling_replace.traj"} <= files
    assert sum(f.startswith("claude-code/") for f in files) == 9
    pi = next(s for s in data["sessions"] if s["file"] == "pi/large-session.jsonl")
    session = load_session(real_data / pi["file"])
    for st in pi["strategies"].values():
        assert st["terms_missing"] == 0 or 1 <= len(st["lost"]) <= 10
        assert st["context_recall"] == round(1 - st["terms_missing"] / st["used_terms"], 6)
        for loss in st["lost"]:
            source = session.messages[loss["source_position"]]
            assert source.id == loss["source_id"] and loss["term"] in source.content + str(
                [c.arguments for c in source.tool_calls])
    assert pi["strategies"]["as_recorded"]["context_recall"] == 1.0
    # the bill once, then the recording modelled: every strategy's dollars are modelled, the recording's too
    assert pi["verdict"]["sentence"].startswith(f"Billed ${pi['verdict']['billed']:,.2f}; ")
    assert f"puts the same requests at ${pi['strategies']['as_recorded']['dollars']:,.2f} " in pi["verdict"]["sentence"]


def test_the_readme_quotes_the_agent_and_offline_summary_recall_of_the_committed_report():
    """Issue 20: the agent's own summary beside the offline one at equal length, in the README too; the
    sentence's figures are read here from the report's JSON, not from the library."""
    import re

    from tests.support.paths import ROOT

    data = json.loads(recall_report.OUT_JSON.read_text(encoding="utf-8"))
    (session,) = [s for s in data["sessions"] if s["recorded_compactions"]]
    (c,) = session["recorded_compactions"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    name = session["file"].rsplit("/", 1)[-1].removesuffix(".jsonl")
    expected = (f"(Claude Code, `{name}`), the agent's own {c['summary_tokens']:,}-token summary holds {c['held']} "
                f"of {c['candidates']} ({100 * c['held'] / c['candidates']:.0f} %); pruner's offline summariser, on "
                f"the same history at the same length ({c['offline_tokens']:,} tokens), holds {c['offline_held']} of "
                f"{c['candidates']} ({100 * c['offline_held'] / c['candidates']:.0f} %).")
    assert expected in readme, re.sub(r"\s+", " ", expected)
