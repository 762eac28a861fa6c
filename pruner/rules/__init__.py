"""Pruning rules, one module per family, each declaring everything about itself where it registers.

A rule family is a pure function ``(index, alive, config) -> iterable of Removal``: it
reads the session index (``pruner.analysis.index``) and which messages are still alive,
and says which of them to remove, by which rule name, pointing at which other message,
with the facts behind it (``detail``). It never mutates anything; ``pruner.engine.prune``
applies the removals in stage order, and within a stage in registration order.

``@register_rule(name, stage=..., description=...)`` declares, in one place:

* ``stage``: ``expired`` (pass 1), ``duplicate`` (pass 2) or ``restored`` (pass 3, which
  brings back what kept messages need; one family, ``pruner.rules.dependencies``);
* ``short``: the rule's name in compact tables (``pruner bench``); default: the name;
* ``placeholder``: what the export sends in place of a result this rule removed while its
  call is kept: a format string (``{where}`` is " at turn T (id X)" for the related
  message or empty, ``{message}`` the removed message) or ``fn(related, message) -> str``;
* ``emits``: for a family that writes other rule names into its decisions (e.g.
  ``duplicate_context`` emits ``exact_duplicate`` and ``near_duplicate``), the
  ``Emits(short=..., placeholder=...)`` of each;
* ``tracker``: the class that carries the rule from append to append in
  ``IncrementalPruner`` (the protocols are in ``pruner.engine.trackers``). Without
  one, ``IncrementalPruner`` prunes everything again on every append while the rule
  is registered: always right, never fast;
* ``removes_again``: ``fn(index, i, kept) -> witness index | True | None``: whether,
  when a restoration brought back a message this stage removed, pruning the kept
  set again would remove it again (``pruner.engine.rounds``). Without it, ``prune``
  simply runs the passes again on the kept set.

Every rule name a family emits also needs ``@explains(name)``: the one-sentence reason
a person reads. Explanations run only when someone reads the decisions, so deciding
stays cheap. Every module of this package is imported when the package loads, so a
new rule is one new module here and nothing else (see CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple, Protocol, Sequence, TypeVar

from ..errors import ConfigurationError
from ..model import Message
from ..registry import Registry, origin_of

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.index import SessionIndex
    from ..analysis.config import PruneConfig

#: The stages in pass order, and the status their decisions get.
STAGES = {"expired": "expired", "duplicate": "duplicate", "restored": "restored"}
#: The stages whose rules remove messages (``restored`` brings them back).
REMOVAL_STAGES = ("expired", "duplicate")


class Removal(NamedTuple):
    """One rule's verdict on one message: ``index`` (position), ``rule`` (the name written
    into the decision), ``related`` (the position it points at) and ``detail`` (the facts
    its explanation needs). A named tuple: rules make thousands per prune."""

    # The field shadows tuple.index (a method); renaming a public field is out of the question.
    index: int  # type: ignore[assignment]
    rule: str
    related: int | None = None
    detail: tuple[Any, ...] = ()


DEFAULT_PLACEHOLDER = "[result removed by pruning]"


class Alive(Protocol):
    """``alive[i]``: message ``i`` is still kept (a ``bytearray`` of 0/1 in ``prune``)."""

    def __getitem__(self, i: int, /) -> int: ...


class RuleFamily(Protocol):
    """The contract of a rule family: ``(index, alive, config) -> removals`` (or, for the
    ``restored`` stage, restorations), a pure function of its arguments."""

    def __call__(self, index: SessionIndex, alive: Alive, config: PruneConfig, /) -> Iterable[Removal]: ...


class RemovesAgain(Protocol):
    """``fn(index, i, kept) -> witness index | True | None`` (see the module docstring)."""

    # kept(i): truthy when message i is kept (a bool, or alive's 0/1)
    def __call__(self, index: SessionIndex, i: int, kept: Callable[[int], int], /) -> int | bool | None: ...


#: ``fn(related, message) -> str``: a placeholder computed from the messages.
Placeholder = str | Callable[[Message | None, Message], str]
#: ``fn(removal, messages) -> str``: the one-sentence reason for a removal.
Explanation = Callable[[Removal, Sequence[Message]], str]
F = TypeVar("F", bound=RuleFamily)
E = TypeVar("E", bound=Explanation)


@dataclass(frozen=True)
class Emits:
    """What a rule name written into decisions declares: its short name and placeholder."""

    short: str | None = None
    placeholder: Placeholder = DEFAULT_PLACEHOLDER


@dataclass(frozen=True)
class Rule:
    name: str
    stage: str
    description: str
    apply: RuleFamily
    emits: Mapping[str, Emits] = field(default_factory=dict)  # rule name -> its declaration
    # Called as the stage's protocol in pruner.engine.trackers says; IncrementalPruner checks what it returns.
    tracker: Callable[..., object] | None = None
    removes_again: RemovesAgain | None = None

    @property
    def status(self) -> str:
        return STAGES[self.stage]


#: Every registered rule family by name; a second family under a taken name is refused, naming both.
RULES: Registry[Rule] = Registry("rule", origin=lambda rule: origin_of(rule.apply))


def register_rule(name: str, *, stage: str, description: str, short: str | None = None,
                  placeholder: Placeholder | None = None, emits: Mapping[str, Emits] | None = None,
                  tracker: Callable[..., object] | None = None,
                  removes_again: RemovesAgain | None = None) -> Callable[[F], F]:
    """Decorator: register ``fn`` as the rule family ``name`` (see the module docstring)."""
    if stage not in STAGES:
        raise ConfigurationError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    if emits is None:
        default = "[same as the result{where}]" if stage == "duplicate" else DEFAULT_PLACEHOLDER
        emits = {name: Emits(short=short, placeholder=placeholder or default)}
    elif short is not None or placeholder is not None:
        raise ConfigurationError(f"rule {name!r}: give short and placeholder per emitted name in emits")

    declared = dict(emits)

    def decorate(fn: F) -> F:
        RULES.add(name, Rule(name=name, stage=stage, description=description, apply=fn, emits=declared,
                             tracker=tracker, removes_again=removes_again))
        return fn
    return decorate


def rules_for(stage: str) -> list[Rule]:
    return [r for r in RULES.values() if r.stage == stage]


_DECLARED: dict[str, tuple[Rule | None, Emits]] = {}  # rule name -> (its family, its declaration)


def declaration(rule_name: str) -> Emits:
    """The declaration of a rule name as it appears in decisions (default: plain)."""
    hit = _DECLARED.get(rule_name)
    if hit is not None and (hit[0] is None or RULES.get(hit[0].name) is hit[0]) and (
            hit[0] is not None or not any(rule_name in f.emits for f in RULES.values())):
        return hit[1]
    for family in RULES.values():
        e = family.emits.get(rule_name)
        if e is not None:
            _DECLARED[rule_name] = (family, e)
            return e
    _DECLARED[rule_name] = (None, Emits())
    return _DECLARED[rule_name][1]


def short_name(rule_name: str) -> str:
    return declaration(rule_name).short or rule_name


def placeholder_text(rule_name: str, related: Message | None, message: Message,
                     detail: tuple[Any, ...] = ()) -> str:
    """What the export sends for ``message``, a result ``rule_name`` removed, pointing at ``related``.

    A template may say ``{where}`` (" at turn T (id X)"), ``{message}`` and ``{share}``: the share of
    the text found in ``related`` as the rule measured it (``detail[0]``, rounded down, so a
    placeholder never claims more of a copy than the rule found).

    >>> from pruner.model import Message
    >>> original = Message(id="e29", role="tool", content="Fixed 1 file", turn=6, tool_call_id="c1")
    >>> copy = Message(id="e40", role="tool", content="No fixes applied", turn=9, tool_call_id="c2")
    >>> placeholder_text("near_duplicate", original, copy, (0.957,))
    '[95 % of this text appears in the result at turn 6 (id e29)]'
    >>> placeholder_text("exact_duplicate", original, copy)
    '[same as the result at turn 6 (id e29)]'
    """
    p = declaration(rule_name).placeholder
    if callable(p):
        return p(related, message)
    where = f" at turn {related.turn} (id {related.id})" if related is not None else ""
    parts = _TEMPLATES.get(p)
    if parts is None:  # a template that only says where: two literal halves, no format() per result
        parts = _TEMPLATES[p] = tuple(p.split("{where}", 1)) if (
            p.count("{") == 1 and "{where}" in p and "}" not in p.replace("{where}", "")) else ()
    if parts:
        return parts[0] + where + parts[1]
    share = f"{int(100 * float(detail[0]) + 1e-9)} %" if detail and isinstance(detail[0], (int, float)) else "part"
    return p.format(where=where, message=message, share=share)


_TEMPLATES: dict[str, tuple[str, ...]] = {}


#: The explanation of each rule name; a second one for a taken name is refused, naming both.
EXPLANATIONS: Registry[Explanation] = Registry("explanation", origin=origin_of)


def explains(rule_name: str) -> Callable[[E], E]:
    """Decorator: ``fn(removal, messages) -> str`` explains removals by ``rule_name``."""
    def decorate(fn: E) -> E:
        EXPLANATIONS.add(rule_name, fn)
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


__all__ = [
    "Alive", "DEFAULT_PLACEHOLDER", "EXPLANATIONS", "Emits", "Explanation", "Placeholder",
    "REMOVAL_STAGES", "RULES", "Removal", "RemovesAgain", "Rule", "RuleFamily", "STAGES", "declaration",
    "explain", "explains", "placeholder_text", "register_rule", "rules_for", "short_name"
]
