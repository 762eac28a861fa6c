"""Synthetic workloads: reproducible, rate-driven, and labelled from the world model alone."""

from __future__ import annotations

import ast
import re
import hashlib
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner import PrunerError, get_counter, message_tokens, validate_session
from pruner.formats.native import dumps, loads
from pruner.model import canonical_json
from pruner.rules import RULES, Removal, register_rule
from pruner.bench.workloads import (WORKLOADS, generate, lost_items, missing_facts, oracle_messages,
                              session_truth)
from tests.support.paths import ROOT, SAMPLES



def test_parameters_are_the_issue_table():
    # The table in issue 4, column by column.
    expected = {
        "plain_chat": (0, 0.0, 0.05, 0.3, 1),
        "rag_assistant": (3, 0.45, 0.10, 0.4, 2),
        "tool_agent": (2, 0.35, 0.65, 0.7, 5),
    }
    for name, (docs, overlap, calls, repeats, tools) in expected.items():
        p = WORKLOADS[name]
        assert (p.docs_per_turn, p.overlap_rate, p.tool_call_rate, p.repeat_call_rate, len(p.tools)) == (
            docs, overlap, calls, repeats, tools)
        assert (p.fact_rate, p.back_ref_rate) == (0.08, 0.3)
        assert p.tool_fact_rate > 0


_DIGEST = ("import hashlib, sys; from pruner.bench.workloads import generate; from pruner.formats.native import dumps;"
           "print(*[hashlib.sha256(dumps(generate(w, turns=60, seed=3)).encode()).hexdigest()"
           " for w in ('plain_chat', 'rag_assistant', 'tool_agent')])")


