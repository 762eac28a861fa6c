"""Causal calibration: the provider's token count of a context, modelled from the recording up to it.

Our counts are tiktoken's; the provider counts with its own tokenizer and adds
what the transcript does not hold (the system prompt and the tool definitions:
15k-50k tokens on a Claude Code session's first request). A replay needs the
provider's count of every context a strategy sends, also contexts that were
never sent, and a setting at request k (a trigger, a budget, a bill) may use
nothing after k.

The model chosen, per chain and per request k, is affine::

    provider(x) = offset_k + slope_k * x      (x: our count of a context at request k)

* ``slope_k``: the least-squares slope of the recorded context size against our
  count of what was really sent (``as_recorded``), over this chain's recorded
  requests up to and including k. It is the tokenizer ratio for the part of a
  context the transcript holds, so it is what a strategy's removal is scaled by.
  Until our counts have spread over ``MIN_SPREAD`` tokens (two points that close
  say nothing about a slope) or when the fit leaves ``SLOPE_RANGE``, it is 1.0.
* ``offset_k = recorded_k - slope_k * ours_k``: what the recording at k holds
  beyond the scaled transcript (system prompt, tools). So at k the modelled size
  of what was really sent is exactly the recorded size, and any other
  strategy's context is "the recorded size minus what the strategy removed, the
  removed part scaled by the slope". Should the offset come out negative (our
  counts exceed the provider's by more than the slope explains), the model
  falls back to the plain ratio at k (offset 0, slope recorded/ours).
* A request without recorded usage (or recorded aborted) keeps the chain's last
  fit; before the chain's first recorded request (or on a session that records
  none) our counts are used as they are (slope 1, offset 0), unless the user
  gave a ratio (``ReplaySettings.scale``: slope given, offset 0).

Why this one: a single ratio measured at one request (the old model, measured at
the LAST request) multiplies the system prompt into every small context and
looks ahead; an offset measured at the first request alone drifts as the
provider's count and ours diverge over a long session. Anchoring at the
recording of the same request keeps ``full`` on a session that was never
managed equal to the recording, and fits the only free parameter on the past.
See docs/calibration.md.

>>> fit = ChainFit()
>>> s = fit.add(recorded=20_000, ours=1_000)   # first request: system prompt and tools dominate
>>> s.slope, s.offset, s.provider(1_000)
(1.0, 19000.0, 20000)
>>> s = fit.add(recorded=32_000, ours=11_000)  # 10,000 more of ours cost 12,000 of theirs
>>> round(s.slope, 3), s.provider(11_000), s.provider(6_000)
(1.2, 32000, 26000)
"""

from __future__ import annotations

from dataclasses import dataclass

#: Our counts must spread over this many tokens before a slope is fitted (else 1.0).
MIN_SPREAD = 2_000
#: A fitted slope outside this range is not a tokenizer ratio (a recorded compaction, a changed system
#: prompt): our counts are used as they are (1.0).
SLOPE_RANGE = (0.5, 2.0)
#: The plain ratio's floor (provider tokens per token of ours).
MIN_RATIO = 0.1


@dataclass(frozen=True, slots=True)
class TokenScale:
    """Our tokens -> the provider's at one request (see the module docstring)."""

    slope: float = 1.0
    offset: float = 0.0
    source: str = "none"  # "measured" (fitted on the recording up to here), "given", "none"

    def provider(self, tokens: int) -> int:
        """A whole context (or a prefix of it) in provider tokens: the offset is part of every prefix."""
        if tokens <= 0:
            return 0
        if self.offset == 0.0 and self.slope == 1.0:
            return tokens
        return max(0, int(round(self.offset + self.slope * tokens)))

    def part(self, tokens: int) -> int:
        """A part that is not a prefix (an output, a summariser call's text): the slope alone."""
        return tokens if self.slope == 1.0 else int(round(tokens * self.slope))

    def ours(self, provider_tokens: int) -> int:
        """A provider token count (a window, a trigger) as our count of a context of that size."""
        return max(0, int((provider_tokens - self.offset) / self.slope))

    @property
    def identity(self) -> bool:
        return self.slope == 1.0 and self.offset == 0.0


UNSCALED = TokenScale()


class ChainFit:
    """One chain's running fit: ``add`` each recorded request in order, get the scale there."""

    def __init__(self) -> None:
        self.n = 0
        self.sx = self.sy = self.sxx = self.sxy = 0.0
        self.low: float | None = None
        self.high: float | None = None
        self.current: TokenScale | None = None

    def add(self, *, recorded: int, ours: int) -> TokenScale:
        """Fit with request k's recorded context size and our count of what was sent there (both > 0:
        a request that recorded no context, or sent nothing we can count, keeps the last fit)."""
        if recorded <= 0 or ours <= 0:
            return self.current or TokenScale()
        x, y = float(ours), float(recorded)
        self.n += 1
        self.sx += x
        self.sy += y
        self.sxx += x * x
        self.sxy += x * y
        self.low = x if self.low is None else min(self.low, x)
        self.high = x if self.high is None else max(self.high, x)
        slope = 1.0
        denominator = self.n * self.sxx - self.sx * self.sx
        if self.n >= 2 and self.high - self.low >= MIN_SPREAD and denominator > 0:
            fitted = (self.n * self.sxy - self.sx * self.sy) / denominator
            if SLOPE_RANGE[0] <= fitted <= SLOPE_RANGE[1]:
                slope = fitted
        offset = y - slope * x
        if offset < 0:
            # Our count exceeds the provider's by more than the slope explains: the plain ratio at k
            # (bounded below: a recording that tiny against our count is not a tokenizer's).
            slope, offset = max(y / x, MIN_RATIO), 0.0
        self.current = TokenScale(slope=slope, offset=offset, source="measured")
        return self.current
