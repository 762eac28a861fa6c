"""The incremental pruner equals a full prune after every append."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pruner import Message, PruneConfig, Session, prune
from pruner.engine.incremental import IncrementalPruner

from tests.strategies import sessions


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


def test_a_bad_batch_is_refused_and_changes_nothing():
    import pytest

    from pruner import InvalidSessionError, ToolCall

    pruner = IncrementalPruner()
    first = [Message("u1", "user", "hi"),
             Message("a1", "assistant", "", tool_calls=(ToolCall("c1", "search", {"q": "x"}),)),
             Message("r1", "tool", "result text that is long enough to matter for the passes", tool_call_id="c1")]
    pruner.append(first)
    with pytest.raises(InvalidSessionError) as err:
        pruner.append([Message("a2", "assistant", "", tool_calls=(ToolCall("c1", "search", {}),))])
    assert "tool call id 'c1' is used by an earlier call" in str(err.value)
    with pytest.raises(InvalidSessionError):
        pruner.append([Message("u1", "user", "again")])  # duplicate id
    second = [Message("u2", "user", "again"),
              Message("a3", "assistant", "", tool_calls=(ToolCall("c2", "search", {"q": "x"}),)),
              Message("r2", "tool", "result text that is long enough to matter for the passes", tool_call_id="c2")]
    pruner.append(second)
    expected = prune(Session(messages=tuple(first + second)))
    assert pruner.result().decisions == expected.decisions


@given(sessions(), st.integers(1, 5))
def test_context_after_every_append_is_what_prune_sends(session, step):
    p = IncrementalPruner()
    msgs = session.messages
    for end in range(step, len(msgs) + step, step):
        p.append(msgs[end - step:end])
        full = prune(session.with_messages(msgs[:end]))
        ctx = p.context()
        assert ctx.messages == full.kept.messages
        assert dict(ctx.placeholders) == dict(full.placeholders)
        assert ctx.tokens == full.stats.tokens_after


@given(sessions(), st.integers(1, 5),
       st.sampled_from([PruneConfig(), PruneConfig(orphan_policy="drop_pair"),
                        PruneConfig(disabled_rules={"near_duplicate"}), PruneConfig(restore=False)]))
def test_each_append_says_how_the_context_changed(session, step, config):
    """``append`` reports which messages entered and left the context and which placeholders
    changed; applied to the previous context, that gives the new one (which equals prune())."""
    p = IncrementalPruner(config)
    msgs = session.messages
    ids: list[str] = []
    placeholders: dict[str, str] = {}
    for end in range(step, len(msgs) + step, step):
        change = p.append(msgs[end - step:end]).change
        ctx = p.context()
        full = prune(session.with_messages(msgs[:end]), config)
        assert ctx.messages == full.kept.messages and ctx.tokens == full.stats.tokens_after
        assert dict(ctx.placeholders) == dict(full.placeholders)
        assert not set(change.entered) & set(ids) and set(change.left) <= set(ids)
        now = {m.id for m in ctx.messages}
        assert (set(ids) - set(change.left)) | set(change.entered) == now
        for cid, text in change.placeholders.items():
            if text is None:
                del placeholders[cid]
            else:
                placeholders[cid] = text
        assert placeholders == dict(ctx.placeholders)
        ids = [m.id for m in ctx.messages]


def test_a_rule_without_a_tracker_makes_every_append_prune_in_full():
    from pruner.rules import RULES, Removal, register_rule

    @register_rule("test_drop_short_docs", stage="duplicate", description="test only: no tracker")
    def drop_short_docs(index, alive, config):
        return [Removal(i, "test_drop_short_docs") for i, m in enumerate(index.messages)
                if alive[i] and m.role == "retrieved_doc" and len(m.content) < 50]
    try:
        session = Session.of([Message("u1", "user", "hi"), Message("d1", "retrieved_doc", "short doc"),
                              Message("u2", "user", "again"), Message("d2", "retrieved_doc", "x" * 60)])
        pruner = IncrementalPruner()
        updates = [pruner.append([m]) for m in session.messages]
        assert all(u.recomputed for u in updates)
        assert pruner.result().decisions == prune(session).decisions
        assert pruner.result().decision("d1").rule == "test_drop_short_docs"
    finally:
        del RULES["test_drop_short_docs"]
