"""One answer object: what a replay comes to, built once (``verdict``) and rendered by every surface.

``verdict(replay, min_recall=0.99, limits=...)`` returns an ``Answer``: the figures of
``pruner.replay.answer`` (billed, modelled, the error band, visibility, each strategy's saving against
the modelled recording, never against the bill; the infeasible and not-applicable strategies with why
and from which request), the verdict's choice, the named strategy's lost terms, and the least any
schedule could cost (``Bound``, read from the hindsight bound's result). ``Answer.lines()`` is the
verdict in at most three lines:

1. what was billed (and what pruner's cache model puts the same requests at);
2. the cheapest feasible, applicable strategy keeping ``min_recall`` of what the replies used, with its
   saving; or "Nothing would have saved money"; or "No measurable saving" within the band; or, when none
   reaches the bar, the feasible one that keeps the most. A strategy the API would refuse (over the
   window) or that is another provider's feature is never compared: it is listed as "n/a: over the
   window from request N ($X up to there)" (``Saving.na``). When the recording itself is infeasible, no
   saving is measured against it. Ties follow ``answer.rank_key``, the one rule;
3. what the named strategy would have lost (its most-lacked terms; a loss held by a recorded summary it
   does not send is said to be the summary's) and the least any schedule could cost.

``Answer.explain()`` holds the method and the caveats (``pruner replay --explain``, the Replay page's
expander); ``Answer.to_json()`` is ``pruner replay --json``'s ``verdict``.

The default bar, 99 %, is where the measure separates what matters from its own noise: on real
sessions pruning loses 0.3-1.1 % of the used terms, clearing tool results 0.7-8 %, compaction
5-17 % (issue 20's measurements), and a term can reach a reply from outside the transcript, so a bar
of 100 % would reject strategies for losses the proxy cannot tell from chance, while 95 % would let
most compactions through. It matches the project's other tolerance: 1 % of the dollars.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> v = verdict(replay(generate("tool_agent", turns=20, seed=0), ["full", "cache_aware_prune"]))
>>> v.best, v.outcome, len(v.lines()), v.lines()[0].startswith("No bill recorded")
('cache_aware_prune', 'saves', 3, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .answer import Figures, Saving, answer, rank_key, signed, status_of
from .lost import reason  # the one wording of why a message left (lost.py holds it: no circle)
from .recall import Loss, context_recall
from pruner.money import money

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

DEFAULT_MIN_RECALL = 0.99
#: What the verdict found, for views that colour or pick by it.
OUTCOMES = ("saves", "no_measurable_saving", "nothing_saves", "none_keeps", "no_reference", "no_feasible", "unpriced")


#: Where the method behind the three lines is explained (``Answer.explain`` and the Replay page's expander).
DOCS = (("Prompt-cache economics", "docs/explanation/cache-economics.md"),
        ("Calibration against real bills", "docs/explanation/calibration.md"),
        ("Context recall (the recall bar)", "docs/context-recall.md"),
        ("The hindsight bound", "docs/explanation/hindsight-bound.md"),
        ("Replay JSON (every figure named here)", "docs/reference/replay-json.md"))
#: How many lost terms the third line names.
TOP_LOST = 3


@dataclass(frozen=True)
class Bound:
    """The least any schedule could cost in hindsight at the recall bar, as the answer says it: read from the
    hindsight bound's combined family (``pruner.replay.limit``: ``dollars``, ``lower_bound``, ``exact``,
    ``note``), never recomputed here; ``computed`` false with ``note`` saying why there is none yet."""

    computed: bool
    min_recall: float
    dollars: float | None = None  # a real schedule's cost (None: no feasible schedule found)
    lower_bound: float | None = None  # proven: no schedule costs less
    exact: bool = False  # dollars is the optimum (the search was exhaustive)
    note: str = ""  # why there is no figure
    detail: str = ""  # the long sentence (schedule, the online strategy beside it): behind --explain

    def text(self) -> str:
        """"the least any schedule could cost at ≥ 99 % recall: $3.10 (exact)", else "between $L and $U"
        (never "best possible" for a figure not proven optimal)."""
        bar = f"at ≥ {100 * self.min_recall:g} % recall"
        if not self.computed:
            return f"the least any schedule could cost {bar} was not computed ({self.note})"
        if self.dollars is None:
            if self.lower_bound is not None:
                return f"any schedule {bar} would cost at least {money(self.lower_bound)}"
            return f"no schedule keeps every request within the window {bar}" + (
                f" ({self.note})" if self.note else "")
        if self.exact:
            return f"the least any schedule could cost {bar}: {money(self.dollars)} (exact)"
        if self.lower_bound is None:
            return f"the least any schedule could cost {bar}: at most {money(self.dollars)} (not proven the least)"
        return (f"the least any schedule could cost {bar}: between {money(self.lower_bound)} and "
                f"{money(self.dollars)}")

    def as_dict(self) -> dict[str, Any]:
        return {"computed": self.computed, "min_recall": self.min_recall,
                "dollars": None if self.dollars is None else round(self.dollars, 6),
                "lower_bound": None if self.lower_bound is None else round(self.lower_bound, 6),
                "exact": self.exact, "note": self.note, "text": self.text()}


def bound_of(limits: Any, min_recall: float, detail: str = "") -> Bound | None:
    """The answer's ``Bound`` from ``pruner.replay.limit``'s result (``None``: no combined family)."""
    if limits is None:
        return None
    c = limits.families.get("combined")
    if c is None:
        return None
    return Bound(True, c.min_recall if c.min_recall is not None else min_recall, c.dollars,
                 c.lower_bound if c.lower_bound is not None else (c.dollars if c.exact else None),
                 bool(c.exact and c.dollars is not None), c.note or "", detail)


@dataclass(frozen=True)
class LostTerm:
    """One of the terms the named strategy's context lacked most often, and why it left."""

    term: str
    requests: int  # how many requests lacked it
    why: str
    summary: bool  # held by a recorded compaction summary the strategy does not send (not its own loss)

    def as_dict(self) -> dict[str, Any]:
        return {"term": self.term, "requests": self.requests, "why": self.why, "summary": self.summary}


