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


def test_a_summary_quotes_the_line_that_binds_a_name_to_its_value():
    """The offline summary listed a history's key terms bare (``terms: `4178`, `alert_manual`, …``):
    a file line compaction had replaced still had both its terms in the summary, so context recall
    counted the line held while a reader could not tell which value went with which name (95 of
    compact's missing copies on tool_agent 2,000 stood at requests with recall 1). Each line of the
    file read here binds a name to a value; the summary must quote every such line whole.

    Defect 20."""
    body = [f"setting_{i}_ms = {4100 + 17 * i}" for i in range(12)]
    msgs = [Message(id="u", role="user", content="Tune the timeouts in conf/timeouts.toml."),
            Message(id="a", role="assistant", content="",
                    tool_calls=(ToolCall(id="c1", name="read_file", arguments={"path": "conf/timeouts.toml"}),)),
            Message(id="t", role="tool", tool_call_id="c1", tool_name="read_file",
                    content="# conf/timeouts.toml\n" + "\n".join(body))]
    text = _summary(msgs)
    quoted = [line for line in body if f"`{line}`" in text]
    assert quoted == body, set(body) - set(quoted)
    assert "terms:" not in text


def test_a_file_viewers_line_numbers_are_not_quoted_as_key_lines():
    """Claude Code's Read prints each line after a gutter ("  112→"): every margin number is a number of
    three digits, so each became a key term and the summary quoted "`111→`" lines for them, crowding out
    identifiers the later replies used (``this.isSyncing`` on codemie-session-624a4a58).

    Defect 20."""
    lines = [f"{100 + i:>6}→    const value_{i} = this.isSyncing;" for i in range(30)]
    msgs = [Message(id="u", role="user", content="Fix src/sync.ts please."),
            Message(id="a", role="assistant", content="",
                    tool_calls=(ToolCall(id="c1", name="Read", arguments={"file_path": "src/sync.ts"}),)),
            Message(id="t", role="tool", tool_call_id="c1", tool_name="Read", content="\n".join(lines))]
    critical = bullets(parse_sections(_summary(msgs))["Critical Context"])
    assert not any("→" in item for item in critical)
    assert "`const value_29 = this.isSyncing;`" in critical


def test_sql_keywords_are_not_terms_a_reply_used():
    """``SELECT``, ``FROM``, ``WHERE`` (capitals: marked like ``README``) counted as distinctive terms, so
    every query "used" them and any context with another query "held" them: a re-run whose plain-word
    table and columns were gone still showed recall 1. A query's own identifiers still count.

    Defect 20."""
    from pruner.replay.terms import reply_terms

    assert reply_terms("SELECT mirror, SUM(registry) FROM switchs WHERE weekly = 10 GROUP BY 1") == set()
    assert reply_terms("SELECT order_id FROM public.invoices WHERE total > 1000") == {"order_id", "public.invoices",
                                                                                        "1000"}
