"""Pruning rules, one module per family, registered by name.

A rule is a pure function ``(index, alive, config) -> list[Removal]``: it reads
the session index and which messages are still alive, and says which of them
to remove, by which rule, pointing at which other message, with the facts
behind it (``detail``). It never mutates anything; ``pruner.engine.prune`` applies the
removals in rule order. Each rule name has an explanation that turns a removal
into the one-sentence reason a person reads; it runs after the passes, so
deciding stays cheap.

Add a rule by writing a module in this package that decorates its function with
``@register_rule("name", stage=...)`` and registers an explanation for every rule
name it emits with ``@explains("name")``; every module here is imported when the
package loads (see CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import ConfigurationError
from ..model import Message

#: The removal stages in pass order, and the status their removals get.
STAGES = {"expired": "expired", "duplicate": "duplicate"}


@dataclass(frozen=True)
class Removal:
    index: int
    rule: str
    related: int | None = None
    detail: tuple = ()  # the facts the explanation needs (a key, a path, a share)


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
        raise ConfigurationError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")

    def decorate(fn):
        RULES[name] = Rule(name=name, stage=stage, description=description, apply=fn)
        return fn
    return decorate


def rules_for(stage: str) -> list[Rule]:
    return [r for r in RULES.values() if r.stage == stage]


EXPLANATIONS: dict[str, Callable[[Removal, Sequence[Message]], str]] = {}


def explains(rule_name: str):
    """Decorator: ``fn(removal, messages) -> str`` explains removals by ``rule_name``."""
    def decorate(fn):
        EXPLANATIONS[rule_name] = fn
        return fn
    return decorate


def explain(removal: Removal, messages: Sequence[Message]) -> str:
    """The one-sentence reason for ``removal`` (indices refer to ``messages``)."""
    fn = EXPLANATIONS.get(removal.rule)
    return fn(removal, messages) if fn else f"removed by rule {removal.rule}"


def _load_builtin_rules() -> None:
    """Import every module of this package: each registers its rules as it loads, so a
    new rule is one new module here and nothing else. Modules load in name order;
    rules run in stage order, and within a stage in registration order."""
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load_builtin_rules()