def _quoted(term: str) -> str:
    term = term if len(term) <= 40 else term[:39] + "…"
    return f"'{term}'"


@dataclass(frozen=True)
class Answer:
    """What a replay comes to: the figures (billed, modelled, the band, visibility, every strategy's saving,
    the infeasible and not-applicable ones with why and from which request), the verdict's choice (the
    cheapest feasible, applicable strategy that keeps ``min_recall`` of what the replies used), what it
    loses, and the least any schedule could cost (``bound``). Every surface renders it: ``lines()`` (the
    three-line verdict), ``explain()`` (method and caveats), ``to_json()`` (``pruner replay --json``'s
    ``verdict``); none composes a sentence of its own."""

    figures: Figures
    min_recall: float
    outcome: str  # one of OUTCOMES
    best: str | None = None  # the cheapest feasible strategy keeping min_recall (None: none does)
    best_dollars: float | None = None
    best_recall: float | None = None
    closest: str | None = None  # when nothing saves or none reaches the bar: the strategy named instead
    saving: float | None = None  # the named strategy's saving against the modelled recording
    bound: Bound | None = None
    lost: tuple[LostTerm, ...] = ()  # the named strategy's most-lacked terms (TOP_LOST)
    lost_summary: int = 0  # of the named strategy's lost terms, those held by a recorded summary it leaves out
    lost_terms: int = 0  # distinct terms the named strategy lost
    unpriced_requests: int = 0
    notes: tuple[str, ...] = ()  # caveats behind --explain (settings to tune, requests left unpriced)

    # -- the figures, by name ----------------------------------------------------------------------------
    @property
    def strategy(self) -> str | None:
        """The strategy the verdict names (the best, else the closest): the one a view opens on."""
        return self.best or self.closest

    @property
    def reference(self) -> str:
        return self.figures.reference

    @property
    def reference_dollars(self) -> float:
        return self.figures.modelled

    @property
    def billed(self) -> float | None:
        return self.figures.billed

    @property
    def band(self) -> float:
        return self.figures.band

    @property
    def excluded(self) -> tuple[Saving, ...]:
        """The strategies that could not run (infeasible, not applicable): never compared, never an amount."""
        return tuple(s for s in self.figures.savings if s.status != "comparable")

    @property
    def named(self) -> Saving | None:
        name = self.strategy
        return None if name is None else self.figures.saving_of(name)

    @property
    def sentence(self) -> str:
        return " ".join(self.lines())

    # -- the renderers -----------------------------------------------------------------------------------
    def lines(self) -> tuple[str, ...]:
        """The verdict in at most three lines: what was billed; the best feasible strategy at the recall bar
        with its saving (or that nothing would have saved money); what it would have lost and the least any
        schedule could cost. Transcript text (lost terms) is in them: a terminal escapes control characters,
        a page escapes markdown."""
        return tuple(x for x in (self._billed_line(), self._answer_line(), self._lost_line()) if x)

    def _bar(self) -> str:
        return f"{100 * self.min_recall:g} %"

    def _bill_words(self) -> str:
        """``Billed $X``; where no request had a list price, that said with the agent's own recorded cost
        (never "Billed $0.00": issue 41)."""
        f = self.figures
        if f.billed is not None and not f.billed and f.unpriced_requests:
            return f._billed_text(f.billed)
        return f"Billed {money(f.billed or 0.0)}"

    def _billed_line(self) -> str:
        f = self.figures
        if f.unpriced:
            return (f"Billed: unpriced (all {self.unpriced_requests:,} requests are of models without a price): "
                    "no dollars to compare.")
        if not f.reference_feasible:  # its dollars stop part-way: no amount of the session's
            out = ("No bill recorded (the session records no usage)" if f.billed is None else
                   f"Billed {money(f.billed)}") + (
                f"; the recording itself runs over the window from request {f.reference_infeasible_from:,}, so it "
                "has no whole-session figure to compare with.")
        elif f.billed is None:
            out = (f"No bill recorded (the session records no usage); pruner's cache model puts it at "
                   f"{money(f.modelled)}.")
        elif f.error is None:
            out = f"{self._bill_words()}; pruner's cache model puts the same requests at {money(f.modelled)}."
        else:
            out = (f"{self._bill_words()}; pruner's cache model puts the same requests at {money(f.modelled)} "
                   f"({signed(100 * f.error)} %, so a difference within ±{100 * f.band:.1f} % is no measurable "
                   "saving).")
        if self.unpriced_requests and not (f.unpriced_requests and not f.billed):  # else _bill_words said it
            models = ", ".join(f.unpriced_models)
            out += (f" These dollars leave out {self.unpriced_requests:,} requests of models without a list price"
                    + (f" ({models})." if models else "."))
        if f.visibility is not None and f.visibility.warn:
            out += (f" The transcript holds only {100 * f.visibility.share:.1f} % of the billed input, so what "
                    "follows describes that part.")
        return out

    def _answer_line(self) -> str:
        named, bar = self.named, self._bar()
        if self.outcome == "unpriced":
            return ""
        if self.outcome == "no_feasible":
            return "No strategy could run without a request over the window: nothing to compare."
        assert named is not None
        recall = "" if named.recall is None else f", keeping {_pct(named.recall)} of what the replies used"
        if self.outcome == "no_reference":
            if self.best is None:
                return (f"No feasible strategy keeps ≥ {bar} of what the replies used; the most, {named.strategy}, "
                        f"costs {money(named.dollars)}{recall} (no saving: nothing to measure it against).")
            return (f"The cheapest feasible strategy at ≥ {bar} recall is {named.strategy}, {money(named.dollars)}"
                    f"{recall} (no saving: nothing to measure it against).")
        change = f"{money(named.dollars)} ({named.change()} against the modelled recording)"
        if self.outcome == "saves":
            return (f"At ≥ {bar} recall, {named.strategy} would have saved {money(named.saving or 0.0)}: "
                    f"{change}{recall}.")
        if self.outcome == "no_measurable_saving":
            return (f"No measurable saving: at ≥ {bar} recall the cheapest, {named.strategy}, costs {change}, "
                    f"within the ±{100 * self.band:.1f} % band.")
        if self.outcome == "none_keeps":
            top = named.recall if named.recall is not None else 1.0
            return (f"No feasible strategy keeps ≥ {bar} of what the replies used; the most, {named.strategy}, "
                    f"keeps {_pct(top)} at {change}.")
        at_bar = named.recall is None or named.recall >= self.min_recall
        return ("Nothing would have saved money: the cheapest feasible strategy"
                + (f" at ≥ {bar} recall" if at_bar else "") + f", {named.strategy}, costs {change}{recall}.")

    def _lost_line(self) -> str:
        named = self.named
        parts = []
        if named is not None and self.outcome != "unpriced":
            if named.recall is None:
                pass
            elif not self.lost_terms:
                parts.append("it would have lost nothing the replies used")
            else:
                terms = ", ".join(_quoted(t.term) for t in self.lost)
                more = self.lost_terms - len(self.lost)
                text = (f"it would have lost {_pct(1 - named.recall)} of what the replies used "
                        f"({self.lost_terms:,} term{'s' if self.lost_terms != 1 else ''}: {terms}"
                        + (f" and {more:,} more" if more > 0 else "") + ")")
                if self.lost_summary == self.lost_terms:
                    text += (", all held by the recorded compaction summary it does not send "
                             "(the summary left out, not pruning)")
                elif self.lost_summary:
                    text += f", {self.lost_summary:,} of them held by the recorded compaction summary it does not send"
                parts.append(text)
        if self.bound is not None:
            parts.append(self.bound.text())
        if not parts:
            return ""
        line = "; ".join(parts) + "."
        return line[0].upper() + line[1:]

    def explain(self) -> tuple[str, ...]:
        """The method and the caveats behind the three lines (``pruner replay --explain``, the page's expander)."""
        f = self.figures
        out = [f.figures_line()] if f.reference_feasible else []  # an infeasible recording's dollars are no amount
        if f.visibility is not None:
            out.append(f.visibility.sentence())
        out.append(f"The verdict compares only strategies the API would accept (every request within the context "
                   f"window) and that exist for this provider, against the modelled recording ({f.reference}), "
                   f"never against the bill; of those keeping ≥ {self._bar()} of the terms the replies used "
                   "(context recall), the cheapest; ties: fewer dollars, then higher recall, then the simpler "
                   "strategy.")
        if not f.reference_feasible:
            out.append(f"{f.reference} itself runs over the window from request {f.reference_infeasible_from:,}: "
                       "no saving is measured against it.")
        out += [f"{s.strategy}: {s.na()}" for s in self.excluded]
        out += list(self.notes)
        if self.bound is not None and self.bound.detail:
            out.append(self.bound.detail)
        out.append("Read more: " + "; ".join(f"{title} ({path})" for title, path in DOCS) + ".")
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        """``pruner replay --json``'s ``verdict``: every field of the type, and the lines it renders."""
        named = self.named
        return {"lines": list(self.lines()), "sentence": self.sentence, "explain": list(self.explain()),
                "outcome": self.outcome, "min_recall": self.min_recall, "strategy": self.strategy,
                "best": self.best, "best_dollars": self.best_dollars, "best_recall": self.best_recall,
                "closest": self.closest, "saving": self.saving,
                "named_dollars": None if named is None else named.dollars,
                "reference": self.reference, "reference_dollars": self.reference_dollars,
                "reference_feasible": self.figures.reference_feasible, "billed": self.billed,
                "modelled": self.reference_dollars, "band": round(self.band, 4),
                "bound": None if self.bound is None else self.bound.as_dict(),
                "lost": [t.as_dict() for t in self.lost], "lost_terms": self.lost_terms,
                "lost_summary": self.lost_summary,
                "excluded": [{"strategy": s.strategy, "status": s.status, "why": s.reason,
                              "from_request": s.from_request, "text": s.na()} for s in self.excluded],
                "notes": list(self.notes)}

    def as_dict(self) -> dict[str, Any]:
        return self.to_json()


