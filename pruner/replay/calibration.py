"""Calibration: does the replay reproduce what the provider really billed?

Real sessions record usage per assistant message (Pi: ``usage.input / output /
cacheRead / cacheWrite``; Claude Code: ``usage.input_tokens /
cache_read_input_tokens / cache_creation_input_tokens``; Codex:
``cached_input_tokens``; the importers put them in ``metadata["usage"]``). On
such a session the calibration reports:

* **billed**: the recorded usage of every request (every chain), each at its
  own model's list prices (``billed_recorded_cost``: the sum of the cost the
  agent itself recorded, where it did);
* **modelled**: the cache model applied to what was really sent (the recorded
  requests, ``as_recorded``'s contexts), recorded misses inherited where nothing
  in the transcript explains them; **modelled_cache_only**: with none inherited;
* **the token scale** (``pruner.replay.scale``): fitted on the recording up to
  each request; reported at the main chain's last request, or said to be not
  measurable;
* **cold events**: recorded requests that read nothing from the cache, and how
  many the cache model explains by itself (the first request, a gap longer than
  the TTL, a prefix change, a recorded compaction, a change of model), the rest
  being causes the transcript does not show;
* **full**: the conversation without any management, billed by the cache model,
  and whether it could have run at all (``full_feasible``).

>>> from pruner.model import Message, Session
>>> u = lambda i, r, w: {"model": "claude-sonnet-4-5",
...     "usage": {"input": i, "output": 10, "cache_read": r, "cache_write": w}}
>>> s = Session.of([Message(id="u1", role="user", content="word " * 2000),
...     Message(id="a1", role="assistant", content="ok", metadata=u(0, 0, 2500)),
...     Message(id="u2", role="user", content="more " * 500),
...     Message(id="a2", role="assistant", content="ok", metadata=u(0, 2500, 700))])
>>> c = calibrate(s)
>>> c.cold_events, c.explained, round(c.billed, 6), round(c.modelled, 6)
(1, {'first': 1}, 0.01305, 0.01305)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import Session
from .bill import Bill, bill
from .engine import Replay, replay
from .prices import PriceTable
from .settings import ReplaySettings

#: The reasons the cache model gives for a miss that it can see in the transcript.
EXPLAINED = ("first", "ttl", "prefix", "lookback", "below_minimum", "model")


@dataclass(frozen=True)
class Calibration:
    session: str
    model: str  # the models billed, joined
    prices: str  # the money label: each model's prices, the prices file and its date
    requests: int  # requests with recorded usage
    aborted: int  # recorded with zero usage (billed $0)
    billed: float  # every recorded request at its own model's list prices
    billed_recorded_cost: float | None  # the cost the agent recorded itself (None: not recorded)
    billed_requests: int  # the bill's requests: unique request ids with usage, every chain (aborted ones,
    # all-zero usage, are in ``aborted``, not here: the text says "N billed requests, M aborted")
    duplicates: int  # copies of a request id the bill left out (the replay's rows keep them as sent)
    modelled: float  # the cache model on the recorded requests, unexplained recorded misses inherited
    modelled_cache_only: float  # the same with no inherited miss
    ratio: float  # the main chain's slope at its last request (provider tokens per token of ours)
    offset: float  # and its offset (what the recording holds beyond the transcript)
    ratio_measured: bool  # False: the recording gives nothing to fit (the figures use our own counts)
    last_provider_tokens: int
    last_our_tokens: int
    first_provider_tokens: int
    first_our_tokens: int
    cold_events: int
    explained: dict[str, int]
    unexplained_gaps: tuple[float | None, ...]  # seconds since the previous request, per unexplained event
    full: float | None  # the cache model on the conversation without management (None: full not replayed)
    full_not_inherited: float | None
    full_unscaled: float | None
    full_feasible: bool | None = None
    full_infeasible_reason: str = ""
    unpriced_requests: int = 0
    by_model: dict[str, Any] = field(default_factory=dict)
    by_chain: dict[str, Any] = field(default_factory=dict)
    # Requests that record no usage (a trace with usage on some requests only): not in the bill, so not in
    # ``modelled`` either, which is compared with it; the replay's tables still bill them from the model.
    without_usage: int = 0

    @property
    def ours_over_provider(self) -> float:
        return 1 / self.ratio if self.ratio else 0.0

    @property
    def modelled_error(self) -> float:
        """``modelled`` against the bill: (modelled - billed) / billed."""
        return (self.modelled - self.billed) / self.billed if self.billed else 0.0

    @property
    def full_error(self) -> float:
        """``full`` against the bill (meaningful only where full was feasible)."""
        return (self.full - self.billed) / self.billed if self.billed and self.full is not None else 0.0

    @property
    def explained_count(self) -> int:
        return sum(self.explained.values())

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(ours_over_provider=round(self.ours_over_provider, 4), modelled_error=round(self.modelled_error, 4),
                 full_error=round(self.full_error, 4), explained_count=self.explained_count)
        return d

    def lines(self) -> list[str]:
        """The calibration as text (the CLI prints it; the README quotes it)."""
        gaps = [g for g in self.unexplained_gaps if g is not None]
        gap_text = f", at gaps of {min(gaps):.0f} s to {max(gaps):.0f} s" if gaps else ""
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(self.explained.items())) or "none"
        own = "" if self.billed_recorded_cost is None else \
            f" (the agent recorded ${self.billed_recorded_cost:,.2f} itself)"
        if self.ratio_measured:
            scale = (f"  token scale at the last request: provider tokens = {self.offset:,.0f} + ours x "
                     f"{self.ratio:.4f} ({self.last_provider_tokens:,} recorded vs our {self.last_our_tokens:,}; "
                     f"fitted on the recording up to each request); the first request recorded "
                     f"{self.first_provider_tokens:,} vs our {self.first_our_tokens:,} (system prompt and tools "
                     "the transcript does not hold)")
        else:
            scale = ("  token scale: not measurable (the recording reports no context to compare with our "
                     f"{self.last_our_tokens:,} tokens); our own counts are used as they are")
        # Every request of a model without a price: "$0.00" would read as free, "+0.0 %" as a fit.
        none_priced = self.requests > 0 and self.unpriced_requests >= self.requests

        def money(x: float | None) -> str:
            return "unpriced" if none_priced else f"${x:,.2f}"

        billed = "unpriced (no request is of a model with a price)" if none_priced else money(self.billed)
        against = "no priced request to compare with" if none_priced else \
            f"{100 * self.modelled_error:+.1f} % against the bill"
        out = [
            f"calibration against the recorded usage ({self.requests} billed "
            f"request{'' if self.requests == 1 else 's'}, {self.aborted} aborted"
            + (f", {self.without_usage} not compared: they record no usage" if self.without_usage else "")
            + f"; {self.prices})",
            f"  billed (recorded usage, each request at its own model's list prices): {billed}{own}",
            scale,
            f"  recorded cold events (no cache read): {self.cold_events}; the cache model explains "
            f"{self.explained_count} ({reasons}); {self.cold_events - self.explained_count} "
            f"{'has' if self.cold_events - self.explained_count == 1 else 'have'} causes the "
            f"transcript does not show{gap_text}",
            f"  modelled (the cache model on the recorded requests, unexplained cold events inherited): "
            f"{money(self.modelled)} ({against}); cache model only: "
            f"{money(self.modelled_cache_only)}",
        ]
        if self.full is not None:
            if self.full_feasible is False:
                out.append(f"  full (no management): {self.full_infeasible_reason}; up to there {money(self.full)}")
            else:
                out.append(f"  full (no management, the recorded compactions left out): {money(self.full)}; without "
                           f"the inherited cold events {money(self.full_not_inherited)}; unscaled (our own counts) "
                           f"{money(self.full_unscaled)}")
        if self.unpriced_requests:
            out.append(f"  {self.unpriced_requests} requests have no price (their model is not in the table): "
                       "not in the bill")
        return out


def from_replay(r: Replay) -> Calibration | None:
    """The calibration of a replay that ran ``as_recorded`` (None without usage)."""
    if not r.recorded_usage or "as_recorded" not in r.runs:
        return None
    recorded = r.runs["as_recorded"]
    totals = recorded.totals
    billed_rows = [(req, row) for req, row in zip(r.requests, recorded.rows)
                   if req.recorded is not None and not req.recorded.aborted]
    main = [(q, w) for q, w in billed_rows if q.chain == billed_rows[0][0].chain] or billed_rows
    first_req, first_row = main[0]
    last_req, last_row = main[-1]
    explained: dict[str, int] = {}
    gaps: list[float | None] = []
    previous_time: dict[str, float | None] = {}
    for req, row in zip(r.requests, recorded.rows):
        if req.recorded is None or req.recorded.aborted:
            continue
        if req.recorded.cold:
            if not req.inherit and row.model_miss in EXPLAINED:
                explained[row.model_miss] = explained.get(row.model_miss, 0) + 1
            elif not req.inherit and any(e.kind == "compact" for e in row.events):
                explained["compaction"] = explained.get("compaction", 0) + 1
            else:
                before = previous_time.get(req.chain)
                gaps.append(None if req.time is None or before is None else req.time - before)
        previous_time[req.chain] = req.time
    the_bill = _billed(r)
    scale = last_req.scale
    first_recorded, last_recorded = first_req.recorded, last_req.recorded
    # billed_rows holds only requests that record usage, and the replay scales every request
    assert scale is not None and first_recorded is not None and last_recorded is not None
    without_usage = sum(1 for q in r.requests if q.recorded is None)
    modelled, cache_only = totals["dollars_modelled"], totals["dollars_not_inherited"]
    # Compare like with like: the bill covers only the requests that record usage, and leaves unpriced a
    # request that records no model, which the replay prices at the settings' model.
    unbilled = {(b.chain, b.position) for b in the_bill.requests if not b.priced}
    compared = [(q, w) for q, w in billed_rows if (q.chain, q.position) not in unbilled]
    if without_usage or len(compared) < len(billed_rows):
        modelled = round(sum(row.dollars_modelled for _, row in compared), 6)
        cache_only = round(sum(row.dollars_not_inherited for _, row in compared), 6)
    full = r.runs["full"].totals if "full" in r.runs else None
    return Calibration(
        session=r.session.name, model=", ".join(r.models), prices=r.money_label, requests=len(billed_rows),
        aborted=sum(1 for q in r.requests if q.recorded is not None and q.recorded.aborted),
        billed=round(the_bill.dollars, 6), billed_recorded_cost=None if the_bill.billed_recorded_cost is None
        else round(the_bill.billed_recorded_cost, 6),
        billed_requests=sum(1 for q in the_bill.requests if not q.aborted), duplicates=the_bill.duplicates,
        modelled=modelled, modelled_cache_only=cache_only, without_usage=without_usage,
        ratio=scale.slope, offset=scale.offset, ratio_measured=scale.source != "none",
        last_provider_tokens=last_recorded.context, last_our_tokens=last_row.tokens,
        first_provider_tokens=first_recorded.context, first_our_tokens=first_row.tokens,
        cold_events=sum(1 for q, _ in billed_rows if q.recorded is not None and q.recorded.cold),
        explained=dict(sorted(explained.items())),
        unexplained_gaps=tuple(gaps), full=None if full is None else full["dollars"],
        full_not_inherited=None if full is None else full["dollars_not_inherited"],
        full_unscaled=None if full is None else full["dollars_unscaled"],
        full_feasible=None if full is None else full["feasible"],
        full_infeasible_reason="" if full is None else full["infeasible_reason"],
        unpriced_requests=totals["unpriced_requests"], by_model=totals["by_model"], by_chain=totals["by_chain"])


def _billed(r: Replay) -> Bill:
    """The bill (``pruner.replay.bill``): every recorded request of every chain, counted once by its
    request id, at its own model's list prices. A request that records no model is unpriced, as in
    ``pruner logs``: the bill is what was paid, and the settings' model (a provider's default when the
    session names none) is a guess the bill never prices at (issue 31, defect 6)."""
    return bill(r.session, r.price_table)


def calibrate(session: Session, *, settings: ReplaySettings | None = None,
              prices: PriceTable | None = None) -> Calibration | None:
    """Replay ``as_recorded`` and ``full`` and compare them with the recorded bill."""
    return from_replay(replay(session, ["as_recorded", "full"], settings=settings, prices=prices, snapshots=False))
