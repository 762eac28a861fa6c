"""The answer in a few plain sentences: what was billed and modelled, then whether any feasible strategy
would have saved money against the modelled recording, by more than the model's own error.

``verdict(replay, min_recall=0.99)`` reads the figures of ``pruner.replay.answer`` (billed, modelled,
the error band, each strategy's saving against the modelled recording: never against the bill) and
says, in order:

* "Nothing would have saved money here; the closest is …" when no feasible strategy costs less than
  the modelled recording;
* "No measurable saving: …" when the cheapest strategy keeping ``min_recall`` saves less than the band;
* otherwise the cheapest feasible strategy whose context recall (``pruner.replay.recall``) reaches
  ``min_recall``, its dollars and its saving; when none reaches it, the feasible strategy that keeps
  the most. A strategy whose context the API would refuse (over the window), or that is a feature of
  another provider's API, is never the answer. Ties follow ``answer.rank_key``, the one rule.

The verdict is a tuple of ``lines`` (the figures, the answer, what could not run); ``sentence`` joins
them. A new line (a bound, a limit) is one more entry in ``lines``.

The default bar, 99 %, is where the measure separates what matters from its own noise: on real
sessions pruning loses 0.3-1.1 % of the used terms, clearing tool results 0.7-8 %, compaction
5-17 % (issue 20's measurements), and a term can reach a reply from outside the transcript, so a bar
of 100 % would reject strategies for losses the proxy cannot tell from chance, while 95 % would let
most compactions through. It matches the project's other tolerance: 1 % of the dollars.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> v = verdict(replay(generate("tool_agent", turns=20, seed=0), ["full", "cache_aware_prune"]))
>>> v.best, v.outcome, v.sentence.startswith("Modelled (full, pruner's cache model): $")
('cache_aware_prune', 'saves', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .answer import BAND_FLOOR, Answer, Saving, answer, rank_key
from .recall import Loss, context_recall
from pruner.money import money

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

DEFAULT_MIN_RECALL = 0.99
#: What the verdict found, for views that colour or pick by it.
OUTCOMES = ("saves", "no_measurable_saving", "nothing_saves", "none_keeps", "no_feasible", "unpriced")


@dataclass(frozen=True)
class Verdict:
    """What a replay comes to in one sentence: the cheapest feasible strategy that keeps ``min_recall``
    of what the replies used, against the strategy standing for the recording."""

    sentence: str
    best: str | None  # the cheapest feasible strategy keeping min_recall (None: none does)
    reference: str  # the strategy standing for the recording
    reference_dollars: float  # the modelled recording (what every saving is measured against)
    min_recall: float
    best_dollars: float | None = None
    best_recall: float | None = None
    closest: str | None = None  # when nothing saves or none reaches the bar: the strategy named instead
    outcome: str = "saves"  # one of OUTCOMES
    billed: float | None = None  # the bill (None: no recorded usage)
    band: float = BAND_FLOOR
    saving: float | None = None  # the named strategy's saving against the modelled recording
    lines: tuple[str, ...] = ()

    @property
    def strategy(self) -> str | None:
        """The strategy the verdict names (the best, else the closest): the one a view opens on."""
        return self.best or self.closest

    def as_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "lines": list(self.lines), "outcome": self.outcome, "best": self.best,
                "reference": self.reference, "reference_dollars": self.reference_dollars, "billed": self.billed,
                "modelled": self.reference_dollars, "band": round(self.band, 4), "saving": self.saving,
                "min_recall": self.min_recall, "best_dollars": self.best_dollars, "best_recall": self.best_recall,
                "closest": self.closest, "strategy": self.strategy}


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


def _against(s: Saving) -> str:
    return f"{money(s.dollars)} ({s.change()} against the modelled recording)"


#: clear_tool_uses costing this many times the modelled recording is flagged: at such a multiple its
#: settings (Anthropic's example trigger and keep count, which nobody tunes to their sessions) are what is
#: measured, not the feature. Pruning every request can cost as much for a real reason (it breaks the
#: cache), so only the strategy whose defaults are someone else's example is flagged.
DEARER = 2.0


def _dearer(replay: "Replay", a: Answer) -> str:
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
    return " ".join(out)


def _tail(a: Answer) -> str:
    infeasible = [s.strategy for s in a.savings if s.status == "infeasible"]
    inapplicable = [s.strategy for s in a.savings if s.status == "not_applicable"]
    return " ".join(([f"Infeasible (over the window): {', '.join(infeasible)}."] if infeasible else [])
                    + [f"{s.strategy} {s.reason}." for s in a.savings if s.strategy in inapplicable])


def verdict(replay: "Replay", *, min_recall: float = DEFAULT_MIN_RECALL, figures: Answer | None = None) -> Verdict:
    """The figures line, the answer, and what could not run (``figures``: ``answer(replay)`` if computed)."""
    context_recall(replay)  # computed if the replay did not
    a = figures if figures is not None else answer(replay)
    tail = " ".join(x for x in (_tail(a), _dearer(replay, a)) if x)
    common: dict[str, Any] = dict(reference=a.reference, reference_dollars=a.modelled, min_recall=min_recall,
                                  billed=a.billed, band=a.band)

    def made(outcome: str, text: str, **kw: Any) -> Verdict:
        lines = tuple(x for x in (head, text, tail) if x)
        return Verdict(" ".join(lines), outcome=outcome, lines=lines, **common, **kw)

    head = a.figures_line()
    if a.unpriced:
        ref = replay.runs[a.reference].totals
        head = ""
        return made("unpriced", f"Recorded: unpriced (all {ref['unpriced_requests']:,} requests are of models without "
                                "a price): no dollars to compare.", best=None)
    unpriced = replay.runs[a.reference].totals.get("unpriced_requests", 0)
    if unpriced:
        head += f" These dollars are leaving out {unpriced:,} requests of models without a price."
    ok = [s for s in a.savings if s.comparable]
    if not ok:
        return made("no_feasible", "No feasible strategy to compare with.", best=None)

    def key(s: Saving) -> tuple[Any, ...]:
        return rank_key(s.strategy, s.dollars, s.recall, list(replay.runs))

    bar = f"{100 * min_recall:g} %"
    keeping = sorted((s for s in ok if (s.recall if s.recall is not None else 1.0) >= min_recall), key=key)
    best = keeping[0] if keeping else None
    found = dict(best=best.strategy if best else None, best_dollars=best.dollars if best else None,
                 best_recall=best.recall if best else None)
    if not any(s.saving is not None and s.saving > 0 for s in ok):
        # the closest that changes something: on a session without recorded compactions, full is the
        # recording replayed (+0.0 %), which says nothing
        pool = keeping or ok
        named = min([s for s in pool if s.saving] or pool, key=key)
        recall = "" if named.recall is None else f", recall {_pct(named.recall)}"
        return made("nothing_saves", f"Nothing would have saved money here; the closest is {named.strategy}, "
                                     f"{_against(named)}{recall}.", closest=named.strategy, saving=named.saving,
                    **found)
    if best is None:
        top = max(ok, key=lambda s: (s.recall if s.recall is not None else 1.0, -s.dollars))
        return made("none_keeps", f"None reaches {bar} of what the replies used: {top.strategy} keeps "
                                  f"{_pct(top.recall if top.recall is not None else 1.0)} at {_against(top)}.",
                    closest=top.strategy, saving=top.saving, **found)
    recall = "" if best.recall is None else f", recall {_pct(best.recall)}"
    if best.saving is not None and best.saving > 0 and best.measurable:
        return made("saves", f"Cheapest strategy that keeps ≥ {bar} of what the replies used: {best.strategy}, "
                             f"{_against(best)}, saving {money(best.saving)}{recall}.", saving=best.saving, **found)
    if best.saving is not None and best.saving > 0:
        return made("no_measurable_saving",
                    f"No measurable saving: the cheapest strategy that keeps ≥ {bar} of what the replies used, "
                    f"{best.strategy}, {_against(best)}{recall}, is within the ±{100 * a.band:.1f} % band.",
                    saving=best.saving, **found)
    return made("nothing_saves", f"Nothing that keeps ≥ {bar} of what the replies used would have saved money; "
                                 f"the closest is {best.strategy}, {_against(best)}{recall}.",
                closest=best.strategy, saving=best.saving, **found)


def with_bound(v: Verdict, line: str) -> Verdict:
    """``v`` with the hindsight bound's line (``pruner.replay.limit.text.bound_line``) after its sentence."""
    from dataclasses import replace

    return replace(v, sentence=f"{v.sentence} {line}", lines=(*v.lines, line)) if line else v


# -- what a loss means ------------------------------------------------------------------------------------

_WHY = {"compact": "summarised", "truncate": "truncated", "clear": "cleared", "prune": "pruned"}


def reason(replay: "Replay", strategy: str, loss: Loss) -> str:
    """Why ``strategy``'s context lacked the loss's source message (from the strategy's events)."""
    if loss.source is None:
        return "held only by a message outside the session"
    if loss.left_at is None:
        if loss.placeholder is not None:
            return f"never sent: the placeholder {loss.placeholder!r} went in its place"
        return "never sent: left out when it arrived"
    row = replay.runs[strategy].rows[loss.left_at]
    kinds = [e.kind for e in row.events]
    kind = next((k for k in ("compact", "truncate", "clear", "prune") if k in kinds), None)
    what = _WHY.get(kind, "dropped") if kind is not None else "dropped"
    text = f"{what} at request {loss.left_at}"
    if loss.placeholder is not None:
        text += f" (placeholder {loss.placeholder!r})"
    return text


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
