"""The agent's own compaction summary beside the offline summariser's, at the same length.

Where a transcript records a compaction the agent really made (Claude Code's compact summary, Pi's
compaction entries), ``pruner.replay.recall`` scores the recorded summary on the replies after it.
``offline_same_length`` gives it something to be compared with: the offline summariser's summary of
the same history (the messages that left the recording's context when the summary entered it),
cut to the agent summary's token count, line by line, so neither side wins by being longer.

>>> from pruner.model import Message
>>> history = [Message(id="u", role="user", content="Fix the parser in src/parse.py; keep MAX_DEPTH = 64.")]
>>> text, ours, theirs = offline_same_length(history, Message(id="s", role="summary", content="x " * 40))
>>> text.startswith("## Goal") and ours <= theirs
True
"""

from __future__ import annotations

from typing import Sequence

from ..compaction.base import SummaryTask
from ..compaction.offline import OfflineSummarizer
from ..compaction.prompts import history_request
from ..model import Message
from ..tokens import get_counter


def cut_to_tokens(text: str, budget: int, *, encoding: str | None = None) -> str:
    """The longest run of ``text``'s first lines that fits ``budget`` tokens."""
    counter = get_counter(encoding) if encoding else get_counter()
    if counter.count(text) <= budget:
        return text
    out: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        n = counter.count(line)
        if used + n > budget:
            break
        out.append(line)
        used += n
    return "".join(out)


def offline_same_length(history: Sequence[Message], summary: Message) -> tuple[str, int, int]:
    """(the offline summary of ``history`` cut to ``summary``'s length, its tokens, the summary's tokens)."""
    counter = get_counter()
    messages = tuple(history)
    theirs = counter.count(summary.content)
    text = OfflineSummarizer(budget_tokens=theirs).summarize(SummaryTask("history", messages,
                                                                       history_request(messages)))
    text = cut_to_tokens(text, theirs)
    return text, counter.count(text), theirs
