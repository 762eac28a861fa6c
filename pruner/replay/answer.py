"""One figure per fact, one rule per comparison: what a replay answers, written once for every view.

* **billed**: what the provider charged, from the log (``pruner.replay.bill`` through the calibration);
  ``None`` when the session records no usage;
* **modelled**: the same requests under pruner's cache model (the calibration's ``modelled``; on a
  session without usage, or when ``as_recorded`` was not replayed, the reference strategy's dollars);
* **error**: (modelled - billed) / billed, and the **band** it gives: ``max(|error|, BAND_FLOOR)``;
* per strategy, its **saving against the modelled recording** (never against the bill: a model is
  compared with a model), and whether that saving is outside the band (``measurable``);
* **visibility**: the share of the billed input tokens the transcript accounts for.

The CLI (``pruner replay``, ``pruner logs``), the JSON and every dashboard page read these figures;
none of them computes a saving or a baseline of its own.

Why a floor of 1 % under the band: the calibration error is one session's total, in which the
per-request errors of the cache model partly cancel (the shared real sessions show totals from -0.5 %
to +4.5 %), so a total that happens to land within 0.1 % of the bill does not make a 0.2 % saving
real. 1 % is also the project's other tolerance (the recall bar's, ``pruner.replay.verdict``).

Why warn under 50 % visibility: below half, most of what was billed is text pruner never sees (the
system prompt and tool definitions an agent sends with every request, encrypted reasoning, text the
log redacted), so a strategy's saving and its context recall describe the smaller part of the bill.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> a = answer(replay(generate("tool_agent", turns=20, seed=0), ["full", "cache_aware_prune"]))
>>> a.billed is None, a.reference, a.band, a.saving_of("cache_aware_prune").comparable
(True, 'full', 0.01, True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Iterable

from pruner.money import money

if TYPE_CHECKING:  # pragma: no cover
    from .calibration import Calibration
    from .engine import Replay

BAND_FLOOR = 0.01
VISIBILITY_WARN = 0.5
RECORDING = ("as_recorded", "full")  # what stands for the recording, in order of preference


@dataclass(frozen=True)
class Visibility:
    """How much of the billed input the transcript holds (our token counts, each request's capped at
    what the provider recorded for it), over every request that records usage."""

    seen: int
    billed: int

    @property
    def share(self) -> float:
        return self.seen / self.billed if self.billed else 1.0

    @property
    def warn(self) -> bool:
        return self.share < VISIBILITY_WARN

    def sentence(self) -> str:
        text = (f"Visibility: the transcript accounts for {self.seen:,} of the {self.billed:,} input tokens billed "
                f"({100 * self.share:.1f} %).")
        if self.warn:
            text += (f" Warning: under {100 * VISIBILITY_WARN:.0f} %, most of what was billed is text pruner does "
                     "not see (system prompt, tool definitions, encrypted or redacted text), so the savings and "
                     "the recall below describe only the part it sees.")
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"seen_tokens": self.seen, "billed_tokens": self.billed, "share": round(self.share, 4),
                "warn": self.warn, "threshold": VISIBILITY_WARN, "sentence": self.sentence()}


@dataclass(frozen=True)
class Saving:
    """One strategy against the modelled recording."""

    strategy: str
    dollars: float  # the strategy under the cache model (an infeasible one: the requests before it)
    status: str  # "comparable", "infeasible" (the API refuses a request) or "not_applicable"
    reason: str  # why it is not comparable ("" when it is)
    saving: float | None  # modelled recording - strategy (None: not comparable)
    share: float | None  # saving / modelled recording
    measurable: bool  # comparable and the saving's size is outside the band
    recall: float | None
    from_request: int | None = None  # infeasible: the first request the API would refuse

    @property
    def comparable(self) -> bool:
        return self.status == "comparable"

    def na(self) -> str:
        """Why a strategy that could not run has no figure, as every table says it: ``n/a: over the window
        from request 40 ($14.20 up to there)`` (never its partial dollars as an amount); "" when comparable."""
        if self.status == "not_applicable":
            return f"n/a: {self.reason}"
        if self.status == "infeasible":
            where = "" if self.from_request is None else f" from request {self.from_request:,}"
            return f"n/a: over the window{where} ({money(self.dollars)} up to there)"
        return ""

    def change(self) -> str:
        """The strategy's cost against the modelled recording: ``−31.8 %``, ``+3.1 %``; ``-`` when not comparable."""
        if self.share is None:
            return "-"
        return f"{signed(-100 * self.share)} %"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Figures:
    """The figures a replay's answer is made of (``pruner.replay.verdict.Answer`` holds them and says them)."""

    reference: str  # the strategy standing for the recording
    billed: float | None  # the bill (None: the session records no usage)
    modelled: float  # the recording under the cache model
    error: float | None  # (modelled - billed) / billed (None: nothing to calibrate against)
    band: float  # a saving whose share is within this is no measurable saving
    visibility: Visibility | None  # None: the session records no usage to compare with
    savings: tuple[Saving, ...]
    unpriced: bool = False  # every request is of a model without a price: no dollars to compare
    unpriced_requests: int = 0  # the bill's requests of models without a list price (not in ``billed``)
    unpriced_models: tuple[str, ...] = ()
    recorded_cost: float | None = None  # the agent's own recorded cost (OpenCode, Amp, Pi), when every request has one
    #: When the recording itself runs over the window (a generated session replayed at a smaller window),
    #: the request it stops at: no saving is measured against it (it is no whole session's cost).
    reference_infeasible_from: int | None = None
    reference_partial: float | None = None  # its dollars up to that request

    @property
    def reference_feasible(self) -> bool:
        return self.reference_infeasible_from is None

    def _billed_text(self, billed: float) -> str:
        """The bill in words; the requests it leaves out are named, never shown as $0 (issue 41)."""
        if not self.unpriced_requests:
            return f"Billed {money(billed)} (what the provider charged, from the log)"
        n = self.unpriced_requests
        models = ", ".join(self.unpriced_models) or "their model"
        why = (f"{n:,} request{'s' if n != 1 else ''} unpriced: {models} "
               f"{'has' if len(self.unpriced_models) <= 1 else 'have'} no list price")
        if billed:
            return f"Billed {money(billed)} priced (what the provider charged at list prices, from the log); {why}"
        out = f"No list price for any request: {why}"
        if self.recorded_cost is not None:
            out += (f"; billed {money(self.recorded_cost)} as the agent recorded it (its own cost, the only bill "
                    "there is)")
        return out

    def saving_of(self, strategy: str) -> Saving:
        return next(s for s in self.savings if s.strategy == strategy)

    def na_of(self, strategy: str) -> str:
        """``Saving.na`` of any strategy, the reference too (an infeasible recording is no amount either)."""
        if strategy == self.reference:
            if self.reference_feasible:
                return ""
            return Saving(strategy, self.reference_partial or 0.0, "infeasible", "", None, None, False, None,
                          self.reference_infeasible_from).na()
        return self.saving_of(strategy).na()

    def figures_line(self) -> str:
        """Billed, modelled and the error between them, once (every view prints this line)."""
        if self.billed is None:
            return (f"Modelled ({self.reference}, pruner's cache model): {money(self.modelled)}; the session "
                    f"records no usage, so there is no bill to calibrate against (band ±{100 * self.band:.1f} %).")
        if self.error is None and not self.billed and self.unpriced_requests:  # nothing priced: no bill to compare
            return (f"{self._billed_text(self.billed)}; modelled {money(self.modelled)} (the same requests under "
                    f"pruner's cache model); no error is measurable without a bill (band ±{100 * self.band:.1f} %).")
        if self.error is None:  # a bill of $0 (every request aborted or unpriced): no error to measure
            return (f"{self._billed_text(self.billed)}; modelled "
                    f"{money(self.modelled)} (the same requests under pruner's cache model); no error is measurable "
                    f"against a bill of {money(self.billed)} (band ±{100 * self.band:.1f} %).")
        return (f"{self._billed_text(self.billed)}; modelled "
                f"{money(self.modelled)} (the same requests under pruner's cache model, "
                f"{signed(100 * self.error)} % against the bill): a saving within ±{100 * self.band:.1f} % is no "
                "measurable saving.")

    def as_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "billed": self.billed, "modelled": self.modelled,
                "error": None if self.error is None else round(self.error, 4), "band": round(self.band, 4),
                "visibility": None if self.visibility is None else self.visibility.as_dict(),
                "unpriced": self.unpriced, "figures": self.figures_line(),
                "reference_feasible": self.reference_feasible,
                "reference_infeasible_from": self.reference_infeasible_from,
                "strategies": {s.strategy: s.as_dict() for s in self.savings}}