def recall_share(text: str) -> float:
    """``--min-recall``: a share in [0, 1] (``0.99``) or a percentage (``99%``)."""
    import argparse

    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (give 0.99 or 99%)") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1 (or 0% and 100%)")
    return value


def feasible(totals: dict[str, Any]) -> bool:
    """Whether the API would accept every request (money-engine's ``feasible``; else no rejected request)."""
    if not totals.get("applicable", True):
        return False  # a feature of another provider's API: it could not have run
    if "feasible" in totals:
        return bool(totals["feasible"])
    return not totals.get("rejected", 0)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if x < 0.9995 or x == 1 else f"{100 * x:.2f} %"


#: clear_tool_uses costing this many times the modelled recording is flagged: at such a multiple its
#: settings (Anthropic's example trigger and keep count, which nobody tunes to their sessions) are what is
#: measured, not the feature. Pruning every request can cost as much for a real reason (it breaks the
#: cache), so only the strategy whose defaults are someone else's example is flagged.
DEARER = 2.0


def _dearer(replay: "Replay", a: Figures) -> list[str]:
    """clear_tool_uses at settings that make it cost several times the recording, flagged as such."""
    s = replay.settings
    out = []
    for x in a.savings:
        if x.strategy == "clear_tool_uses" and x.status == "comparable" and a.modelled > 0 \
                and x.dollars >= DEARER * a.modelled:
            out.append(f"clear_tool_uses costs {x.dollars / a.modelled:.1f}× the modelled recording at these settings "
                       f"(clear_trigger {s.clear_trigger:,} tokens, clear_keep {s.clear_keep:,}, Anthropic's example "
                       "values): settings to tune (--clear-trigger, --clear-keep) before reading it as the "
                       "feature's cost.")
    return out


