"""Issue 21: a placeholder says what the rule found, never more.

The defect: a tool result dropped as an 80 % near-duplicate was replaced, for the model, by
"[same as the result at turn 6 (id e29)]" although e29 said something else. Here every placeholder
that pruning writes, on every sample session and generated workload, is checked against the decision
behind it (its rule, the message it points at) and against the two texts themselves, measured by this
test in its own way: an exact duplicate must really be the same text once case, Unicode form,
punctuation and spacing are ignored; a near duplicate must say how much of it appears where, and that
share must not exceed the share of its word 3-grams this test finds in the other text.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from pruner import Message, PruneConfig, Session, ToolCall, load_session, prune
from pruner.bench.workloads import generate
from pruner.formats.export import dumps
from pruner.rules import RULES
from tests.support.paths import SAMPLES

WHERE = r" at turn (?P<turn>\d+) \(id (?P<id>[^)]+)\)"
#: What each rule's placeholder must say, given the decision: a pattern with the message it points at.
EXPECTED = {
    "superseded_call": r"\[superseded by the result" + WHERE + r"\]",
    "file_state": r"\[stale file read; the file changed" + WHERE + r"\]",
    "ttl": r"\[expired after turn (?P<ttl>\d+)\]",
    "exact_duplicate": r"\[same as the result" + WHERE + r"\]",
    "near_duplicate": r"\[(?P<pct>\d+) % of this text appears in the result" + WHERE + r"\]",
}


def _sessions():
    for path in sorted(SAMPLES.iterdir()):
        if path.is_file() and not path.name.startswith("."):
            try:
                yield path.name, load_session(path)
            except Exception:  # a sample holding several dialogues or none: not this test's subject
                continue
    for name in ("tool_agent", "rag_assistant", "coding_agent"):
        try:
            yield f"workload {name}", generate(name, turns=120, seed=3)
        except Exception:
            continue
    yield "crafted", _crafted()


def _crafted() -> Session:
    """A session with an exact copy of a tool result (in other case and spacing) and a result with a
    time to live: kinds of removal the samples do not hold as tool results."""
    log = "Build finished: 12 targets compiled, 0 warnings, artefacts written to ./dist " * 3
    messages = [Message(id="u1", role="user", content="build it twice, then check the weather", turn=1)]
    for k, (args, text) in enumerate(((('{"target": "all"}'), log), ('{"target": "all", "again": true}',
                                                                      "  " + log.upper() + " "))):
        messages += [Message(id=f"a{k}", role="assistant", content="", turn=1 + k,
                             tool_calls=(ToolCall(id=f"c{k}", name="build", arguments=args),)),
                     Message(id=f"r{k}", role="tool", content=text, turn=1 + k, tool_call_id=f"c{k}",
                             tool_name="build")]
    messages += [Message(id="a9", role="assistant", content="", turn=3,
                         tool_calls=(ToolCall(id="c9", name="weather", arguments='{"city": "Oslo"}'),)),
                 Message(id="r9", role="tool", content="Oslo: 4 degrees and rain", turn=3, tool_call_id="c9",
                         tool_name="weather", expires_after_turn=4),
                 *(Message(id=f"u{t}", role="user", content=f"and now step {t}", turn=t) for t in range(4, 8))]
    return Session.of(messages, name="crafted")


def _normal(text: str) -> str:
    return re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = _normal(text).split()
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def _checked_placeholders(config: PruneConfig) -> dict[str, int]:
    """Check every placeholder of every session; returns how many were checked per rule."""
    seen: dict[str, int] = {}
    for name, session in _sessions():
        result = prune(session, config)
        by_id = {m.id: m for m in session.messages}
        decision_of = {d.id: d for d in result.decisions}
        result_of = {m.tool_call_id: m for m in session.messages if m.role == "tool" and m.tool_call_id}
        for call_id, text in result.placeholders.items():
            message = result_of[call_id]
            decision = decision_of[message.id]
            pattern = EXPECTED.get(decision.rule)
            assert pattern is not None, f"{name}: no expectation for rule {decision.rule!r}: {text}"
            match = re.fullmatch(pattern, text)
            assert match, f"{name} {message.id} ({decision.rule}): {text!r}"
            seen[decision.rule] = seen.get(decision.rule, 0) + 1
            if "id" in match.groupdict():
                assert match["id"] == decision.related, f"{name} {message.id}: points at {match['id']}"
                assert int(match["turn"]) == by_id[decision.related].turn
            if decision.rule == "ttl":
                assert int(match["ttl"]) == message.expires_after_turn
            other = by_id.get(decision.related) if decision.related else None
            if decision.rule == "exact_duplicate":
                assert _normal(message.content) == _normal(other.content), f"{name} {message.id}: not a copy"
            if decision.rule == "near_duplicate":
                assert "same as" not in text
                mine = _trigrams(message.content)
                share = len(mine & _trigrams(other.content)) / len(mine) if mine else 0.0
                claimed = int(match["pct"])
                assert claimed <= 100 * share + 1e-6, f"{name} {message.id}: claims {claimed} %, finds {share:.1%}"
                assert claimed >= int(100 * config.near_duplicate_threshold) - 1
    return seen


def test_every_placeholder_says_what_its_rule_found():
    seen = _checked_placeholders(PruneConfig())
    # every rule that removes a result (and so writes a placeholder) is exercised by the samples
    removing = {name for family in RULES.values() if family.stage in ("expired", "duplicate")
                for name in (family.emits or {family.name: None})}
    assert removing <= set(EXPECTED)
    assert {"superseded_call", "file_state", "ttl", "exact_duplicate", "near_duplicate"} <= set(seen), seen


def test_regression_a_near_duplicate_never_says_same_as_even_at_a_low_threshold():
    seen = _checked_placeholders(PruneConfig(near_duplicate_threshold=0.5))
    assert seen.get("near_duplicate", 0) > 0


@pytest.mark.parametrize("to", ["openai", "anthropic", "text"])
def test_the_export_sends_the_near_duplicate_wording(to):
    session = generate("rag_assistant", turns=120, seed=3)
    result = prune(session)
    near = [t for t in result.placeholders.values() if "of this text appears in" in t]
    assert near, "the workload has near duplicates at this threshold"
    exported = dumps(result, to=to)
    assert all(t in exported for t in near[:5])
    assert not any(t.startswith("[same as") for t in near)