def test_a_seed_gives_byte_identical_sessions_across_processes_and_hash_seeds():
    outs = []
    for hash_seed in ("1", "987654"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        outs.append(subprocess.run([sys.executable, "-c", _DIGEST], env=env, capture_output=True, text=True,
                                   check=True, cwd=ROOT).stdout.split())
    assert outs[0] == outs[1]
    here = [hashlib.sha256(dumps(generate(w, turns=60, seed=3)).encode()).hexdigest()
            for w in ("plain_chat", "rag_assistant", "tool_agent")]
    assert here == outs[0]
    assert generate("tool_agent", turns=60, seed=4).messages != generate("tool_agent", turns=60, seed=3).messages


def _shape(m):
    return (m.id, m.role, m.content, m.turn, m.tool_calls, m.tool_call_id)


def test_a_longer_session_extends_the_shorter_one():
    short, long = generate("tool_agent", turns=40, seed=1), generate("tool_agent", turns=120, seed=1)
    assert [_shape(m) for m in long.messages[:len(short.messages)]] == [_shape(m) for m in short.messages]


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_waste_grows_with_the_conversation(workload):
    counter = get_counter()

    def removable(turns):
        s = generate(workload, turns=turns, seed=0)
        total = sum(message_tokens(m, counter) for m in s.messages)
        return total - sum(message_tokens(m, counter) for m in oracle_messages(s)), total

    small, small_total = removable(100)
    big, big_total = removable(400)
    assert big > small  # more turns, more waste: never a fixed count
    if workload != "plain_chat":  # plain chat has too little waste for a stable share at 100 turns
        assert big / big_total >= 0.8 * small / small_total


def _calls(session):
    for i, m in enumerate(session.messages):
        for c in m.tool_calls:
            yield i, m, c


def test_repeats_reuse_arguments_and_other_calls_of_a_tool_differ():
    s = generate("tool_agent", turns=500, seed=0)
    seen: dict[str, int] = {}
    repeats = fresh = 0
    for _, _, c in _calls(s):
        key = f"{c.name}({canonical_json(c.arguments)})"
        if key in seen:
            repeats += 1
        else:
            fresh += 1
        seen[key] = seen.get(key, 0) + 1
    share = repeats / (repeats + fresh)
    assert 0.4 < share < 0.85  # the repeat rate (0.7) shows, diluted by first calls and edits
    by_tool: dict[str, set] = {}
    for key in seen:
        by_tool.setdefault(key.split("(")[0], set()).add(key)
    assert all(len(keys) > 1 for keys in by_tool.values())  # several distinct calls per tool


def test_same_message_pairs_repeat_a_call_with_ids_that_sort_against_position():
    s = generate("tool_agent", turns=300, seed=0)
    pairs = [m for m in s.messages if len(m.tool_calls) == 2]
    assert pairs
    for m in pairs:
        a, b = m.tool_calls
        assert (a.name, canonical_json(a.arguments)) == (b.name, canonical_json(b.arguments))
        assert sorted([a.id, b.id]) != [a.id, b.id]
        assert sorted([a.id, b.id], key=lambda x: int(x[4:])) != [a.id, b.id]


def test_re_retrievals_include_every_near_duplicate_kind():
    s = generate("rag_assistant", turns=200, seed=0)
    by_chunk = {}
    variants = {}
    for m in s.messages:
        if m.role != "retrieved_doc":
            continue
        v = m.metadata.get("variant")
        item = (m.metadata.get("carries") or m.metadata.get("partial"))[0]
        if v is None:
            by_chunk[item] = m.content
        else:
            variants.setdefault(v, []).append((item, m.content))
    assert set(variants) == {"exact", "header", "whitespace", "changed_word", "subchunk"}
    for v, copies in variants.items():
        for item, content in copies:
            original = by_chunk.get(item)
            if original is None:
                continue  # first seen through a tool result
            assert (content == original) == (v == "exact")
    for item, content in variants["changed_word"]:
        if item in by_chunk:
            a, b = by_chunk[item].split(), content.split()
            assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def test_tags_and_paraphrases():
    s = generate("tool_agent", turns=300, seed=2)
    truth = session_truth(s)
    assert truth.tagged and truth.untagged_only
    by_id = s.by_id()
    quoting_replies = 0
    for key, fact in truth.facts.items():
        texts = {mid: by_id[mid].content + " ".join(canonical_json(c.arguments) for c in by_id[mid].tool_calls)
                 for mid in fact.carriers}
        defining = [t for t in texts.values() if f"DEFINE:{key}" in t]
        assert defining, key
        for mid, text in texts.items():
            if f"DEFINE:{key}" in text:
                continue
            # A reply that used the fact carries it: it quotes the value the defining message states.
            m = by_id[mid]
            assert m.role == "assistant" and key in (*m.metadata.get("uses", ()), *m.metadata.get("untagged_uses", ()))
            value = re.findall(r"`([^`]+)`", text)[-1]
            assert all(value in t for t in defining), (key, value)
            quoting_replies += 1
    assert quoting_replies
    for m in s.messages:
        for key in m.metadata.get("uses", ()):
            assert f"REF:{key}" in m.content
        for key in m.metadata.get("untagged_uses", ()):
            assert key not in m.content and not re.search(r"\bREF:", m.content)


def test_labels_follow_the_live_copies():
    s = generate("tool_agent", turns=200, seed=1)
    later_live: dict[str, int] = {}
    for i, m in enumerate(s.messages):
        for entry in m.metadata.get("live", ()):
            later_live[entry] = i  # last index carrying each live copy
    for i, m in enumerate(s.messages):
        if m.role in ("system", "user", "assistant"):
            assert m.required is True
            continue
        live = m.metadata.get("live", ())
        last_for_something = any(later_live[e] == i for e in live)
        assert m.required == last_for_something, m.id


def test_the_oracle_keeps_every_fact_and_live_item():
    for w in WORKLOADS:
        for turns in (50, 200):
            s = generate(w, turns=turns, seed=0)
            truth = session_truth(s)
            kept = [m.id for m in oracle_messages(s)]
            assert missing_facts(truth, kept).tagged == ()
            assert missing_facts(truth, kept).untagged == ()
            assert lost_items(truth, kept) == ()


_FORBIDDEN = {"prune", "rules", "analysis", "bench", "baselines", "incremental", "export", "compaction"}


def test_ground_truth_code_never_imports_the_pruner():
    for path in sorted((ROOT / "pruner" / "workloads").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                parts = (node.module or "").split(".")
                assert not (_FORBIDDEN & set(parts)), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert not (_FORBIDDEN & set(alias.name.split("."))), f"{path.name} imports {alias.name}"


def test_labels_do_not_change_when_the_rules_do():
    before = dumps(generate("tool_agent", turns=80, seed=5))

    @register_rule("test_expire_everything", stage="expired", description="test only")
    def expire_everything(index, alive, config):
        return [Removal(index=i, rule="test_expire_everything") for i, a in enumerate(alive) if a]
    try:
        assert dumps(generate("tool_agent", turns=80, seed=5)) == before
    finally:
        del RULES["test_expire_everything"]


@given(workload=st.sampled_from(sorted(WORKLOADS)), turns=st.integers(0, 25), seed=st.integers(0, 10_000))
def test_every_generated_session_is_valid_labelled_and_round_trips(workload, turns, seed):
    s = generate(workload, turns=turns, seed=seed)
    validate_session(s)
    assert len([m for m in s.messages if m.role == "user"]) == turns
    assert all(isinstance(m.required, bool) for m in s.messages)
    assert loads(dumps(s)) == s
    truth = session_truth(s)
    kept = [m.id for m in oracle_messages(s)]
    assert missing_facts(truth, kept) == missing_facts(truth, [m.id for m in s.messages])
    assert dumps(generate(workload, turns=turns, seed=seed)) == dumps(s)


def test_bad_arguments_are_pruner_errors():
    with pytest.raises(PrunerError, match="unknown workload 'chat'"):
        generate("chat", turns=5)
    with pytest.raises(PrunerError, match="turns"):
        generate("plain_chat", turns=-1)


@pytest.mark.parametrize("workload", list(WORKLOADS))
@pytest.mark.parametrize("turns", [50, 200])
def test_committed_samples_are_the_generator_output(workload, turns):
    path = SAMPLES / f"workload-{workload}-{turns}.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} not committed")
    assert path.read_text(encoding="utf-8") == dumps(generate(workload, turns=turns, seed=0))


_STATEMENT = re.compile(r"(?:Change of plan: )?(?:Please export everything as|The deadline for this work is|Our budget "
                        r"for this is capped at|We deploy only in|The|Write all customer-facing text in) (.+?)"
                        r"(?: team owns this system)?\. DEFINE:(\w+)")


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_a_fact_value_stands_only_in_messages_about_that_fact(workload):
    """Two language facts both said "English": a context that had lost one still spelled its value in the
    other, so a reply quoting it showed no recall loss though its fact was gone (tool_agent 2,000, 2 of 48
    requests). Every statement now takes a value no other statement of the session used, and no other
    message writes it: read here from the text, every message holding a value is about its fact.

    Defect 20."""
    s = generate(workload, turns=2000, seed=0)
    owner: dict[str, str] = {}
    for m in s.messages:
        if m.role == "user":
            for value, key in _STATEMENT.findall(m.content):
                assert owner.setdefault(value, key) == key, (value, key, owner[value])
    assert len(owner) > 100
    pattern = re.compile("|".join(sorted((re.escape(v) for v in owner), key=len, reverse=True)))
    for m in s.messages:
        md = m.metadata or {}
        about = {str(e).rpartition("@")[0][5:] for e in md.get("carries", ()) if str(e).startswith("fact:")}
        about |= {str(k) for k in (*md.get("uses", ()), *md.get("untagged_uses", ()))}
        for hit in pattern.finditer(m.content):
            if re.match(r"[\w.-]", m.content[hit.end():hit.end() + 1] or " "):
                continue  # part of a longer word or number ("JSON" in "NDJSON" is checked as NDJSON)
            if hit.start() and re.match(r"[\w$.-]", m.content[hit.start() - 1]):
                continue
            assert owner[hit.group()] in about, (m.id, hit.group())