def _lost(replay: "Replay", strategy: str | None) -> tuple[tuple[LostTerm, ...], int, int]:
    """The named strategy's most-lacked terms (``TOP_LOST``), how many distinct terms it lost, and how many of
    those a recorded compaction summary held that the strategy does not send (the summary's loss, not its own)."""
    if strategy is None or replay.recall is None or strategy not in replay.recall.strategies:
        return (), 0, 0
    from .facts import is_summary
    from .lost import lost_terms

    rows = lost_terms(replay, strategy, sort="requests").rows
    chains = dict(replay.session.chains)

    def held_by_summary(row: Any) -> bool:
        messages = chains[row.chain].messages if row.chain in chains else ()
        return row.position is not None and row.position < len(messages) and is_summary(messages[row.position]) \
            and row.left_at is None

    by_term: dict[str, LostTerm] = {}
    summary: set[str] = set()
    for row in rows:  # most requests first; a term held by several messages counted once
        if held_by_summary(row):
            summary.add(row.term)
        if row.term not in by_term:
            by_term[row.term] = LostTerm(row.term, row.requests, row.why, held_by_summary(row))
    summary -= {t for t, x in by_term.items() if not x.summary}
    return tuple(list(by_term.values())[:TOP_LOST]), len(by_term), len(summary)


