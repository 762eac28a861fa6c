"""What fills the context (issue 33): ``pruner.replay.composition``.

Expected figures are the test's own: each message's tokens counted here and put in its kind by hand,
and every strategy's kinds checked against the replay's own ``RequestRow.tokens`` (the wire's count,
another path through the code) at every request.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pruner.bench.workloads import generate
from pruner.engine.prune import message_tokens
from pruner.model import Message, Session, ToolCall
from pruner.replay import ReplaySettings, replay
from pruner.replay.composition import (FILE_READS, KINDS, PLACEHOLDERS, recorded_composition, removed_by_kind,
                                       strategy_compositions)
from pruner.tokens import get_counter
from tests.support.paths import REAL_DATA

COMPACTED = REAL_DATA / "claude-code" / "codemie-session-624a4a58.jsonl"
SUBAGENTS = REAL_DATA / "claude-code" / "task-patterns-998db3cd.jsonl"


def _session() -> Session:
    return Session.of([
        Message(id="s", role="system", content="You are a coding agent."),
        Message(id="u", role="user", content="look at src/app.py and run the tests"),
        Message(id="a1", role="assistant", content="", tool_calls=(
            ToolCall("c1", "Read", {"file_path": "src/app.py"}), ToolCall("c2", "Bash", {"command": "pytest"}))),
        Message(id="t1", role="tool", content="def f():\n    return 1\n" * 20, tool_call_id="c1"),
        Message(id="t2", role="tool", content="1 passed in 0.1s", tool_call_id="c2"),
        Message(id="d", role="retrieved_doc", content="The style guide says: four spaces."),
        Message(id="a2", role="assistant", content="All good."),
    ])


def test_each_message_counts_in_its_kind_at_each_request():
    s = _session()
    counter = get_counter("o200k_base")
    n = {m.id: message_tokens(m, counter) for m in s.messages}
    c = recorded_composition(s, encoding="o200k_base")
    assert c.requests == (0, 1)
    assert c.at(0) == {"system": n["s"], "user": n["u"], "assistant": 0, FILE_READS: 0, "tool: Bash": 0,
                       "retrieved documents": 0}
    assert c.at(1) == {"system": n["s"], "user": n["u"], "assistant": n["a1"], FILE_READS: n["t1"],
                       "tool: Bash": n["t2"], "retrieved documents": n["d"]}
    assert c.kinds == ("system", "user", "assistant", FILE_READS, "tool: Bash", "retrieved documents")
    shares = c.final_shares()
    assert shares[FILE_READS] == pytest.approx(n["t1"] / sum(n[k] for k in ("s", "u", "a1", "t1", "t2", "d")))
    assert sum(shares.values()) == pytest.approx(1.0)


def _rows_tokens(r, name: str, chain: str = "main") -> list[int]:
    return [row.tokens for row in r.runs[name].rows if row.chain == chain]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["tool_agent", "rag_assistant"]), st.integers(8, 40), st.integers(0, 3))
def test_the_kinds_add_up_to_what_each_strategy_sends_at_every_request(workload, turns, seed):
    s = generate(workload, turns=turns, seed=seed)
    small = ReplaySettings(context_window=12_000, reserve_tokens=3_000, keep_recent_tokens=3_000,
                           clear_trigger=6_000)
    r = replay(s, settings=small)
    comps = strategy_compositions(r)
    for name, comp in comps.items():
        assert list(comp.totals()) == _rows_tokens(r, name), name
        assert set(comp.kinds) <= set(KINDS) | {k for k in comp.kinds if k.startswith("tool: ")}
    # the same figures when the replay kept no snapshots (the strategies are replayed once more)
    again = strategy_compositions(replay(s, settings=small, snapshots=False))
    assert again == comps
    removed = removed_by_kind(comps, "full")
    for name, kinds in removed.items():
        sent, ref = comps[name].sent(), comps["full"].sent()
        for kind, share in kinds.items():
            if ref.get(kind):
                assert share == pytest.approx(1 - sent.get(kind, 0) / ref[kind])
            else:
                assert share is None


def test_placeholders_are_what_a_strategy_sent_instead_of_a_result():
    s = _session()
    r = replay(s, ["full", "clear_tool_uses"], settings=ReplaySettings(clear_trigger=10, clear_keep=0))
    comps = strategy_compositions(r)
    assert PLACEHOLDERS in comps["clear_tool_uses"].kinds and PLACEHOLDERS not in comps["full"].kinds
    assert list(comps["clear_tool_uses"].totals()) == _rows_tokens(r, "clear_tool_uses")
    assert removed_by_kind(comps, "full")["clear_tool_uses"][FILE_READS] == 1.0


@pytest.mark.skipif(not COMPACTED.exists(), reason="the shared Claude Code session is absent")
def test_the_recorded_reading_follows_the_recorded_compaction_as_as_recorded_sends():
    from pruner import load_session

    s = load_session(COMPACTED)
    r = replay(s, ["as_recorded"])
    c = recorded_composition(s, encoding=r.settings.prune.encoding)
    assert list(c.totals()) == _rows_tokens(r, "as_recorded")
    assert "summaries" in c.kinds  # the recorded compaction's summary


@pytest.mark.skipif(not SUBAGENTS.exists(), reason="the shared Claude Code session with subagents is absent")
def test_a_subagent_chain_has_its_own_composition():
    from pruner import load_session

    s = load_session(SUBAGENTS)
    chain = s.chains[1][0]
    r = replay(s, ["full"])
    comp = strategy_compositions(r, chain=chain)["full"]
    assert comp.chain == chain and list(comp.totals()) == _rows_tokens(r, "full", chain)
    assert len(recorded_composition(s, chain).requests) == len(comp.requests)
    with pytest.raises(KeyError, match="no chain"):
        recorded_composition(s, "nope")
