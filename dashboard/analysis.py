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
#: Sessions up to this many messages get the pruned context per turn on page load;
#: longer ones compute it on request, with fewer sampled turns.
AUTO_CONTEXT_MESSAGES = 2_500
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


def _after_by_role(result: PruneResult, positions: dict[str, int], tokens: tuple[int, ...]) -> dict[str, int]:
    kept = result.kept.messages
    after = tables.role_tokens([m.role for m in kept], [tokens[positions[m.id]] for m in kept])
    after["tool"] += result.stats.placeholder_tokens
    return after


@st.cache_data(show_spinner=False, max_entries=32)
def _context_series(session_key: str, config: PruneConfig, turns: tuple[int, ...], _session: Session,
                    _tokens: tuple[int, ...]) -> list[dict]:
    """The pruned context, by role, when the conversation stood at each of ``turns``.

    Each value is the library's own result for the conversation up to that turn:
    ``IncrementalPruner`` (equal to ``prune`` after every append) when the
    messages are in turn order, else ``prune`` of each prefix.
    """
    messages = _session.messages
    positions = {m.id: i for i, m in enumerate(messages)}
    wanted = set(turns)
    samples: list[dict] = []
    remaining = list(turns)
    if all(a.turn <= b.turn for a, b in zip(messages, messages[1:])):
        incremental, full_in_a_row = IncrementalPruner(config), 0
        for turn, group in itertools.groupby(messages, key=lambda m: m.turn):
            update = incremental.append(list(group))
            if turn in wanted:
                samples.append({"turn": turn, "after": _after_by_role(incremental.result(), positions, _tokens)})
                remaining.remove(turn)
            # A configuration it cannot carry (a pass switched off) re-prunes everything on
            # every append; pruning only the sampled prefixes is then far cheaper.
            full_in_a_row = full_in_a_row + 1 if update.recomputed else 0
            if full_in_a_row >= 3:
                break
        else:
            return samples
    for turn in remaining:
        prefix = [m for m in messages if m.turn <= turn]
        if not prefix:
            continue
        try:
            result = prune(_session.with_messages(prefix), config)
        except InvalidSessionError:
            continue  # a prefix cut inside a call/result pair of a badly ordered import
        samples.append({"turn": turn, "after": _after_by_role(result, positions, _tokens)})
    return samples


def context_is_cheap(loaded: LoadedSession) -> bool:
    """Whether the pruned context per turn can be computed on page load without a noticeable wait."""
    return len(loaded.session.messages) <= AUTO_CONTEXT_MESSAGES


def context_samples(loaded: LoadedSession, config: PruneConfig, analysis: Analysis, *,
                    limit: int = MAX_CONTEXT_SAMPLES) -> list[dict]:
    """The pruned context at each (sampled) turn: what the library keeps of the conversation as it stood then.

    The last turn is the whole session, whose result is already known, so it is
    taken from ``analysis`` instead of being pruned again.
    """
    turns = sample_turns(loaded.session.last_turn, limit)

    def build() -> list[dict]:
        tokens = tuple(int(t) for t in analysis.frame["tokens"])
        samples = _context_series(loaded.key, config, tuple(turns[:-1]), loaded.session, tokens)
        frame = analysis.frame
        kept = frame[frame["status"].isin(["kept", "restored"])]
        last = tables.role_tokens(kept["role"].tolist(), kept["tokens"].tolist())
        last["tool"] += analysis.result.stats.placeholder_tokens
        return [*samples, {"turn": turns[-1], "after": last}]
    return cache.memoised("context", (loaded.key, config, limit), build)
