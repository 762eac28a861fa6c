"""The Explorer's lead: the same three verdict lines ``pruner replay`` ends with, and the visibility warning,
above everything else on the page (issue 42: "the Explorer leads with the same three lines").

Nothing here composes a sentence of the verdict: the lines are ``pruner.replay.verdict.Answer.lines()`` of the
replay the Replay page runs on its starting settings (``replay.choice_for``; the visitor's own once they
changed them there), with the bound as that page has it (``replay_bound.answer``), so both pages render one
cached answer. A session whose usage is one total per run (Copilot CLI's ``session.shutdown``) has no answer
to give, as ``pruner replay`` refuses it: its lead is the library's reason and the bill (the Replay page says
the same, and replays nothing). Pure (no Streamlit); ``app_pages/explorer.py`` draws what these return.

>>> from pruner.bench.workloads import generate
>>> s = generate("tool_agent", turns=4, seed=0)
>>> refused(s) is None, answers_at_once(s)
(True, True)
>>> bound_now(20, asked=False), bound_now(965, asked=False), bound_now(965, asked=True)
(True, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pruner import Session
from pruner.formats.copilot_cli import lump_usage
from pruner.money import money
from pruner.replay import bill, find_requests

from . import replay as replay_logic
from . import replay_bound

#: A session of at most this many requests is replayed for the lead as the Explorer opens it (the Replay page
#: computes its bound with the replay up to the same size); a longer one waits for a click (instant when the
#: Replay page already ran it: one cache), so the Explorer's first view stays as fast as before.
AT_ONCE_MAX_REQUESTS = replay_bound.AT_ONCE_MAX_REQUESTS
#: Why a long session's lead has no bound yet: on the Explorer, the Replay page is where it is computed.
PENDING = "not yet: on a session of {n:,} requests it runs on the Replay page when you ask there"


@dataclass(frozen=True)
class Lead:
    """What the Explorer shows first: ``lines`` (the verdict's, or the one line saying why there is none) and
    ``warning`` (the visibility warning, empty when the transcript holds most of what was billed)."""

    lines: tuple[str, ...]
    warning: str = ""


def refused(session: Session) -> Lead | None:
    """The lead of a session no strategy can be replayed against (``lump_usage``): the reason and the bill, as
    ``pruner replay`` says them; ``None`` for every other session."""
    why = lump_usage(session)
    if why is None:
        return None
    return Lead((f"{why} (billed {money(bill(session).dollars)}).",))


def answers_at_once(session: Session) -> bool:
    """Whether the Explorer replays ``session`` for its lead as it opens (else it waits for the visitor)."""
    return len(find_requests(session)) <= AT_ONCE_MAX_REQUESTS


def bound_now(requests: int, *, asked: bool) -> bool:
    """Whether the lead states the bound: computed with the replay up to the Replay page's size
    (``replay_bound.computes_at_once``), or, for a longer one, once the visitor asked for it there (``asked``)."""
    return requests > 0 and (replay_bound.computes_at_once(requests) or asked)


def choice(session: Session, applied: Any, applied_for: Any, key: Any) -> replay_logic.ReplayChoice:
    """The replay settings the lead answers for: the Replay page's applied choice when it is this session's
    (``applied_for == key``), else the choice that page starts from (``replay.choice_for``)."""
    if applied is not None and applied_for == key:
        return applied
    return replay_logic.choice_for(session, applied)


def answer(r: Any, bound: replay_bound.Bound) -> Any:
    """The ``Answer`` of replay ``r`` with ``bound`` as the Explorer has it (a pending bound says where to ask,
    a failed one what went wrong)."""
    return replay_bound.answer(r, bound, pending=PENDING.format(n=len(r.requests)),
                               failed=f"it failed ({bound.error})" if bound.error else "")


def lead(said: Any) -> Lead:
    """The lead of an ``Answer``: its three lines and, where the transcript holds too little of the bill to
    read the figures as the whole session's, the visibility sentence."""
    seen = said.figures.visibility
    return Lead(tuple(said.lines()), seen.sentence() if seen is not None and seen.warn else "")
