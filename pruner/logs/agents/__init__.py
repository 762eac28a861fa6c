"""The coding agents ``pruner logs`` reads: one module each, registered by name.

A module here defines ``AGENT`` (a ``base.Agent``: its folder, the variable that moves it, how its
sessions are listed, the format its files are read with, and its bill-only reader if it has one).
Every module of this package is registered when the package loads, ordered by ``Agent.order``, so a
new agent is one new module and nothing else: discovery (``pruner.logs.discover``), the
``--<flag>-dir`` options, ``--agent``'s choices and ``--list`` follow the registry.

>>> list(AGENTS)[:4]
['claude_code', 'codex', 'pi', 'gemini_cli']
"""

from __future__ import annotations

import importlib
import pkgutil

from ...errors import ConfigurationError
from ...registry import Registry, origin_of
from .base import Agent, UsageReader

AGENTS: Registry[Agent] = Registry("agent", origin=lambda a: origin_of(a.find))
"""Every agent ``pruner logs`` reads, by name, in listing order."""

#: The modules of this package that are not agents: the ``Agent`` type, and the read-only opening of an
#: agent's database (OpenCode, Goose).
_NOT_AGENTS = ("base", "database")


def register_agent(agent: Agent) -> Agent:
    if not isinstance(agent, Agent):
        raise ConfigurationError(f"an agent must be a pruner.logs.agents.base.Agent, not {type(agent).__name__}")
    return AGENTS.add(agent.name, agent)


def _load_builtin_agents() -> None:
    modules = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
               if not info.name.startswith("_") and not info.ispkg and info.name not in _NOT_AGENTS]
    found = []
    for module in modules:
        agent = getattr(module, "AGENT", None)
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"agent module {module.__name__} must define AGENT as an Agent")
        found.append(agent)
    for agent in sorted(found, key=lambda a: (a.order, a.name)):
        register_agent(agent)


_load_builtin_agents()

__all__ = ["AGENTS", "Agent", "UsageReader", "register_agent"]
