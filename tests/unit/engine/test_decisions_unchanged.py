"""The engine decides exactly as main did before it was rebuilt for speed (issue 13).

``tests/support/decision_record.py`` recorded, from main before the rebuild, every
decision (id, status, rule, reason, related), the placeholders and the token totals on
every sample session, the 2,000-turn workloads, the reference corpora and every real
transcript (all 200 tau-bench dialogues), under both orphan policies. Each case here
prunes the same input now and compares. Large inputs are compared by digest; their
counts per rule are shown when the digest differs.

One decision changed on purpose, and its record was updated with the commit that made it:
in the real Pi session, ``e485`` ("Successfully replaced text in .../dark.json. Changed 46
characters to 48 characters.") has exactly 80% of its word 3-grams in ``e455``, so it is a
near-duplicate at the default threshold; main's anchor sampling missed it, the new search
(``pruner.analysis.near``) finds it. Every other decision on every input is unchanged.

One wording changed on purpose (issue 21): a near duplicate's placeholder says how much of it appears
where ("[92 % of this text appears in the result at turn 43 (id m220)]") instead of "[same as …]", so
the records' placeholders and ``tokens_after`` were re-recorded with that commit, after checking that
the old wording still reproduced every stored record exactly (decisions, rule counts, digests).

One input changed on purpose (issue 20): the generated workloads are ``pruner.workloads/3`` (no two fact
statements of a session share a value; calls record what they copy), so the six workload samples and
the three 2,000-turn workloads were re-recorded with that commit; every other input's record (the
other samples, the reference corpora, every real transcript) came out byte-identical.

One rule changed on purpose (issue 20, ``test_an_edit_does_not_expire_the_read_the_next_edit_copies_from``):
``file_state`` no longer makes a read stale at an edit of its file, only at a write or a full re-read,
so the records were re-recorded with that commit. What moved: on the samples 2 reads per sample from
``expired/file_state`` to kept (6 on workload-tool_agent-200), and 1 orphaned call of the OpenAI samples
and workload-tool_agent-200 from ``expired/tool_pair`` to kept (with ``drop_pair``: its result is kept
now); the 2,000-turn tool_agent workload 13 fewer file_state and 7 fewer dependency removals; the real
Pi session 37 fewer file_state and 25 more near duplicates (re-reads after an edit that 80 % of an
earlier, now kept, read holds). Every other input came out byte-identical.

One rule changed on purpose (issue 34, ``pruner.engine.payoff``): a removal whose placeholder is not
shorter than the result it replaces is not made (the result is kept: "placeholder would be longer"),
so the records were re-recorded with that commit. What moved (default policy): one short result per
sample kept on six samples (claude_code 250 -> 238 tokens, swe_agent 288 -> 275, gemini_cli 103 -> 92,
pi 241 -> 238, openai_responses 203 -> 201, codex 274 -> 273, anthropic 179 -> 177), workload-tool_agent
23 more results kept at 200 turns, 269 fewer superseded_call on the 2,000-turn tool_agent (492,509 ->
491,007 tokens), the real Pi session 33 fewer superseded_call and 1 fewer near duplicate (122,129 ->
122,082), and 1-2 fewer superseded_call on 8 of the 200 tau-bench dialogues. Every other input came out
byte-identical. With ``drop_pair`` a result whose call's message holds only that call still goes (no
placeholder is sent); a call among several keeps its short result, which can cost a few tokens
(workload-tool_agent-200: 46,829 -> 46,850).
"""

from __future__ import annotations

import json

import pytest

from pruner import load_session
from tests.support.decision_record import (CONFIGS, DIGESTS_RECORD, SAMPLES, SAMPLES_RECORD, digest,
                                           large_input_names, load_large, record, sample_files)

_SAMPLES = json.loads(SAMPLES_RECORD.read_text(encoding="utf-8"))
_DIGESTS = json.loads(DIGESTS_RECORD.read_text(encoding="utf-8"))


def test_the_record_covers_every_sample_and_large_input():
    assert sorted(_SAMPLES) == [p.name for p in sample_files()]
    assert sorted(_DIGESTS) == sorted(large_input_names())
    assert sum(name.startswith("real/tau-bench#") for name in _DIGESTS) == 200


@pytest.mark.parametrize("name", sorted(_SAMPLES))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_sample_decisions_are_unchanged(name, config):
    now = json.loads(json.dumps(record(load_session(SAMPLES / name), CONFIGS[config])))
    then = _SAMPLES[name][config]
    for before, after in zip(then["decisions"], now["decisions"]):
        assert after == before, f"{name}: decision on {before[0]} changed"
    assert now == then


@pytest.mark.parametrize("name", sorted(_DIGESTS))
def test_large_input_decisions_are_unchanged(name):
    session = load_large(name)
    if session is None:
        pytest.skip(f"{name} is not on this machine (../shared/data)")
    for config, cfg in CONFIGS.items():
        now = digest(record(session, cfg))
        then = _DIGESTS[name][config]
        assert (now["by_rule"], now["messages_after"], now["tokens_after"]) == \
            (then["by_rule"], then["messages_after"], then["tokens_after"]), f"{name} ({config})"
        assert now["sha256"] == then["sha256"], f"{name} ({config}): same counts, different decisions"
