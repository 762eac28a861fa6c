"""The Compaction page's dollars and recall of one previewed compaction (issue 33): ``pruner.replay.preview_value``,
on a result built by hand so the expected figures can be read off it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pruner.model import Message
from pruner.replay import default_prices
from pruner.replay.preview_value import PreviewDollars, preview_dollars, preview_recall


def _result(summary: str, **kw):
    base = dict(to_summarize=(Message(id="t", role="tool", content="MAX_DEPTH_64 lives in src/parse.py"),),
                turn_prefix=(), pinned=(), summary=summary,
                kept=(Message(id="u", role="user", content="where is it?"),
                      Message(id="a", role="assistant", content="src/parse.py sets MAX_DEPTH_64"),
                      Message(id="a2", role="assistant", content="again: src/parse.py and MAX_DEPTH_64")),
                tokens_before=10_000, tokens_after=4_000, cache_rewrite_tokens=3_000)
    return SimpleNamespace(**(base | kw))


def test_recall_counts_the_kept_replies_terms_only_the_summarised_messages_held():
    score = preview_recall(_result("The parser is src/parse.py."))
    # reply a: both terms only the summarised tool result held (2 candidates, the summary holds one);
    # reply a2: the kept reply a now holds both, so nothing of a2 is the summary's job
    assert (score.candidates, score.held, score.missing, score.recall) == (2, 1, ("MAX_DEPTH_64",), 0.5)
    assert preview_recall(_result("x", kept=(Message(id="u", role="user", content="hi"),))).recall is None


def test_a_term_the_pinned_system_prompt_holds_is_not_the_summarys_job():
    pinned = (Message(id="s", role="system", content="Always keep MAX_DEPTH_64."),)
    score = preview_recall(_result("nothing", pinned=pinned))
    assert (score.candidates, score.held) == (1, 0)


def test_dollars_and_when_compacting_pays_back():
    price = default_prices().get("claude-sonnet-4-5-20250929", "anthropic")
    d = preview_dollars(_result(""), price, offline=True)
    assert d.next_compacting == pytest.approx((1_000 * price.cached_input + 3_000 * price.write_price("5m")) / 1e6)
    assert d.next_not_compacting == pytest.approx(10_000 * price.cached_input / 1e6)
    assert d.per_request == pytest.approx(6_000 * price.cached_input / 1e6)
    extra = d.next_compacting - d.next_not_compacting
    assert d.break_even == -(-extra // d.per_request) and d.break_even >= 1
    assert preview_dollars(_result(""), price, offline=False).summariser is None
    assert PreviewDollars("m", 1.0, 2.0, 0.5, 0.0).break_even == 0
    assert PreviewDollars("m", 2.0, 1.0, 0.0, 0.0).break_even is None
