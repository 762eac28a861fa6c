"""What was lost, as one list (issue 33): ``pruner.replay.lost`` and ``pruner replay FILE --lost STRATEGY``.

The expected rows are the test's own: from a session built so one term can only be lost one way, and on
a real log from the per-request losses ``--json`` writes (``recall_json``), grouped here by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import pytest
from hypothesis import given, strategies as st

from pruner.model import Message, Session, ToolCall
from pruner.replay import ReplaySettings, replay
from pruner.replay.lost import SORT_KEYS, LostTerm, lost_lines, lost_terms, sort_lost, top_lost
from tests.support.paths import REAL_DATA, ROOT

PI = REAL_DATA / "pi" / "large-session.jsonl"
CLEAR_EARLY = ReplaySettings(clear_trigger=10, clear_keep=0)


def _read(call: str) -> ToolCall:
    return ToolCall(call, "Read", {"file_path": "src/app.py"})


def _stale_read_session() -> Session:
    """A file read twice: the first read alone holds KeyError_42, which the next reply uses."""
    return Session.of([
        Message(id="u", role="user", content="look at src/app.py please"),
        Message(id="a1", role="assistant", content="", tool_calls=(_read("c1"),)),
        Message(id="t1", role="tool", content="def handler():\n    raise KeyError_42\n" * 30, tool_call_id="c1"),
        Message(id="a2", role="assistant", content="", tool_calls=(_read("c2"),)),
        Message(id="t2", role="tool", content="def handler():\n    return None\n" * 30, tool_call_id="c2"),
        Message(id="a3", role="assistant", content="I fixed KeyError_42 in src/app.py"),
        Message(id="u2", role="user", content="and again"),
        Message(id="a4", role="assistant", content="Yes, KeyError_42 is gone from src/app.py"),
    ])


def test_a_superseded_read_is_listed_once_with_its_request_message_and_why():
    r = replay(_stale_read_session(), ["full", "prune_every_request", "clear_tool_uses"], settings=CLEAR_EARLY)
    assert lost_terms(r, "full").rows == ()
    pruned = lost_terms(r, "prune_every_request")
    # request 2 is the reply a3 (requests: a1, a2, a3, a4): t1 was pruned there; a3 itself then holds the term
    assert [(x.term, x.request, x.requests, x.position, x.message_id, x.kind) for x in pruned.rows] == \
        [("KeyError_42", 2, 1, 2, "t1", "file reads")]
    assert pruned.rows[0].why.startswith("pruned at request 2")
    cleared = lost_terms(r, "clear_tool_uses").rows
    assert [(x.term, x.message_id) for x in cleared] == [("KeyError_42", "t1")]
    assert cleared[0].why.startswith("never sent: the placeholder")
    assert pruned.complete and pruned.missing == 1


def test_an_unreplayed_strategy_or_an_unknown_order_is_an_error_a_person_can_act_on():
    from pruner.errors import ConfigurationError

    r = replay(_stale_read_session(), ["full"])
    with pytest.raises(ConfigurationError, match="was not replayed; replayed: full"):
        lost_terms(r, "compact")
    with pytest.raises(ConfigurationError, match="choose from request"):
        sort_lost((), "size")


_rows = st.builds(LostTerm, term=st.text(min_size=1, max_size=6), chain=st.sampled_from(["main", "agent-1"]),
                  request=st.integers(0, 50), last_request=st.integers(0, 50), requests=st.integers(1, 9),
                  position=st.one_of(st.none(), st.integers(0, 40)), message_id=st.text(max_size=4),
                  kind=st.sampled_from(["user", "file reads"]), left_at=st.none(), why=st.sampled_from(["a", "b"]))


@given(st.lists(_rows, max_size=30), st.sampled_from(SORT_KEYS))
def test_every_order_is_a_permutation_ordered_by_its_key(rows, by):
    out = sort_lost(rows, by)
    assert sorted(map(repr, out)) == sorted(map(repr, rows))
    field = {"request": lambda r: r.request, "requests": lambda r: -r.requests, "term": lambda r: r.term.casefold(),
             "message": lambda r: (r.chain, -1 if r.position is None else r.position), "why": lambda r: r.why}[by]
    keys = [field(r) for r in out]
    assert keys == sorted(keys)
    assert sort_lost(list(reversed(rows)), by) == out  # total: the input order never shows


def test_the_text_table_names_every_term_and_says_when_nothing_was_lost():
    r = replay(_stale_read_session(), ["full", "prune_every_request"])
    lines = lost_lines(lost_terms(r, "prune_every_request"))
    assert "KeyError_42" in "\n".join(lines) and "#2 file reads" in "\n".join(lines)
    assert lost_lines(lost_terms(r, "full"))[-1].startswith("nothing lost")
    assert top_lost(lost_terms(r, "prune_every_request")) == [
        {"term": "KeyError_42", "requests": 1, "request": 2, "kind": "file reads"}]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pruner", "replay", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_cli_lost_adds_the_strategy_and_rejects_an_unknown_one(tmp_path):
    path = tmp_path / "s.jsonl"
    from pruner.formats.native import dumps

    path.write_text(dumps(_stale_read_session()), encoding="utf-8")
    done = _cli(str(path), "--strategies", "full", "--lost", "prune_every_request")
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("prune_every_request: 1 term lost", 1)
    assert len(table) == 2 and "KeyError_42" in table[1] and "pruned at request 2" in table[1]
    bad = _cli(str(path), "--lost", "nonsense")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "nonsense" in bad.stderr


@pytest.mark.skipif(not PI.exists(), reason="the shared Pi session is absent")
def test_on_the_shared_pi_session_the_list_groups_the_json_losses_of_every_request(tmp_path):
    out = tmp_path / "r.json"
    done = _cli(str(PI), "--strategies", "full,clear_tool_uses", "--lost", "clear_tool_uses", "--lost-sort",
                "term", "--json", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    # the test's own grouping of the per-request losses the JSON already carried (recall_json)
    groups: dict[tuple, list[int]] = defaultdict(list)
    requests = data["strategies"]["clear_tool_uses"]["recall"]["requests"]
    for req in requests:
        for loss in req["lost"]:
            groups[(loss["chain"], loss["term"], loss["source_id"])].append(loss["request"])
    listed = {(x["chain"], x["term"], x["message_id"]): x for x in data["lost"]["lost"]}
    assert set(listed) == set(groups) and groups
    for key, seen in groups.items():
        assert (listed[key]["request"], listed[key]["last_request"], listed[key]["requests"]) == \
            (min(seen), max(seen), len(seen))
    assert data["lost"]["terms_missing"] == sum(len(v) for v in groups.values())
    terms = [x["term"] for x in data["lost"]["lost"]]
    assert terms == sorted(terms, key=lambda t: (t.casefold(), t)) or len(set(terms)) < len(terms)
    for term in terms:
        assert term[:31] in done.stdout


def test_a_logs_row_carries_each_strategys_most_lacked_terms():
    from pruner.logs.money import money_columns

    row = money_columns(_stale_read_session(), ("full", "prune_every_request"))
    assert row["money_error"] is None
    assert json.loads(row["prune_every_request_lost"]) == [
        {"term": "KeyError_42", "requests": 1, "request": 2, "kind": "file reads"}]
    assert json.loads(row["full_lost"]) == []
