"""The incremental pruner equals a full prune after every append."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pruner import Message, PruneConfig, prune
from pruner.incremental import IncrementalPruner

from .strategies import sessions


def _turns(messages):
    """Split at user messages, the way an agent loop appends."""
    chunk: list[Message] = []
    for m in messages:
        if m.role == "user" and chunk:
            yield chunk
            chunk = []
        chunk.append(m)
    if chunk:
        yield chunk


def _same(a, b):
    assert a.decisions == b.decisions
    assert a.kept == b.kept
    assert a.placeholders == b.placeholders
    sa, sb = a.stats, b.stats
    for f in ("messages_before", "messages_after", "tokens_before", "tokens_after", "by_status", "by_rule",
              "rounds", "counter"):
        assert getattr(sa, f) == getattr(sb, f), f


@given(sessions(max_turns=10), st.sampled_from([PruneConfig(), PruneConfig(orphan_policy="drop_pair")]))
def test_equals_a_full_prune_after_every_turn(session, config):
    pruner = IncrementalPruner(config, name=session.name, source_format=session.source_format)
    so_far: list[Message] = []
    for chunk in _turns(session.messages):
        pruner.append(chunk)
        so_far.extend(chunk)
        _same(pruner.result(), prune(session.with_messages(so_far), config))


@given(sessions(max_turns=6), st.integers(1, 4))
def test_equals_a_full_prune_for_any_batching(session, size):
    pruner = IncrementalPruner(name=session.name)
    msgs = list(session.messages)
    for i in range(0, len(msgs), size):
        pruner.append(msgs[i:i + size])
    _same(pruner.result(), prune(session))
