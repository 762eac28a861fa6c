"""What the pruner is compared with: no pruning, truncation to the same budget, the oracle.

>>> from pruner.bench.workloads import generate
>>> from pruner.tokens import get_counter
>>> s = generate("rag_assistant", turns=30, seed=1)
>>> counter = get_counter()
>>> whole = no_pruning(s, counter)
>>> cut = truncate_to_budget(s, whole.tokens_after // 2, counter)
>>> cut.tokens_after <= whole.tokens_after // 2
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..model import Message, Session
from ..engine.prune import message_tokens
from ..tokens import HeuristicCounter, TokenCounter
from .workloads.truth import oracle_messages


@dataclass(frozen=True)
class BaselineResult:
    method: str  # "none", "truncation" or "oracle"
    kept: tuple[Message, ...]
    tokens_after: int
    last_n: int | None = None  # truncation only: how many trailing messages it keeps

    @property
    def kept_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.kept)


Counter = TokenCounter | HeuristicCounter


def _tokens(messages: Iterable[Message], counter: Counter) -> int:
    return sum(message_tokens(m, counter) for m in messages)


def no_pruning(session: Session, counter: Counter) -> BaselineResult:
    return BaselineResult("none", session.messages, _tokens(session.messages, counter))


def truncate_to_budget(session: Session, budget: int, counter: Counter) -> BaselineResult:
    """Keep the system prompt and the last N messages, N as large as ``budget`` tokens allow.

    Tool results at the start of the kept tail whose call was cut off are dropped too,
    so the result is still a valid conversation (an API would reject them).
    """
    msgs = session.messages
    head = [m for m in msgs[:1] if m.role == "system"]
    used = _tokens(head, counter)
    start = len(msgs)
    while start > len(head):
        t = message_tokens(msgs[start - 1], counter)
        if used + t > budget:
            break
        used += t
        start -= 1
    tail = list(msgs[start:])
    while tail and tail[0].tool_call_id is not None:
        used -= message_tokens(tail.pop(0), counter)
    return BaselineResult("truncation", tuple(head + tail), used, last_n=len(tail))


def oracle(session: Session, counter: Counter) -> BaselineResult:
    """The required messages, the dialogue and the system prompt (ground truth from the generator)."""
    kept = oracle_messages(session)
    return BaselineResult("oracle", kept, _tokens(kept, counter))
