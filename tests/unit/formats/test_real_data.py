"""Real recorded transcripts (../shared/data/real, skipped when absent): invariants, not typed numbers.

Every expected count is computed here from the raw JSON, independently of the
importers; the tau-bench repeat count is also checked against the figure
SOURCES.md states.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from pruner.formats.export import to_openai_messages, validate_openai_messages
from pruner.formats.export import to_anthropic_messages, validate_anthropic_messages
from pruner.formats import load_dialogues, load_session
from pruner.model import Session, canonical_json, validate_session
from pruner.engine.prune import prune
from tests.support.docs import documentation_text
from tests.support.paths import REAL_DATA

TAU = REAL_DATA / "tau-bench" / "gpt-4o-airline.json"
SWE = REAL_DATA / "swe-agent" / "marshmallow-1867.function_calling_replace.traj"
PI = REAL_DATA / "pi" / "large-session.jsonl"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real transcript not found: {path}")
    return path


@lru_cache(maxsize=None)
def _tau():
    raw = json.loads(_need(TAU).read_text())
    return raw, load_dialogues(TAU)


def _check_links(session: Session) -> tuple[int, int]:
    """Every result answers an earlier call with the same tool name; returns (calls, answered)."""
    validate_session(session)
    calls = {}
    answered = set()
    for m in session.messages:
        for c in m.tool_calls:
            calls[c.id] = c.name
        if m.tool_call_id is not None:
            assert m.tool_call_id in calls and m.tool_name == calls[m.tool_call_id]
            answered.add(m.tool_call_id)
    return len(calls), len(answered)


def _check_prune_and_export(session: Session):
    first = prune(session)
    validate_openai_messages(to_openai_messages(first))
    validate_anthropic_messages(to_anthropic_messages(first))
    second = prune(first.kept)
    assert second.kept.messages == first.kept.messages  # pruning twice changes nothing
    assert all(d.status == "kept" for d in second.decisions)
    return first


def test_tau_bench_every_dialogue_imports_linked():
    raw, sessions = _tau()
    assert len(sessions) == len(raw)
    for record, session in zip(raw, sessions):
        traj = record["traj"]
        assert len(session.messages) == len(traj)
        assert [m.role for m in session.messages] == [t["role"] for t in traj]
        n_calls = sum(len(t.get("tool_calls") or []) for t in traj)
        n_results = sum(t["role"] == "tool" for t in traj)
        assert _check_links(session) == (n_calls, n_results)
        assert session.last_turn == sum(t["role"] == "user" for t in traj)


def test_tau_bench_pruned_exports_are_api_valid_and_stable():
    _, sessions = _tau()
    for session in sessions:
        _check_prune_and_export(session)


def _repeats(traj, key) -> list[int]:
    """Positions of tool results whose call is repeated later in the dialogue (same key)."""
    seen_later: set = set()
    out = []
    call_at = {}
    for i, t in enumerate(traj):
        for c in t.get("tool_calls") or []:
            call_at[i] = key(c["function"])
    positions = sorted(call_at)
    for i in reversed(positions):
        k = call_at[i]
        if k in seen_later:
            out.append(i + 1)  # tau-bench puts each result right after its call
        seen_later.add(k)
    return sorted(out)


#: About what "[superseded by the result at turn 12 (id m40)]" costs in o200k_base tokens.
PLACEHOLDER_TOKENS = 16


def test_tau_bench_exact_repeats_are_all_found():
    from pruner import get_counter

    counter = get_counter()
    raw, sessions = _tau()
    stated = re.search(r"(\d+) of them exact repeats", (REAL_DATA / "SOURCES.md").read_text())
    identical = lambda f: (f["name"], f["arguments"])  # byte-identical arguments
    canonical = lambda f: (f["name"], canonical_json(json.loads(f["arguments"])))  # same JSON value
    n_identical = n_canonical = n_superseded = 0
    for record, session in zip(raw, sessions):
        traj = record["traj"]
        assert all(traj[i - 1].get("tool_calls") and traj[i]["role"] == "tool"
                   for i in _repeats(traj, canonical))
        decisions = prune(session).decisions
        superseded = [i for i, d in enumerate(decisions) if d.rule == "superseded_call"]
        # a repeat no longer than its placeholder is kept instead (issue 34): short, and said so
        held = [i for i, d in enumerate(decisions) if d.reason.startswith("placeholder would be longer")]
        assert sorted(superseded + held) == _repeats(traj, canonical)
        assert all(counter.count(session.messages[i].content) <= 2 * PLACEHOLDER_TOKENS for i in held)
        n_identical += len(_repeats(traj, identical))
        n_canonical += len(_repeats(traj, canonical))
        n_superseded += len(superseded) + len(held)
    assert stated is not None and n_identical == int(stated.group(1))
    # Five more calls differ only in JSON spacing; the canonical key (the rule) finds them too.
    assert n_superseded == n_canonical >= n_identical


def test_swe_agent_trajectory():
    raw = json.loads(_need(SWE).read_text())
    session = load_session(SWE)
    history = raw["history"]
    n_calls = sum(len(m.get("tool_calls") or []) for m in history)
    n_results = sum(len(m.get("tool_call_ids") or []) for m in history)
    assert _check_links(session) == (n_calls, n_results)
    result = _check_prune_and_export(session)
    runs = [m for m in session.messages if m.tool_name == "bash"
            and any(c.arguments == {"command": "python reproduce.py"} for p in session.messages
                    for c in p.tool_calls if c.id == m.tool_call_id)]
    assert len(runs) == sum(1 for m in history for c in m.get("tool_calls") or []
                            if json.loads(c["function"]["arguments"]) == {"command": "python reproduce.py"}) >= 2
    by_id = {d.id: d for d in result.decisions}
    assert (by_id[runs[0].id].rule, by_id[runs[0].id].related) == ("superseded_call", runs[1].id)


def test_pi_large_session():
    lines = [json.loads(x) for x in _need(PI).read_text().splitlines() if x.strip()]
    session = load_session(PI)
    msgs = [e["message"] for e in lines if e.get("type") == "message"]
    n_calls = sum(b["type"] == "toolCall" for m in msgs if m["role"] == "assistant" for b in m["content"])
    n_results = sum(m["role"] == "toolResult" for m in msgs)
    assert _check_links(session) == (n_calls, n_results)
    assert len(session.messages) == len(msgs)
    assert session.last_turn == sum(m["role"] == "user" for m in msgs)
    kinds = Counter(e["type"] for e in session.metadata["source"]["entries"])
    assert kinds == Counter(e["type"] for e in lines[1:] if e["type"] != "message")
    usage = [m.metadata["usage"]["output"] for m in session.messages if m.role == "assistant"]
    assert usage == [m["usage"]["output"] for m in msgs if m["role"] == "assistant"]
    _check_prune_and_export(session)


def _number(word: str) -> int:
    words = {"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    return int(word) if word.isdigit() else words[word.lower()]


def test_readme_tau_bench_figures_are_the_measured_ones():
    """The README's tau-bench counts (repeated calls, and the dialogues that grow) are what the code gives."""
    raw, sessions = _tau()
    text = " ".join(documentation_text().split())
    repeats = re.search(r"tau-bench file therefore has (\d+) repeated calls: the (\d+) byte-identical repeats "
                        r"SOURCES.md counts, plus (\d+) whose arguments differ only in JSON spacing", text)
    growth = re.search(r"(\w+) of the (\d+) tau-bench dialogues grows? when pruned", text)
    assert repeats and growth, "the documentation no longer states the tau-bench figures this test checks"
    identical = lambda f: (f["name"], f["arguments"])
    canonical = lambda f: (f["name"], canonical_json(json.loads(f["arguments"])))
    n_canonical = sum(len(_repeats(r["traj"], canonical)) for r in raw)
    n_identical = sum(len(_repeats(r["traj"], identical)) for r in raw)
    assert [int(x) for x in repeats.groups()] == [n_canonical, n_identical, n_canonical - n_identical]
    grown = [r.stats.tokens_after - r.stats.tokens_before for r in map(prune, sessions)
             if r.stats.tokens_after > r.stats.tokens_before]
    # a removal pays for itself (issue 34): no dialogue grows, and the documentation says none does
    stated = 0 if growth.group(1).lower() == "none" else _number(growth.group(1))
    assert (stated, int(growth.group(2)), grown) == (len(grown), len(sessions), [])
