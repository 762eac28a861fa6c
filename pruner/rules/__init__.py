"""Pruning rules, one module per family, registered by name.

A rule is a pure function ``(index, alive, config) -> list[Removal]``: it reads
the session index and which messages are still alive, and says which of them
to remove, by which rule, why, and pointing at which other message. It never
mutates anything; ``pruner.prune`` applies the removals in rule order.

Add a rule by writing a module that decorates its function with
``@register_rule("name", stage=...)`` and importing it below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: The removal stages in pass order, and the status their removals get.
STAGES = {"expired": "expired", "duplicate": "duplicate"}


@dataclass(frozen=True)
class Removal:
    index: int
    rule: str
    reason: str
    related: int | None = None


@dataclass(frozen=True)
class Rule:
    name: str
    stage: str
    description: str
    apply: Callable[..., list[Removal]]


RULES: dict[str, Rule] = {}


def register_rule(name: str, *, stage: str, description: str):
    """Decorator: register ``fn`` as the rule ``name`` in ``stage`` (``expired`` or ``duplicate``)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")

    def decorate(fn):
        RULES[name] = Rule(name=name, stage=stage, description=description, apply=fn)
        return fn
    return decorate


def rules_for(stage: str) -> list[Rule]:
    return [r for r in RULES.values() if r.stage == stage]


from . import supersede, duplicates  # noqa: E402,F401  (registers the built-in rules, in order)
