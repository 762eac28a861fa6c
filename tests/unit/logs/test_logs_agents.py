"""The agents registry (``pruner.logs.agents``): one module per agent, everything else follows it."""

from __future__ import annotations

import dataclasses

import pytest

from pruner.cli import build_parser
from pruner.formats import FORMATS
from pruner.logs.agents import AGENTS, Agent, register_agent
from pruner.logs.discover import agent_roots
from pruner.registry import DuplicateRegistrationError


def test_every_agent_reads_a_registered_format_and_has_its_own_flag_and_variable():
    assert len(AGENTS) >= 4
    for agent in AGENTS.values():
        assert agent.format in FORMATS, agent.name
    assert len({a.flag for a in AGENTS.values()}) == len(AGENTS)
    assert len({a.variable for a in AGENTS.values()}) == len(AGENTS)


def test_a_second_agent_under_a_taken_name_is_refused():
    def find(root: str) -> list:
        return []

    other = dataclasses.replace(AGENTS["codex"], find=find)
    with pytest.raises(DuplicateRegistrationError, match="codex"):
        register_agent(other)


def test_a_registration_that_is_not_an_agent_is_refused():
    with pytest.raises(Exception, match="Agent"):
        register_agent("codex")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_each_agent_has_its_flag_and_its_variable_moves_its_folder(name, tmp_path):
    agent: Agent = AGENTS[name]
    help_text = build_parser().parse_args(["logs", f"--{agent.flag}-dir", str(tmp_path)])
    assert getattr(help_text, f"dir_{name}") == str(tmp_path)
    moved = agent_roots({"HOME": "/nowhere", agent.variable: str(tmp_path)})[name]
    assert moved == (str(tmp_path / (agent.variable_inner or agent.inner)), f"${agent.variable}")
    home = agent_roots({"HOME": str(tmp_path)})[name][0]
    assert home.startswith(str(tmp_path)) and home.endswith(agent.inner)