def signed(x: float, places: int = 1) -> str:
    """``x`` with its sign, the minus a minus sign (U+2212), as every view prints a change: ``+1.4``, ``−0.5``."""
    if 0 < abs(x) < 0.5 * 10 ** -places:  # a change the places would print as 0.0: one more place, or "< 0.01"
        places += 1
        if abs(x) < 0.5 * 10 ** -places:
            return ("−" if x < 0 else "+") + f"<{10 ** -places:.{places}f}"
    text = f"{abs(x):.{places}f}"
    return ("−" if x < 0 and float(text) else "+") + text


def rank_key(strategy: str, dollars: float, recall: float | None, order: Iterable[str] = ()) -> tuple[Any, ...]:
    """The one tie-break rule for "the best strategy" (Replay, Corpus, ``pruner logs``): the fewest dollars
    (to the millionth, the totals' precision: strategies that change nothing cost exactly the same), then
    the higher recall, then the simpler strategy (the registry's order: doing nothing before pruning
    before compacting), then the name."""
    names = list(order)
    if not names:
        from .strategy import strategy_names

        names = strategy_names()
    position = names.index(strategy) if strategy in names else len(names)
    return (round(dollars, 6), -(recall if recall is not None else 1.0), position, strategy)


def not_applicable_text(strategy: str) -> str:
    """Why a strategy that exists on other providers' APIs only was not run: ``does not apply
    (Anthropic-only context editing)`` (never "a request over the context window": it is not one)."""
    from .strategy import STRATEGIES

    spec = STRATEGIES.get(strategy)
    providers = getattr(spec.factory, "providers", None) if spec is not None else None
    feature = getattr(spec.factory, "feature", "API feature") if spec is not None else "API feature"
    if not providers:
        return "does not apply (another provider's API feature)"
    return f"does not apply ({'/'.join(p.capitalize() for p in providers)}-only {feature})"


