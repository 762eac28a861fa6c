"""Calibration: does the replay reproduce what the provider really billed?

Real sessions record usage per assistant message (Pi: ``usage.input / output /
cacheRead / cacheWrite``; Claude Code: ``usage.input_tokens /
cache_read_input_tokens / cache_creation_input_tokens``; Codex:
``cached_input_tokens``; the importers put them in ``metadata["usage"]``). On
such a session the calibration reports:

* **billed**: ``as_recorded`` priced from the recorded usage (exactly what the
  list prices give for what the provider reported);
* **the ratio** of the provider's tokens to ours: its reported context at the
  last request over our tiktoken count of what was sent there (its tokenizer
  differs, and the system prompt and tool definitions are not in the
  transcript; the first request's recorded size bounds the latter);
* **cold events**: recorded requests that read nothing from the cache, and how
  many the cache model explains by itself (the first request, a gap longer than
  the TTL, a prefix change), the rest being causes the transcript does not show;
* **full**: our own counts times the ratio, billed by the cache model with the
  recorded cold events inherited, and without them.

>>> from pruner.model import Message, Session
>>> u = lambda i, r, w: {"usage": {"input": i, "output": 10, "cache_read": r, "cache_write": w}}
>>> s = Session.of([Message(id="u1", role="user", content="word " * 2000),
...     Message(id="a1", role="assistant", content="ok", metadata=u(0, 0, 2500)),
...     Message(id="u2", role="user", content="more " * 500),
...     Message(id="a2", role="assistant", content="ok", metadata=u(0, 2500, 700))])
>>> c = calibrate(s)
>>> c.cold_events, c.explained, round(c.billed, 6)
(1, {'first': 1}, 0.01305)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import Session
from .engine import Replay, replay
from .prices import PriceTable
from .settings import ReplaySettings

#: The reasons the cache model gives for a miss that it can see in the transcript.
EXPLAINED = ("first", "ttl", "prefix", "lookback", "below_minimum")


@dataclass(frozen=True)
class Calibration:
    session: str
    model: str
    prices: str  # the money label: model, prices file and date
    requests: int  # requests with recorded usage
    aborted: int  # recorded with zero usage (billed $0)
    billed: float  # as_recorded, from the recorded usage
    ratio: float  # provider tokens per token of ours
    last_provider_tokens: int
    last_our_tokens: int
    first_provider_tokens: int
    first_our_tokens: int
    cold_events: int
    explained: dict[str, int]
    unexplained_gaps: tuple[float | None, ...]  # seconds since the previous request, per unexplained event
    full: float  # ratio applied, recorded cold events inherited
    full_not_inherited: float
    full_unscaled: float  # our own counts, inherited events
    warm_assumption_note: str = field(default="")

    @property
    def ours_over_provider(self) -> float:
        return 1 / self.ratio if self.ratio else 0.0

    @property
    def full_error(self) -> float:
        """``full`` against the bill: (full - billed) / billed."""
        return (self.full - self.billed) / self.billed if self.billed else 0.0

    @property
    def explained_count(self) -> int:
        return sum(self.explained.values())

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(ours_over_provider=round(self.ours_over_provider, 4), full_error=round(self.full_error, 4),
                 explained_count=self.explained_count)
        return d

    def lines(self) -> list[str]:
        """The calibration as text (the CLI prints it; the README quotes it)."""
        gaps = [g for g in self.unexplained_gaps if g is not None]
        gap_text = f", at gaps of {min(gaps):.0f} s to {max(gaps):.0f} s" if gaps else ""
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(self.explained.items())) or "none"
        return [
            f"calibration against the recorded usage ({self.requests} billed requests, {self.aborted} aborted; "
            f"{self.prices})",
            f"  billed (as_recorded, from recorded usage): ${self.billed:,.2f}",
            f"  token ratio: our count is {self.ours_over_provider:.2f}x the provider's at the last request "
            f"({self.last_our_tokens:,} vs {self.last_provider_tokens:,}); provider tokens = ours x {self.ratio:.4f}; "
            f"the first request's recorded size ({self.first_provider_tokens:,} vs our {self.first_our_tokens:,}) "
            "bounds the system prompt and tools the transcript does not hold",
            f"  recorded cold events (no cache read): {self.cold_events}; the cache model explains "
            f"{self.explained_count} ({reasons}); {self.cold_events - self.explained_count} have causes the "
            f"transcript does not show{gap_text}",
            f"  full (our counts x ratio, cold events inherited): ${self.full:,.2f} "
            f"({100 * self.full_error:+.1f} % against the bill)",
            f"  full without the inherited cold events: ${self.full_not_inherited:,.2f}; "
            f"unscaled (our own counts): ${self.full_unscaled:,.2f}",
        ]


def from_replay(r: Replay) -> Calibration | None:
    """The calibration of a replay that ran ``as_recorded`` and ``full`` (None without usage)."""
    if not r.recorded_usage or "as_recorded" not in r.runs or "full" not in r.runs:
        return None
    recorded = r.runs["as_recorded"]
    full = r.runs["full"].totals
    billed_rows = [(req, row) for req, row in zip(r.requests, recorded.rows)
                   if req.recorded is not None and not req.recorded.aborted]
    first_req, first_row = billed_rows[0]
    last_req, last_row = billed_rows[-1]
    explained: dict[str, int] = {}
    gaps: list[float | None] = []
    previous_time = None
    for req, row in zip(r.requests, recorded.rows):
        if req.recorded is None or req.recorded.aborted:
            continue
        if req.recorded.cold:
            if row.model_cached == 0 and row.model_miss in EXPLAINED:
                explained[row.model_miss] = explained.get(row.model_miss, 0) + 1
            else:
                gaps.append(None if req.time is None or previous_time is None else req.time - previous_time)
        previous_time = req.time
    return Calibration(
        session=r.session.name, model=r.price.model, prices=r.money_label, requests=len(billed_rows),
        aborted=sum(1 for q in r.requests if q.recorded is not None and q.recorded.aborted),
        billed=recorded.totals["dollars"], ratio=r.scale,
        last_provider_tokens=last_req.recorded.context, last_our_tokens=last_row.tokens,
        first_provider_tokens=first_req.recorded.context, first_our_tokens=first_row.tokens,
        cold_events=sum(1 for q, _ in billed_rows if q.recorded.cold), explained=dict(sorted(explained.items())),
        unexplained_gaps=tuple(gaps), full=full["dollars"], full_not_inherited=full["dollars_not_inherited"],
        full_unscaled=full["dollars_unscaled"])


def calibrate(session: Session, *, settings: ReplaySettings | None = None,
              prices: PriceTable | None = None) -> Calibration | None:
    """Replay ``as_recorded`` and ``full`` and compare them with the recorded bill."""
    return from_replay(replay(session, ["as_recorded", "full"], settings=settings, prices=prices, snapshots=False))
