"""The examples in CONTRIBUTING.md work as written: the example rule, registered through the
public hook exactly as the guide shows, fires, explains itself, declares its short name and
placeholder, and is carried by the incremental pruner through its tracker."""

from __future__ import annotations

import re

import pytest

from pruner import IncrementalPruner, Message, Session, ToolCall, prune
from pruner.rules import EXPLANATIONS, RULES, placeholder_text, short_name
from tests.support.paths import ROOT

GUIDE = ROOT / "CONTRIBUTING.md"


def _example(heading: str) -> str:
    section = GUIDE.read_text(encoding="utf-8").split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def example_rule():
    before_rules, before_explanations = dict(RULES), dict(EXPLANATIONS)
    exec(compile(_example("## Add a pruning rule"), "CONTRIBUTING.md", "exec"), {})
    yield
    RULES.clear(), RULES.update(before_rules)
    EXPLANATIONS.clear(), EXPLANATIONS.update(before_explanations)


def _session():
    call = ToolCall(id="c1", name="grep", arguments={"q": "x"})
    return Session.of([
        Message(id="u1", role="user", content="find x"),
        Message(id="a1", role="assistant", content="", tool_calls=(call,)),
        # long enough to pay for the 7-token placeholder (a shorter one is kept: pruner.engine.payoff)
        Message(id="r1", role="tool", content="- " * 100, tool_call_id="c1"),
        Message(id="a2", role="assistant", content="nothing found"),
    ])


def test_example_rule_registers_and_fires(example_rule):
    assert "empty_result" in RULES and RULES["empty_result"].stage == "expired"
    result = prune(_session())
    d = result.decision("r1")
    assert (d.status, d.rule, d.reason) == ("expired", "empty_result", "the tool returned no text")
    assert short_name("empty_result") == "empty"
    assert result.placeholders == {"c1": "[the tool returned no text]"}
    assert placeholder_text("empty_result", None, _session().messages[2]) == "[the tool returned no text]"


def test_example_rule_is_carried_by_the_incremental_pruner(example_rule):
    session = _session()
    pruner = IncrementalPruner()
    for m in session.messages:
        update = pruner.append([m])
        assert not update.recomputed  # carried by its tracker, not by pruning everything again
    assert pruner.result().decisions == prune(session).decisions
    assert pruner.result().decision("r1").rule == "empty_result"
    assert "c1" in pruner.context().placeholders


def test_without_the_example_rule_the_empty_result_is_kept():
    assert "empty_result" not in RULES
    assert prune(_session()).decision("r1").status == "kept"
