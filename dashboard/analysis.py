"""What pruning did to the loaded session: the result, its per-message frame, the context per turn.

Every value is the library's own: ``prune`` for the whole session and
``IncrementalPruner`` for the conversation as it stood at each turn. Results
are cached per process, keyed by the session's content key and the
``PruneConfig`` (``st.cache_resource``: results are immutable and a
12,000-message one would cost a second to un-pickle on every hit), and the
last few are memoised per visitor.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from pruner import IncrementalPruner, PruneConfig, PruneResult, Session, message_tokens, prune
from pruner.errors import InvalidSessionError
from pruner.tokens import DEFAULT_ENCODING, get_counter

from . import cache, tables
from .loading import LoadedSession

log = logging.getLogger("pruner.dashboard")

#: The context chart prunes the session up to each of at most this many turns.
MAX_CONTEXT_SAMPLES = 60
#: Sessions up to this many messages get the pruned context per turn on page load; up to the
#: second figure when the incremental pruner carries the settings (then every turn costs what
#: changed); longer ones compute it on request, with fewer sampled turns.
AUTO_CONTEXT_MESSAGES, AUTO_CONTEXT_MESSAGES_CARRIED = 2_500, 60_000
LARGE_CONTEXT_SAMPLES = 24


@dataclass(frozen=True)
class Analysis:
    """A pruning result with the per-message frame every view of it uses."""

    result: PruneResult
    frame: pd.DataFrame  # tables.messages_frame of the input session


@st.cache_resource(show_spinner=False)
def token_counter(encoding: str = DEFAULT_ENCODING):
    """The library's counter for ``encoding``, built once per process."""
    return get_counter(encoding)


@st.cache_resource(show_spinner=False, max_entries=16)
def _analyse(session_key: str, config: PruneConfig, _session: Session) -> Analysis:
    _analysed().add((session_key, config))
    result = prune(_session, config)
    counter = token_counter(config.encoding)
    tokens = counter.count_many([m.content for m in _session.messages])
    tokens = [message_tokens(m, counter) if m.tool_calls else n for m, n in zip(_session.messages, tokens)]
    return Analysis(result=result, frame=tables.messages_frame(_session, result.decisions, tokens))


@st.cache_resource(show_spinner=False)
def _analysed() -> set:
    """(session key, config) pairs pruned in this process (a hint: cache eviction is not tracked)."""
    return set()


def is_analysed(session_key: str, config: PruneConfig) -> bool:
    """Whether ``analyse`` has (most likely) a cached result, i.e. will return without pruning."""
    return (session_key, config) in _analysed()


def analyse(loaded: LoadedSession, config: PruneConfig) -> Analysis:
    """Prune ``loaded`` with ``config`` (cached by content + config) and build its frame."""
    return cache.memoised("analysis", (loaded.key, config), lambda: _analyse(loaded.key, config, loaded.session),
                          keep=6)


def sample_turns(last_turn: int, limit: int = MAX_CONTEXT_SAMPLES) -> list[int]:
    """Every turn when there are few, else ``limit`` evenly spaced ones including the first and last."""
    if last_turn + 1 <= limit:
        return list(range(last_turn + 1))
    return sorted({round(i * last_turn / (limit - 1)) for i in range(limit)})


@dataclass(frozen=True)
class ContextSeries:
    """What the model receives at each turn, after pruning, as the library computes it.

    ``totals`` holds ``(turn, tokens)`` for every turn when the incremental pruner
    can carry the settings (it gives the context in time proportional to what
    changed), else for the sampled turns only; ``by_role`` holds the make-up by
    role at the sampled turns (``{"turn": t, "after": {role: tokens}}``).
    """

    totals: tuple[tuple[int, int], ...]
    by_role: tuple[dict, ...]
    every_turn: bool


def _by_role(kept, tokens_sent: int, positions: dict[str, int], tokens: tuple[int, ...]) -> dict[str, int]:
    """Tokens per role of the kept messages; what the placeholders add (``tokens_sent`` minus the kept
    messages' own tokens) counts as tool results, which they stand in for."""
    after = tables.role_tokens([m.role for m in kept], [tokens[positions[m.id]] for m in kept])
    after["tool"] += tokens_sent - sum(after.values())
    return after


def carries(config: PruneConfig) -> bool:
    """Whether ``IncrementalPruner`` carries its state with ``config`` (it does with every pass on and no
    rule switched off; otherwise each append prunes everything again, which a long session cannot afford)."""
    return config.expire and config.deduplicate and config.restore and not config.disabled_rules


@st.cache_data(show_spinner=False, max_entries=32)
def _context_series(session_key: str, config: PruneConfig, turns: tuple[int, ...], _session: Session,
                    _tokens: tuple[int, ...]) -> ContextSeries:
    """The pruned context at every turn (or each of ``turns``), and its make-up by role at ``turns``.

    Each value is the library's own: ``IncrementalPruner.context()`` after each
    turn's messages are appended (equal to ``prune`` of the conversation so far)
    when the messages are in turn order and the settings can be carried, else
    ``prune`` of each sampled prefix.
    """
    messages = _session.messages
    positions = {m.id: i for i, m in enumerate(messages)}
    wanted = set(turns)
    if carries(config) and all(a.turn <= b.turn for a, b in zip(messages, messages[1:])):
        incremental, totals, by_role = IncrementalPruner(config), [], []
        for turn, group in itertools.groupby(messages, key=lambda m: m.turn):
            incremental.append(list(group))
            context = incremental.context()
            totals.append((turn, context.tokens))
            if turn in wanted:
                by_role.append({"turn": turn, "after": _by_role(context.messages, context.tokens, positions,
                                                                _tokens)})
        return ContextSeries(totals=tuple(totals), by_role=tuple(by_role), every_turn=True)
    totals, by_role = [], []
    for turn in turns:
        prefix = [m for m in messages if m.turn <= turn]
        if not prefix:
            continue
        try:
            result = prune(_session.with_messages(prefix), config)
        except InvalidSessionError:
            continue  # a prefix cut inside a call/result pair of a badly ordered import
        totals.append((turn, result.stats.tokens_after))
        by_role.append({"turn": turn, "after": _by_role(result.kept.messages, result.stats.tokens_after, positions,
                                                        _tokens)})
    return ContextSeries(totals=tuple(totals), by_role=tuple(by_role), every_turn=False)


def context_is_cheap(loaded: LoadedSession, config: PruneConfig) -> bool:
    """Whether the pruned context per turn is computed on page load (else on request)."""
    n = len(loaded.session.messages)
    return n <= AUTO_CONTEXT_MESSAGES or (n <= AUTO_CONTEXT_MESSAGES_CARRIED and carries(config))


def context_series(loaded: LoadedSession, config: PruneConfig, analysis: Analysis, *,
                   limit: int = MAX_CONTEXT_SAMPLES) -> ContextSeries:
    """What the model receives at each turn after pruning: the conversation as it stood then, pruned."""
    turns = sample_turns(loaded.session.last_turn, limit)

    def build() -> ContextSeries:
        tokens = tuple(int(t) for t in analysis.frame["tokens"])
        return _context_series(loaded.key, config, tuple(turns), loaded.session, tokens)
    return cache.memoised("context", (loaded.key, config, limit), build)