def status_of(totals: dict[str, Any]) -> tuple[str, str]:
    """("comparable" | "infeasible" | "not_applicable", the reason) from a strategy's totals."""
    if not totals.get("applicable", True):
        return "not_applicable", not_applicable_text(str(totals.get("strategy", "")))
    feasible = totals["feasible"] if "feasible" in totals else not totals.get("rejected", 0)
    if not feasible:
        return "infeasible", str(totals.get("infeasible_reason") or "a request over the context window")
    return "comparable", ""


def visibility(r: "Replay") -> Visibility | None:
    """The share of billed input tokens the transcript accounts for (``None``: the session records no
    usage). The recording's own contexts are ``as_recorded``'s: when the caller did not replay it
    (``pruner replay --strategies full``), it is replayed here alone, with the same settings and
    prices, rather than reporting a session that records usage as one that does not."""
    if not r.recorded_usage:
        return None
    run = r.runs.get("as_recorded")
    if run is None:
        from .engine import replay

        run = replay(r.session, ["as_recorded"], settings=r.settings, prices=r.price_table,
                     snapshots=False).runs["as_recorded"]
    seen = billed = 0
    for req, row in zip(r.requests, run.rows):
        rec = req.recorded
        if rec is None or rec.aborted:
            continue
        seen += min(row.tokens, rec.context)
        billed += rec.context
    return Visibility(seen, billed) if billed else None


def answer(r: "Replay", calibration: "Calibration | None" = None) -> Figures:
    """The figures of ``r`` (``calibration``: ``from_replay(r)`` when already computed)."""
    from .calibration import from_replay

    runs = r.runs
    reference = next((n for n in RECORDING if n in runs), next(iter(runs)))
    c = calibration if calibration is not None else from_replay(r)
    ref = runs[reference].totals
    # Every strategy is billed over every request, so the recording is too (``dollars_modelled``); the error
    # is the calibration's, on the requests that record usage (the same figure when all of them do).
    modelled = float(ref.get("dollars_modelled", ref["dollars"]))
    billed: float | None = None
    error: float | None = None
    if c is not None and reference == "as_recorded":
        billed, error = c.billed, (c.modelled_error if c.billed else None)
    band = max(abs(error) if error is not None else 0.0, BAND_FLOOR)
    unpriced = bool(ref.get("unpriced_requests", 0)) and \
        ref.get("unpriced_requests", 0) >= ref.get("billed_requests", ref.get("requests", 0))
    ref_stop = None
    if status_of(ref)[0] == "infeasible":  # no whole session's cost: nothing is measured against it
        ref_stop = ref.get("infeasible_from")
        ref_stop = int(ref_stop) if isinstance(ref_stop, int) else 0
    savings = []
    for name, run in runs.items():
        if name == reference:
            continue
        t = run.totals
        status, why = status_of(t)
        dollars = float(t["dollars"])
        recall = t.get("context_recall")
        recall = float(recall) if isinstance(recall, (int, float)) else None
        stop = t.get("infeasible_from") if status == "infeasible" else None
        if status != "comparable" or unpriced or ref_stop is not None:
            savings.append(Saving(name, dollars, status, why, None, None, False, recall,
                                  int(stop) if isinstance(stop, int) else None))
            continue
        saving = round(modelled - dollars, 6)
        share = saving / modelled if modelled else 0.0
        savings.append(Saving(name, dollars, status, why, saving, share, abs(share) > band and modelled > 0, recall))
    models = c.by_model if c is not None else {}
    unpriced_models = tuple(sorted(m for m, v in models.items() if isinstance(v, dict) and v.get("priced") is False))
    return Figures(reference, billed, modelled, error, band, visibility(r), tuple(savings), unpriced,
                   unpriced_requests=c.unpriced_requests if c is not None and billed is not None else 0,
                   unpriced_models=unpriced_models,
                   recorded_cost=c.billed_recorded_cost if c is not None else None,
                   reference_infeasible_from=ref_stop,
                   reference_partial=None if ref_stop is None else float(ref["dollars"]))