def _bound_detail(replay: "Replay", limits: Any) -> str:
    """The bound's schedule and the online strategy beside it (behind --explain), worded by what is proven:
    "the least" only for an exact figure."""
    from .limit.text import ONLINE, describe_schedule

    c = limits.families.get("combined")
    if c is None or c.dollars is None:
        return ""
    what = "The cheapest schedule in hindsight (exact)" if c.exact else \
        "The cheapest schedule the search found in hindsight (not proven the least" + (
            f"; none costs less than {money(c.lower_bound)}" if c.lower_bound is not None else "") + \
        "; limit.combined.approximation in --json)"
    change = "" if c.saving_vs_recorded is None else f", {signed(-100 * c.saving_vs_recorded)} % against the recording"
    out = f"{what}: {describe_schedule(c.schedule)}, {money(c.dollars)}{change}."
    for name in ONLINE:
        run = replay.runs.get(name)
        if run is None:
            continue
        t = run.totals
        if status_of(t)[0] != "comparable":
            out += f" {name}: n/a (could not run)."
        elif c.dollars:
            over = (t["dollars"] - c.dollars) / c.dollars
            out += f" {name}: {money(t['dollars'])}, {abs(100 * over):.1f} % {'above' if over >= 0 else 'below'} it."
        break
    return out + " How it is searched: docs/explanation/hindsight-bound.md."


