"""The bound's records: one ``Limit`` per family, the ``Limits`` of a session (frozen; the JSON is
produced from them, ``as_dict``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

#: The families in the order the JSON and the text list them.
FAMILY_ORDER = ("prune", "compaction", "clearing", "combined")


@dataclass(frozen=True)
class ScheduledAction:
    request: int
    action: str


@dataclass(frozen=True)
class Limit:
    """The cheapest schedule of one family in hindsight, under the replay's cache model."""

    family: str
    dollars: float | None  # None: no schedule of the family is feasible and meets the bar (or not applicable)
    saving_vs_recorded: float | None  # (recorded - dollars) / recorded: 0.106 is 10.6 % cheaper
    schedule: tuple[ScheduledAction, ...]
    min_recall: float
    recall: float | None
    exact: bool
    approximation: str | None
    feasible: bool
    parameters: Mapping[str, Any] | None = None  # clearing: the clear_tool_uses settings that win
    states_peak: int = 0  # the most distinct states the search held at one request
    seconds: float = 0.0
    note: str = ""  # why there is no figure, when there is none
    applicable: bool = True  # False: the family does not exist for this session's provider (clearing off Anthropic)
    #: A proven lower bound on the family's optimum: ``dollars`` when exact; below it when the search was a beam
    #: (branch and bound over what the beam cut); with no ``dollars``, what any feasible schedule would cost at
    #: least (``None``: proven that none is feasible, or not applicable).
    lower_bound: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dollars": None if self.dollars is None else round(self.dollars, 6),
            "saving_vs_recorded": None if self.saving_vs_recorded is None else round(self.saving_vs_recorded, 6),
            "schedule": [{"request": a.request, "action": a.action} for a in self.schedule],
            "min_recall": self.min_recall, "recall": self.recall, "exact": self.exact,
            "approximation": self.approximation, "feasible": self.feasible,
            "states_peak": self.states_peak, "note": self.note,
            "applicable": self.applicable,
            "lower_bound": None if self.lower_bound is None else round(self.lower_bound, 6)}
        if self.family == "clearing":
            out["parameters"] = None if self.parameters is None else dict(self.parameters)
        return out


@dataclass(frozen=True)
class Limits:
    """Every family's bound for one session, and the recording they are compared with."""

    families: Mapping[str, Limit]
    reference: str  # the strategy standing for the recording (as_recorded, else full)
    reference_dollars: float
    min_recall: float
    seconds: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def combined(self) -> Limit:
        return self.families["combined"]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: self.families[name].as_dict() for name in FAMILY_ORDER if name in self.families}
        # No seconds here: the JSON of a replay is the same on every run (the time is pruner.bench.bound's).
        out.update(reference=self.reference, reference_dollars=round(self.reference_dollars, 6))
        return out

    def regret(self, dollars: float | None, feasible: bool) -> float | None:
        """A strategy's dollars over the combined bound (None when either has no figure)."""
        bound = self.families.get("combined")
        if bound is None or bound.dollars is None or dollars is None or not feasible:
            return None
        return round(dollars - bound.dollars, 6)


def saving(recorded: float, dollars: float | None) -> float | None:
    if dollars is None or not recorded:
        return None
    return (recorded - dollars) / recorded
