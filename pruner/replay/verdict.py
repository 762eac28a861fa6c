"""The answer in one sentence, and what each loss means: the recording's dollars beside the cheapest
feasible strategy that keeps what the replies used.

``verdict(replay, min_recall=0.99)`` names the recording (``as_recorded``'s dollars; ``full``'s when
the recording was not replayed) and the cheapest feasible counterfactual strategy whose context
recall (``pruner.replay.recall``) reaches ``min_recall``, with both numbers; when none reaches it, the
feasible strategy that keeps the most. A strategy whose context the API would refuse (over the
window: ``totals["feasible"]`` false, or before that field existed, ``rejected`` requests) is never the
answer.

The default bar, 99 %, is where the measure separates what matters from its own noise: on real
sessions pruning loses 0.3-1.1 % of the used terms, clearing tool results 0.7-8 %, compaction
5-17 % (issue 20's measurements), and a term can reach a reply from outside the transcript, so a bar
of 100 % would reject strategies for losses the proxy cannot tell from chance, while 95 % would let
most compactions through. It matches the project's other tolerance: 1 % of the dollars.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> v = verdict(replay(generate("tool_agent", turns=20, seed=0), ["full", "cache_aware_prune"]))
>>> v.best, v.sentence.startswith("Recorded (full): $")
('cache_aware_prune', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .recall import Loss, context_recall
from pruner.money import money

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

DEFAULT_MIN_RECALL = 0.99
RECORDING = ("as_recorded", "full")  # what "recorded" means, in order of preference


@dataclass(frozen=True)
class Verdict:
    sentence: str
    best: str | None  # the cheapest feasible strategy keeping min_recall (None: none does)
    reference: str  # the strategy standing for the recording
    reference_dollars: float
    min_recall: float
    best_dollars: float | None = None
    best_recall: float | None = None
    closest: str | None = None  # when none reaches the bar: the feasible strategy that keeps the most

    def as_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "best": self.best, "reference": self.reference,
                "reference_dollars": self.reference_dollars, "min_recall": self.min_recall,
                "best_dollars": self.best_dollars, "best_recall": self.best_recall, "closest": self.closest}


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


def _change(a: float, b: float) -> str:
    if not b:
        return "n/a"
    d = 100 * (a - b) / b
    return f"{'−' if d < 0 else '+'}{abs(d):.1f} %"


def verdict(replay: "Replay", *, min_recall: float = DEFAULT_MIN_RECALL) -> Verdict:
    """One sentence: the recording's dollars and the best feasible alternative with its recall."""
    context_recall(replay)  # computed if the replay did not
    runs = replay.runs
    reference = next((n for n in RECORDING if n in runs), next(iter(runs)))
    ref = runs[reference].totals
    ref_dollars = ref["dollars"]
    label = "Recorded" if reference == "as_recorded" else f"Recorded ({reference})"
    head = f"{label}: {money(ref_dollars)}."
    others = [(n, r.totals) for n, r in runs.items() if n != "as_recorded" and (n != reference or n == "full")]
    ok = [(n, t) for n, t in others if feasible(t)]
    inapplicable = [n for n, t in others if not t.get("applicable", True)]
    infeasible = [n for n, t in others if not feasible(t) and n not in inapplicable]
    tail = (f" Infeasible (over the window): {', '.join(infeasible)}." if infeasible else "") + (
        f" Not applicable (another provider's API feature): {', '.join(inapplicable)}." if inapplicable else "")
    # Requests of models without a price are billed $0: never let that read as free, or as a saving.
    unpriced = ref.get("unpriced_requests", 0)
    if unpriced and unpriced >= ref.get("billed_requests", ref.get("requests", 0)):
        return Verdict(f"{label}: unpriced (all {unpriced:,} requests are of models without a price): no dollars to "
                       f"compare.{tail}", None, reference, ref_dollars, min_recall)
    if unpriced:
        head = f"{label}: {money(ref_dollars)}, leaving out {unpriced:,} requests of models without a price."
    bar = f"{100 * min_recall:g} %"
    keeping = [(n, t) for n, t in ok if t.get("context_recall", 1.0) >= min_recall]
    if keeping:
        name, t = min(keeping, key=lambda x: (x[1]["dollars"], -x[1].get("context_recall", 1.0)))
        r = t.get("context_recall", 1.0)
        sentence = (f"{head} Cheapest strategy that keeps ≥ {bar} of what the replies used: {name}, "
                    f"{money(t['dollars'])} ({_change(t['dollars'], ref_dollars)}), recall {_pct(r)}.{tail}")
        return Verdict(sentence, name, reference, ref_dollars, min_recall, t["dollars"], r)
    if not ok:
        return Verdict(f"{head} No feasible strategy to compare with.{tail}", None, reference, ref_dollars,
                       min_recall)
    name, t = max(ok, key=lambda x: (x[1].get("context_recall", 1.0), -x[1]["dollars"]))
    sentence = (f"{head} None reaches {bar} of what the replies used: {name} keeps "
                f"{_pct(t.get('context_recall', 1.0))} at {money(t['dollars'])} "
                f"({_change(t['dollars'], ref_dollars)}).{tail}")
    return Verdict(sentence, None, reference, ref_dollars, min_recall, closest=name)


def with_bound(v: Verdict, line: str) -> Verdict:
    """``v`` with the hindsight bound's line (``pruner.replay.limit.text.bound_line``) after its sentence."""
    from dataclasses import replace

    return replace(v, sentence=f"{v.sentence} {line}") if line else v


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
