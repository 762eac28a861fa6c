"""The pruner's guarantees, checked on generated sessions (500 per property in CI)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pruner import PruneConfig, prune
from pruner.analysis.index import markers
from pruner.formats.export import to_openai_messages, to_text, validate_openai_messages
from pruner.formats.native import dumps

from tests.strategies import sessions

CONFIGS = st.sampled_from([
    PruneConfig(),
    PruneConfig(orphan_policy="drop_pair"),
    PruneConfig(near_duplicate_threshold=0.5),
    PruneConfig(deduplicate=False),
    PruneConfig(expire=False),
])


def _kept_view(session):
    return [(m.id, m.content) for m in session.messages]


@given(sessions(), CONFIGS)
def test_pruning_twice_changes_nothing(session, config):
    once = prune(session, config)
    twice = prune(once.kept, config)
    assert _kept_view(twice.kept) == _kept_view(once.kept)
    assert twice.stats.by_status["expired"] == twice.stats.by_status["duplicate"] == 0


@given(sessions(), CONFIGS)
def test_every_dependency_of_a_kept_message_is_kept(session, config):
    """A kept message that refers to a key keeps a definer of it from before it (if
    one existed), and a kept tool result keeps the call that produced it."""
    result = prune(session, config)
    kept_ids = {m.id for m in result.kept.messages}
    position = {m.id: i for i, m in enumerate(session.messages)}
    definers: dict[str, list[str]] = {}
    for m in session.messages:
        for k in set(m.defines) | set(markers(m.content)[0]):
            definers.setdefault(k, []).append(m.id)
    call_owner = {c.id: m.id for m in session.messages for c in m.tool_calls}
    for m in result.kept.messages:
        own = set(m.defines) | set(markers(m.content)[0])
        for key in (set(m.refs) | set(markers(m.content)[1])) - own:
            before = [d for d in definers.get(key, []) if position[d] < position[m.id]]
            if before:
                assert set(before) & kept_ids, f"{m.id} refers to {key} but no definer before it is kept"
        if m.tool_call_id is not None:
            assert call_owner[m.tool_call_id] in kept_ids, f"result {m.id} kept without its call"


@given(sessions(), CONFIGS)
def test_export_is_always_api_valid(session, config):
    result = prune(session, config)
    validate_openai_messages(to_openai_messages(result))
    validate_openai_messages(to_openai_messages(result.kept))
    assert to_text(result).strip()


@given(sessions(), CONFIGS)
def test_same_input_same_output_and_input_untouched(session, config):
    before = dumps(session)
    a = prune(session, config)
    b = prune(session, config)
    assert dumps(session) == before
    assert a.decisions == b.decisions
    assert dumps(a.kept) == dumps(b.kept)


@given(sessions(), CONFIGS)
def test_decisions_are_complete_and_consistent(session, config):
    result = prune(session, config)
    assert [d.id for d in result.decisions] == [m.id for m in session.messages]
    kept_ids = [m.id for m in result.kept.messages]
    assert kept_ids == [d.id for d in result.decisions if d.status in ("kept", "restored")]
    ids = {m.id for m in session.messages}
    for d in result.decisions:
        if d.status in ("expired", "duplicate"):
            assert d.rule and d.reason
        if d.status == "restored":
            assert d.rule in ("dependency", "tool_pair") and d.related in kept_ids
        if d.related is not None:
            assert d.related in ids and d.related != d.id
    s = result.stats
    assert sum(s.by_status.values()) == s.messages_before == len(session.messages)
    assert s.messages_after == len(kept_ids)
    assert 0 <= s.tokens_after - s.placeholder_tokens <= s.tokens_before
    # content is never changed, only dropped
    original = {m.id: m for m in session.messages}
    assert all(original[m.id] == m for m in result.kept.messages)


@given(sessions())
def test_duplicates_point_at_an_earlier_kept_copy(session):
    result = prune(session, PruneConfig(restore=False))
    position = {m.id: i for i, m in enumerate(session.messages)}
    status = {d.id: d.status for d in result.decisions}
    for d in result.decisions:
        if d.status == "duplicate":
            assert position[d.related] < position[d.id]
            assert status[d.related] == "kept"
        if d.rule == "superseded_call":
            assert position[d.related] > position[d.id]


@given(sessions(), CONFIGS)
def test_a_removal_pays_for_itself_per_message_and_in_total(session, config):
    """Issue 34: no message is replaced by a placeholder that is not shorter than itself, so pruning never
    makes the context larger. Per message: a kept one sends itself, a removed result whose call is kept
    its placeholder, any other removed message nothing; each at most what the message was."""
    from pruner import get_counter, message_tokens

    result = prune(session, config)
    counter = get_counter(config.encoding)
    kept = {m.id for m in result.kept.messages}
    before_total = after_total = 0
    for m in session.messages:
        before = message_tokens(m, counter)
        if m.id in kept:
            after = before
        elif m.role == "tool" and m.tool_call_id in result.placeholders:
            after = counter.count(result.placeholders[m.tool_call_id])
            assert after < before, (m.id, result.placeholders[m.tool_call_id])
        else:
            after = 0
        assert after <= before, m.id
        before_total += before
        after_total += after
    assert after_total <= before_total
    assert result.stats.tokens_after <= result.stats.tokens_before
    for d in result.decisions:  # a message kept back says why
        if d.status == "kept" and d.reason.startswith("placeholder would be longer"):
            assert d.id in kept and d.rule == ""
