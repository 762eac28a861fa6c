"""The chart builders and page logic of issue 33's views (what was lost, what fills the context, the chains),
checked through their JSON spec and their frames; expected values are worked out here by hand."""

from __future__ import annotations

import json
import math

import pandas as pd
from hypothesis import given, strategies as st

from dashboard import composition_charts as cc
from dashboard.logic import chains, composition, lost
from pruner.model import Message, Session
from pruner.replay.composition import Composition
from pruner.replay.lost import LostTerm, LostTerms
from tests.support.figures import spec


def _comp(kinds, rows, strategy="full") -> Composition:
    return Composition(strategy, "main", tuple(range(len(rows))), (1,) * len(rows), tuple(kinds),
                       tuple(map(tuple, rows)))


def test_the_stack_has_one_area_per_kind_with_its_share_at_the_end_in_the_legend():
    fig = spec(cc.composition_figure(_comp(["user", "assistant", "file reads"], [[5, 0, 0], [5, 3, 12]])))
    assert [t["name"] for t in fig["data"]] == ["user (25.0 % at the end)", "assistant (15.0 % at the end)",
                                               "file reads (60.0 % at the end)"]
    assert {t["stackgroup"] for t in fig["data"]} == {"kinds"}
    assert fig["data"][2]["y"] == [0, 12] and fig["data"][0]["x"] == [0, 1]


@given(st.lists(st.lists(st.integers(0, 1000), min_size=12, max_size=12), min_size=1, max_size=6),
       st.integers(1, 10))
def test_tools_beyond_the_largest_are_one_area_and_no_token_is_lost_or_counted_twice(rows, top):
    kinds = ["user", *(f"tool: t{i}" for i in range(10)), "summaries"]
    comp = _comp(kinds, rows)
    names, columns = cc.grouped(comp, top)
    assert [sum(c[i] for c in columns) for i in range(len(rows))] == [sum(r) for r in rows]
    tools = [n for n in names if n.startswith("tool: ")]
    assert len(tools) == top and (cc.OTHER_TOOLS in names) == (top < 10)
    sent = comp.sent()
    kept = sorted((k for k in kinds if k.startswith("tool: ")), key=lambda k: (-sent[k], k))[:top]
    assert sorted(tools) == sorted(kept)
    assert names[0] == "user" and names[-1] == "summaries"


def test_transcript_names_reach_the_chart_escaped():
    fig = spec(cc.composition_figure(_comp(["tool: <img src=x>"], [[3]])))
    assert "<img" not in json.dumps(fig) and "&lt;img src=x&gt;" in fig["data"][0]["name"]
    frame = pd.DataFrame({"chain": ["main", "<b>agent</b>"], "request": [0, 1], "context": [10, 20],
                          "dollars": [0.5, math.nan]})
    lanes = spec(cc.chains_figure(frame, order=["main", "<b>agent</b>"]))
    assert [t["name"] for t in lanes["data"]] == ["main", "&lt;b&gt;agent&lt;/b&gt;"]
    assert lanes["data"][1]["customdata"] == [[20, 0.0]]


def test_every_chain_is_a_lane_in_the_sessions_order_with_its_own_dollars():
    frame = pd.DataFrame({"chain": ["main", "b", "a", "main", "b"], "request": [0, 1, 2, 3, 4],
                          "context": [1, 2, 3, 4, 5], "dollars": [1.0, 0.25, 0.5, 2.0, 0.25]})
    lanes = spec(cc.chains_figure(frame, order=["main", "a", "b"]))["data"]
    assert [t["name"] for t in lanes] == ["main", "a", "b"]
    assert {t["name"]: sum(c[1] for c in t["customdata"]) for t in lanes} == {"main": 3.0, "a": 0.5, "b": 0.5}
    assert lanes[0]["x"] == [0, 3] and lanes[0]["marker"]["size"][1] > lanes[0]["marker"]["size"][0]


def test_the_removal_table_says_removed_added_and_more():
    full = _comp(["user", "file reads"], [[10, 0], [10, 40]])
    other = _comp(["user", "file reads", "summaries"], [[15, 0, 0], [15, 10, 7]], "compact")
    frame = composition.removed_frame({"full": full, "compact": other}, "full")
    assert frame.set_index("kind")["compact"].to_dict() == {"user": "sends 50 % more", "file reads": "75 %",
                                                            "summaries": "adds 7 tok"}
    assert frame.set_index("kind")["full at the end"].to_dict() == {"user": "20.0 %", "file reads": "80.0 %",
                                                                    "summaries": "0.0 %"}
    assert composition.end_sentence(full) == "At the last request (50 tokens): file reads 80.0 %, user 20.0 %."


def test_a_chain_without_usage_says_so_instead_of_a_number():
    sub = Session.of([Message(id="u", role="user", content="go"), Message(id="a", role="assistant", content="ok")],
                     metadata={"chain": "agent-1"})
    usage = {"input": 1_000_000, "output": 0, "cache_read": 0, "cache_write": 0}
    s = Session.of([Message(id="u", role="user", content="hi"),
                    Message(id="a", role="assistant", content="hello",
                            metadata={"usage": usage, "model": "claude-opus-4-1-20250805"})], subagents=[sub])
    rows = chains.chain_rows(s).set_index("chain")
    assert rows.loc["main", "billed"] == "$15.00" and rows.loc["agent-1", "billed"] == "no usage recorded"
    assert rows.loc["agent-1", "peak context"] == "not recorded" and rows.loc["main", "peak context"] == "1,000,000"
    assert "1 subagent chain (2 messages more)" in chains.chains_caption(s, chains.chain_rows(s))


def _row(term: str, requests: int, request: int = 3) -> LostTerm:
    return LostTerm(term, "main", request, request + requests - 1, requests, 4, "t1", "file reads", request, "pruned")


def test_the_corpus_sums_each_terms_requests_over_sessions_and_ranks_them():
    frame = pd.DataFrame({"compact_lost": [json.dumps([{"term": "a", "requests": 2}, {"term": "b", "requests": 9}]),
                                           json.dumps([{"term": "a", "requests": 8}]), None, "not json"]})
    top = lost.top_lost_frame(frame, ["compact", "truncate"], n=5)
    assert top.to_dict("records") == [{"strategy": "compact", "term": "a", "lacked at": 10, "sessions": 2},
                                      {"strategy": "compact", "term": "b", "lacked at": 9, "sessions": 1}]


def test_the_lost_table_and_its_caption():
    listed = LostTerms("compact", (_row("x", 2), _row("y", 1)), used=40, missing=3, kept=3)
    frame = lost.lost_frame(listed)
    assert frame["term"].tolist() == ["x", "y"] and frame["lacked at"].tolist() == [2, 1]
    assert lost.lost_caption(listed).startswith("compact: 2 terms lost, 3 of the 40 used terms missing")
    assert "Listed from the first 2" in lost.lost_caption(LostTerms("compact", listed.rows, 40, 5, 2))
    assert "lost nothing" in lost.lost_caption(LostTerms("full", (), 40, 0, 0))
