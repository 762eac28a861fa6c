"""The offline summariser's defects that summary recall showed (issue 20), one regression test each,
and the agent's own summary scored beside the offline one at the same length."""

from __future__ import annotations

import re

from pruner.compaction.base import SummaryTask
from pruner.compaction.offline import OfflineSummarizer
from pruner.compaction.prompts import history_request
from pruner.compaction.sections import bullets, parse_sections
from pruner.model import Message, ToolCall
from pruner.tokens import get_counter


def _summary(messages, **kw) -> str:
    msgs = tuple(messages)
    return OfflineSummarizer(**kw).summarize(SummaryTask("history", msgs, history_request(msgs)))


def _msgs():
    return [
        Message(id="u1", role="user", content="Refactor the metrics sync in src/core/metrics/types.ts please."),
        Message(id="a1", role="assistant", content="Now let me update the config. I'll use SyncState because it "
                "already tracks lastSyncedMessageUuid.",
                tool_calls=(ToolCall(id="c1", name="Read", arguments={"file_path": "src/core/metrics/types.ts"}),)),
        Message(id="t1", role="tool", tool_call_id="c1", tool_name="Read",
                content="export interface SyncState { lastSyncedMessageUuid: string; retries_max: 7 }"),
        Message(id="u2", role="user", content="ls"),
        Message(id="u3", role="user", content="[Request interrupted by user]"),
        Message(id="a2", role="assistant", content="Looking at types.ts and metrics/types.ts again."),
        Message(id="a3", role="assistant", content="Let me check the processor first:"),
        Message(id="a4", role="assistant", content="✅ 🎉"),
    ]


def test_narration_is_not_a_decision_and_a_plan_keeps_what_follows_it():
    s = parse_sections(_summary(_msgs()))
    decisions = bullets(s["Key Decisions"])
    assert not any(d.lower().startswith(("now let me", "let me")) for d in decisions)
    assert bullets(s["Next Steps"]) == ["Check the processor first"]


def test_trivial_requests_and_notices_are_not_goals():
    goal = bullets(parse_sections(_summary(_msgs()))["Goal"])
    assert not any(g.endswith(": ls") or "interrupted" in g for g in goal)
    assert goal[0].startswith("Refactor the metrics sync")


def test_an_emoji_only_message_is_not_a_next_step():
    steps = bullets(parse_sections(_summary(_msgs()))["Next Steps"])
    assert steps and all(re.search(r"[A-Za-z]{3}", x) for x in steps)


def test_a_path_listed_in_full_is_not_listed_again_as_its_tail():
    critical = bullets(parse_sections(_summary(_msgs()))["Critical Context"])
    files = [c for c in critical if c.startswith("file ")]
    assert "file `src/core/metrics/types.ts`" in files
    assert "file `types.ts`" not in files and "file `metrics/types.ts`" not in files


def test_key_terms_fill_the_budget_and_never_exceed_it():
    msgs = _msgs() + [Message(id=f"x{i}", role="tool", tool_call_id="c1", tool_name="Read",
                              content=f"const LIMIT_{i} = {1000 + i}; // see docs/part_{i}.md") for i in range(80)]
    counter = get_counter()
    plain = _summary(msgs)
    for budget in (400, 900, 2000):
        text = _summary(msgs, budget_tokens=budget)
        assert counter.count(text) <= budget
        held = {f"LIMIT_{i}" for i in range(80) if f"LIMIT_{i}" in text}
        assert len(held) >= sum(1 for i in range(80) if f"LIMIT_{i}" in plain) or counter.count(plain) > budget
    small, large = _summary(msgs, budget_tokens=600), _summary(msgs, budget_tokens=2000)
    assert sum(t in large for t in (f"LIMIT_{i}" for i in range(80))) > sum(t in small for t in
                                                                             (f"LIMIT_{i}" for i in range(80)))


def test_agent_summary_and_offline_summary_are_scored_at_equal_length(real_data):
    from pruner import load_session
    from pruner.replay import replay

    s = load_session(real_data / "claude-code" / "codemie-session-624a4a58.jsonl")
    r = replay(s, ["as_recorded"])
    (c,) = r.recall.recorded_compactions
    assert c.candidates > 0 and c.summary_tokens and c.offline_tokens <= c.summary_tokens
    assert 0 <= c.held <= c.candidates and 0 <= c.offline_held <= c.candidates
