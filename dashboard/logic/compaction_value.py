"""The Compaction page's dollars and recall of the previewed compaction (``pruner.replay.preview_value``),
at the list prices of the model the session records, and the sentence that says what they count.
Pure but for the per-visitor memo."""

from __future__ import annotations

from pruner.money import money
from pruner.replay import default_prices
from pruner.replay.detect import detect
from pruner.replay.preview_value import PreviewDollars, PreviewRecall, preview_dollars, preview_recall

from .. import cache
from .compaction import Outcome


def value(loaded, outcome: Outcome) -> tuple[PreviewRecall, PreviewDollars]:
    """(recall, dollars) of the previewed compaction (``pruner.replay.preview_value``), at the list prices of
    the model the session records (the Replay page's choice); memoised per outcome."""
    def build():
        prices = default_prices()
        provider, model, _ = detect(loaded.session, prices)
        offline = outcome.result.summarizer_name.lower().startswith("offline")
        return preview_recall(outcome.result), preview_dollars(outcome.result, prices.get(model, provider),
                                                               offline=offline)
    return cache.memoised("compaction_value", (loaded.key, outcome.key), build)


def value_caption(recall: PreviewRecall, dollars: PreviewDollars) -> str:
    """The sentence under the dollars and recall: what they count, and when compacting pays back."""
    if dollars.break_even == 0:
        pays = "Compacting costs nothing extra on the next request."
    elif dollars.break_even is None:
        pays = "It never pays back: the compacted prompt is not smaller."
    else:
        pays = (f"It pays back after {dollars.break_even:,} more request{'s' if dollars.break_even != 1 else ''} "
                f"({money(dollars.extra)} once, {money(dollars.per_request)} less on each request after).")
    summariser = ("The offline summariser costs nothing." if dollars.summariser == 0.0 else
                  "The endpoint's summarising call is not in these figures (its model has no price here).")
    if recall.recall is None:
        kept = ("No reply kept after the cut used a term only the summarised messages held, so there is no recall "
                "to score.")
    else:
        kept = (f"Summary recall: of the {recall.candidates:,} terms the replies kept after the cut used that only the "
                f"summarised messages held, the summary holds {recall.held:,}.")
        if recall.missing:
            kept += " It lacks, among others: " + ", ".join(recall.missing[:6]) + "."
    return (f"Input dollars at {dollars.model}'s list prices, in pruner's token count (cache read for what stays, a "
            f"5-minute write for the rewritten prompt). {pays} {summariser} {kept}")