def verdict(replay: "Replay", *, min_recall: float = DEFAULT_MIN_RECALL, figures: Figures | None = None,
            limits: Any = None, bound: Bound | None = None) -> Answer:
    """The replay's ``Answer`` (``figures``: ``answer(replay)`` if computed; ``limits``: the hindsight bound,
    ``pruner.replay.limit.compute_limits``'s result, read for the third line; ``bound``: a ``Bound`` given
    directly, e.g. one not computed, with its note)."""
    context_recall(replay)  # computed if the replay did not
    a = figures if figures is not None else answer(replay)
    if bound is None and limits is not None:
        bound = bound_of(limits, min_recall, _bound_detail(replay, limits))
    ref = replay.runs[a.reference].totals
    common: dict[str, Any] = dict(figures=a, min_recall=min_recall, bound=bound,
                                  unpriced_requests=int(ref.get("unpriced_requests", 0) or 0),
                                  notes=tuple(_dearer(replay, a)))

    def made(outcome: str, **kw: Any) -> Answer:
        lost, count, summary = _lost(replay, kw.get("best") or kw.get("closest"))
        return Answer(outcome=outcome, lost=lost, lost_terms=count, lost_summary=summary, **common, **kw)

    if a.unpriced:
        return made("unpriced")
    ok = [s for s in a.savings if s.status == "comparable"]  # feasible and applicable: the only ones compared
    if not ok:
        return made("no_feasible")

    def key(s: Saving) -> tuple[Any, ...]:
        return rank_key(s.strategy, s.dollars, s.recall, list(replay.runs))

    keeping = sorted((s for s in ok if (s.recall if s.recall is not None else 1.0) >= min_recall), key=key)
    best = keeping[0] if keeping else None
    found = dict(best=best.strategy if best else None, best_dollars=best.dollars if best else None,
                 best_recall=best.recall if best else None)
    if not a.reference_feasible:  # nothing to save against: the cheapest feasible one, by its own dollars
        named = best or max(ok, key=lambda s: (s.recall if s.recall is not None else 1.0, -s.dollars))
        return made("no_reference", closest=None if best else named.strategy, **found)
    if not any(s.saving is not None and s.saving > 0 for s in ok):
        # the closest that changes something: on a session without recorded compactions, full is the
        # recording replayed (+0.0 %), which says nothing
        pool = keeping or ok
        named = min([s for s in pool if s.saving] or pool, key=key)
        return made("nothing_saves", closest=named.strategy, saving=named.saving, **found)
    if best is None:
        top = max(ok, key=lambda s: (s.recall if s.recall is not None else 1.0, -s.dollars))
        return made("none_keeps", closest=top.strategy, saving=top.saving, **found)
    if best.saving is not None and best.saving > 0 and best.measurable:
        return made("saves", saving=best.saving, **found)
    if best.saving is not None and best.saving > 0:
        return made("no_measurable_saving", saving=best.saving, **found)
    return made("nothing_saves", closest=best.strategy, saving=best.saving, **found)


# -- what a loss means ------------------------------------------------------------------------------------

def loss_dict(replay: "Replay", strategy: str, loss: Loss) -> dict[str, Any]:
    return {"request": loss.request, "chain": loss.chain, "term": loss.term, "source_position": loss.source,
            "source_id": loss.source_id, "left_at": loss.left_at, "why": reason(replay, strategy, loss)}


def recall_json(replay: "Replay", strategy: str) -> dict[str, Any] | None:
    """Per request its recall and the terms missing with the message each came from; per compaction its
    summary recall (``to_json`` puts this beside the strategy's totals)."""
    report = replay.recall
    if report is None or strategy not in report.strategies:
        return None
    s = report.strategies[strategy]
    by_request: dict[int, list[dict[str, Any]]] = {}
    for loss in s.losses:
        by_request.setdefault(loss.request, []).append(loss_dict(replay, strategy, loss))
    return {
        "context_recall": s.recall, "used_terms": s.used, "terms_missing": s.missing,
        "requests": [{"request": k, "used": report.used_per_request[k], "missing": n,
                      "context_recall": report.request_recall(strategy, k), "lost": by_request.get(k, [])}
                     for k, n in enumerate(s.per_request) if n],
        "compactions": [c.as_dict() for c in s.compactions],
    }


def lost_examples(replay: "Replay", strategy: str, limit: int = 10) -> list[dict[str, Any]]:
    """``limit`` lost terms, one per distinct term, spread over the session (first occurrence of each)."""
    report = context_recall(replay)
    seen: dict[str, Loss] = {}
    for loss in report.strategies[strategy].losses:
        seen.setdefault(loss.term, loss)
    picked = list(seen.values())
    if len(picked) > limit:
        step = len(picked) / limit
        picked = [picked[int(i * step)] for i in range(limit)]
    return [loss_dict(replay, strategy, loss) for loss in picked]
