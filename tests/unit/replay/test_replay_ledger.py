"""The cache ledger: each cause on a hand-built session (with the case just across its boundary), the
invariants as properties, and every miss of the real Pi and Claude Code files attributed, its dollars
summing to the miss cost this test computes its own way from the raw files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner import load_session
from pruner.formats import save_session
from pruner.model import Message, Session, ToolCall
from pruner.replay import CAUSES, ledger, ledger_summary, replay
from pruner.replay.detect import match_model
from pruner.replay.prices import default_prices
from tests.support.paths import REAL_DATA

PRICES = default_prices()
SONNET = PRICES.get("claude-sonnet-4-5")  # $3 input, $0.30 read, $3.75 5m write, $6 1h write, $15 output
T0 = 1_750_000_000.0


def user(i: int, t: float | None, text: str = "go on") -> Message:
    return Message(id=f"u{i}", role="user", content=text, metadata={} if t is None else {"timestamp": t})


def asst(i: int, *, read: int, write: int, t: float | None = None, model: str = "claude-sonnet-4-5",
         inp: int = 3, out: int = 10, write_1h: int = 0, calls: int = 0) -> Message:
    usage = {"input": inp, "output": out, "cache_read": read, "cache_write": write}
    if write_1h:
        usage["cache_write_1h"] = write_1h
    meta = {"usage": usage, "model": model}
    if t is not None:
        meta["timestamp"] = t
    return Message(id=f"a{i}", role="assistant", content="ok", metadata=meta,
                   tool_calls=tuple(ToolCall(id=f"c{i}-{k}", name="read", arguments={"k": k}) for k in range(calls)))


def two_requests(*, gap: float, second: Message | None = None, between=(), write_1h: int = 0) -> Session:
    """Request 0 writes 20,000 tokens; request 1 comes ``gap`` seconds later (reads nothing unless
    ``second`` says otherwise)."""
    return Session.of([user(0, T0), asst(0, read=0, write=20_000, t=T0 + 1, write_1h=write_1h), *between,
                       user(1, T0 + gap), second or asst(1, read=0, write=20_500, t=T0 + gap + 1)])


def only(entries, request=1):
    return next(e for e in entries if e.request == request)


def test_first_request_of_the_session():
    e = only(ledger(two_requests(gap=10)), 0)
    assert (e.status, e.cause, e.rebilled_dollars, e.chain) == ("miss", "first_request", 0.0, "main")


@pytest.mark.parametrize("gap, cause", [(301, "ttl_expired"), (299, "no_visible_cause")])
def test_ttl_expired_only_past_five_minutes(gap, cause):
    e = only(ledger(two_requests(gap=gap)))
    assert e.status == "miss" and e.cause == cause
    assert e.gap_seconds == pytest.approx(gap)
    # a hit would have read the 20,000 tokens request 0 wrote, at $0.30 instead of $3.75 per MTok
    assert e.rebilled_dollars == pytest.approx(20_000 * (3.75 - 0.30) / 1e6)


@pytest.mark.parametrize("gap, cause", [(3601, "ttl_expired"), (3599, "no_visible_cause")])
def test_one_hour_writes_live_an_hour(gap, cause):
    e = only(ledger(two_requests(gap=gap, write_1h=20_000)))
    assert e.cause == cause
    assert "1-hour" in e.detail if cause == "ttl_expired" else "1-hour" not in e.detail


def test_timestamps_out_of_order_never_give_a_negative_gap():
    e = only(ledger(two_requests(gap=-600)))
    assert e.gap_seconds is None and e.cause == "no_visible_cause" and "out of order" in e.detail


def test_model_changed_wins_over_ttl():
    s = two_requests(gap=900, second=asst(1, read=0, write=20_500, t=T0 + 901, model="claude-opus-4-5"))
    e = only(ledger(s))
    assert e.cause == "model_changed" and "claude-opus-4-5" in e.detail
    # re-billed at the request's own model (Opus 4.5: $6.25 write, $0.50 read)
    assert e.rebilled_dollars == pytest.approx(20_000 * (6.25 - 0.50) / 1e6)
    same = only(ledger(two_requests(gap=900)))
    assert same.cause == "ttl_expired"


def test_recorded_compaction_right_before():
    summary = Message(id="s", role="summary", content="what happened so far", metadata={"kind": "compaction"})
    e = only(ledger(two_requests(gap=10, between=[summary])))
    assert (e.cause, e.changed_position, e.changed_message_id) == ("compaction", 2, "s")
    assert only(ledger(two_requests(gap=10))).cause == "no_visible_cause"


def test_compaction_recorded_only_in_the_session_metadata():
    s = two_requests(gap=10)
    s = Session.of(s.messages, metadata={"recorded_compactions": [{"position_index": 2, "summary": "x"}]})
    assert only(ledger(s)).cause == "compaction"


def test_prefix_changed_names_the_message_and_how_far_back():
    # A summary that is not the agent's recorded compaction (no kind): as_recorded follows it, so what
    # request 1 sends differs from what request 0 sent, from the summary on.
    summary = Message(id="s", role="summary", content="the story so far")
    e = only(ledger(two_requests(gap=10, between=[summary])))
    assert e.cause == "prefix_changed" and e.changed_position == 2 and e.changed_message_id == "s"
    assert "2 messages back from the end" in e.detail


def _tool_loop(pairs: int) -> Session:
    """Request 0 writes; then ``pairs`` tool calls and results (requests without recorded usage);
    then a request that reads nothing. Blocks after request 0's breakpoint: 1 + 2 * pairs."""
    msgs = [user(0, T0), asst(0, read=0, write=20_000, t=T0 + 1)]
    for k in range(pairs):
        msgs.append(Message(id=f"q{k}", role="assistant", content="",
                            tool_calls=(ToolCall(id=f"c{k}", name="read", arguments={"k": k}),)))
        msgs.append(Message(id=f"t{k}", role="tool", content="result", tool_call_id=f"c{k}"))
    msgs.append(asst(99, read=0, write=21_000, t=T0 + 30))
    return Session.of(msgs)


@pytest.mark.parametrize("pairs, cause", [(10, "lookback_exceeded"), (9, "no_visible_cause")])
def test_lookback_window(pairs, cause):
    e = [x for x in ledger(_tool_loop(pairs)) if x.status == "miss"][-1]
    assert e.cause == cause


def test_below_minimum_is_a_miss_no_hit_could_avoid():
    # Opus 4.5 caches from 4,096 tokens: 3,000 cannot be cached, 5,003 can.
    def session(second_input: int, second_write: int) -> Session:
        return Session.of([user(0, T0), asst(0, read=0, write=0, inp=2_000, t=T0 + 1, model="claude-opus-4-5"),
                           user(1, T0 + 10), asst(1, read=0, write=second_write, inp=second_input, t=T0 + 11,
                                                  model="claude-opus-4-5")])
    e = only(ledger(session(3_000, 0)))
    assert (e.status, e.cause, e.rebilled_dollars) == ("miss", "below_minimum", 0.0)
    assert "sent 3,000 tokens, below the minimum cacheable 4,096" in e.detail
    e = only(ledger(session(3, 5_000)))
    assert e.cause == "below_minimum" and "request 0 sent 2,000 tokens" in e.detail  # nothing was cached to read
    assert e.rebilled_dollars == 0.0


def test_partial_hit_rebills_the_part_not_read():
    s = two_requests(gap=10, second=asst(1, read=15_000, write=5_500, t=T0 + 11))
    e = only(ledger(s))
    assert e.status == "partial" and e.rebilled_dollars == pytest.approx(5_000 * (3.75 - 0.30) / 1e6)
    hit = only(ledger(two_requests(gap=10, second=asst(1, read=20_000, write=500, t=T0 + 11))))
    assert (hit.status, hit.cause, hit.rebilled_dollars) == ("hit", "", 0.0)


def _openai(read: int, gap: float) -> Session:
    return Session.of([user(0, T0), asst(0, read=0, write=0, inp=20_000, t=T0 + 1, model="gpt-4o"),
                       user(1, T0 + gap), asst(1, read=read, write=0, inp=21_000 - read, t=T0 + gap + 1,
                                               model="gpt-4o")])


def test_openai_automatic_caching_reads_the_previous_prompt_in_128_token_steps():
    gpt = PRICES.get("gpt-4o")
    assert only(ledger(_openai(19_968 - 1_000, 10))).status == "hit"  # within the 1,024-token tolerance
    e = only(ledger(_openai(10_000, 10)))
    assert e.status == "partial" and e.cause == "no_visible_cause"
    assert e.rebilled_dollars == pytest.approx((19_968 - 10_000) * (gpt.input - gpt.cached_input) / 1e6)
    late = only(ledger(_openai(0, 301)))
    assert late.cause == "ttl_expired" and "retention" in late.detail
    assert only(ledger(_openai(0, 299))).cause == "no_visible_cause"


def test_the_ttl_sentence_of_an_openai_miss_reads_as_english():
    """It said "over the openai's 5-minute retention".

    QA 19, defect 6."""
    detail = only(ledger(_openai(0, 301))).detail
    assert "over the 5-minute retention (openai)" in detail and "the openai's" not in detail


def test_openai_extended_retention_when_the_settings_ask_for_it():
    from pruner.replay import ReplaySettings

    s = Session.of([user(0, T0), asst(0, read=0, write=0, inp=20_000, t=T0 + 1, model="gpt-5.1"),
                    user(1, T0 + 4000), asst(1, read=0, write=0, inp=21_000, t=T0 + 4001, model="gpt-5.1")])
    assert only(ledger(s)).cause == "ttl_expired"
    assert only(ledger(s, settings=ReplaySettings(provider="openai", openai_retention="24h"))).cause == \
        "no_visible_cause"


def test_subagent_start_and_chains_are_apart():
    sub = Session.of([user(10, T0 + 5, "task"), asst(10, read=0, write=9_000, t=T0 + 6),
                      user(11, T0 + 7), asst(11, read=9_000, write=100, t=T0 + 8)],
                     metadata={"chain": "agent-1", "parent_call": "toolu_1"})
    main = two_requests(gap=20, second=asst(1, read=20_000, write=300, t=T0 + 21))
    s = Session.of(main.messages, subagents=[sub])
    entries = ledger(s)
    assert [e.request for e in entries] == [0, 1, 2, 3]
    assert [(e.chain, e.status, e.cause) for e in entries] == [
        ("main", "miss", "first_request"), ("agent-1", "miss", "subagent_start"), ("agent-1", "hit", ""),
        ("main", "hit", "")]  # the subagent's requests did not break the main chain's cache
    assert "toolu_1" in entries[1].detail


def test_bill_of_a_session_with_a_longer_subagent_walks_each_chain_by_its_own_positions():
    # Regression: once find_requests spanned every chain, bill() indexed the main chain's messages with a
    # subagent's positions (IndexError when the subagent is the longer conversation).
    from pruner.replay import bill

    sub = Session.of([m for k in range(5) for m in (user(20 + k, T0 + 10 * k), asst(20 + k, read=0, write=9_000,
                                                                                       t=T0 + 10 * k + 1))],
                     metadata={"chain": "agent-1"})
    s = Session.of(two_requests(gap=20).messages, subagents=[sub])
    assert [(r.chain, r.position) for r in bill(s).requests] == [("main", 1), ("main", 3)] + [
        ("agent-1", 2 * k + 1) for k in range(5)]
    assert len(ledger(s)) == 7


def test_a_subagents_own_file_starts_as_a_subagent():
    for meta in ({"chain": "agent-7"}, {"subagent_file": {"agent_id": "agent-7"}}):
        e = only(ledger(Session.of(two_requests(gap=10).messages, metadata=meta)), 0)
        assert e.cause == "subagent_start" and "agent-7" in e.detail


def test_unpriced_model_is_reported_not_priced_as_another():
    s = two_requests(gap=900, second=asst(1, read=0, write=20_500, t=T0 + 901, model="zzz-made-up-model"))
    e = only(ledger(s))
    assert e.cause == "model_changed" and not e.priced and e.rebilled_dollars == 0.0 and e.dollars == 0.0


def test_summary_lines_say_dollars_and_share_of_the_bill():
    entries = ledger(two_requests(gap=301))
    summary = ledger_summary(entries)
    assert list(summary) == list(CAUSES)
    assert summary["ttl_expired"]["misses"] == 1
    from pruner.replay.ledger_report import lines
    text = "\n".join(lines(entries))
    bill = sum(e.dollars for e in entries)
    share = round(100 * summary["ttl_expired"]["dollars"] / bill)
    assert f"1 miss after the cache's lifetime ran out cost ${summary['ttl_expired']['dollars']:,.4f}, " \
           f"{share} % of the bill" in text


# -- properties ---------------------------------------------------------------------------------------

@st.composite
def sessions(draw):
    def chain(prefix: str, start: float):
        msgs, t = [], start
        for k in range(draw(st.integers(0, 6))):
            t += draw(st.floats(-100, 4000, allow_nan=False))
            msgs.append(Message(id=f"{prefix}u{k}", role="user", content="x",
                                metadata={"timestamp": t} if draw(st.booleans()) else {}))
            usage = draw(st.none() | st.fixed_dictionaries({
                "input": st.integers(0, 50_000), "output": st.integers(0, 500),
                "cache_read": st.integers(0, 50_000), "cache_write": st.integers(0, 50_000)}))
            meta = {"timestamp": t + 1, "model": draw(st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-5",
                                                                        "gpt-4o", "no-such-model"]))}
            if usage is not None:
                meta["usage"] = usage
            rid = draw(st.none() | st.sampled_from(["r1", "r2", "r3"]))  # a request id may repeat across chains
            if rid is not None:
                meta["request_id"] = rid
            msgs.append(Message(id=f"{prefix}a{k}", role="assistant", content="ok", metadata=meta))
        return msgs

    subs = [Session.of(chain(f"s{j}", T0), metadata={"chain": f"agent-{j}"}) for j in range(draw(st.integers(0, 2)))]
    return Session.of(chain("m", T0), subagents=subs)


@given(sessions())
def test_property_one_entry_per_recorded_request_and_summary_sums(s):
    entries = ledger(s)
    # every recorded request once: a request id repeated (across chains too) is one request, the copy
    # with the most output kept; requests recorded with all-zero usage (aborted) have no entry
    kept: dict = {}
    for chain, sub in s.chains:
        for i, m in enumerate(sub.messages):
            if m.role == "assistant" and "usage" in m.metadata:
                key = m.metadata.get("request_id") or (chain, i)
                if key not in kept or m.metadata["usage"]["output"] > kept[key][2]["output"]:
                    kept[key] = (chain, i, m.metadata["usage"])
    expected = sorted((c, i) for c, i, u in kept.values() if any(u.values()))
    assert sorted((e.chain, e.position) for e in entries) == expected
    summary = ledger_summary(entries)
    assert sum(row["dollars"] for row in summary.values()) == pytest.approx(
        sum(e.rebilled_dollars for e in entries), abs=1e-6)
    assert sum(row["misses"] + row["partials"] for row in summary.values()) == sum(e.status != "hit" for e in entries)
    for e in entries:
        assert (e.cause in CAUSES) == (e.status != "hit") and (e.cause == "") == (e.status == "hit")
        assert e.gap_seconds is None or e.gap_seconds >= 0
        assert e.rebilled_dollars >= 0


# -- the real files: every miss attributed, dollars summing to the miss cost from the raw usage ---------

def _price(model: str | None):
    name = match_model(model, PRICES) if model else None
    return PRICES.get(name) if name else None


def _bill(p, inp, read, w5, w1h, out):
    return (inp * p.input + read * p.cached_input + w5 * p.write_price("5m") + w1h * p.write_price("1h")
            + out * p.output) / 1e6


def _miss_cost(chains: dict[str, list[dict]]) -> tuple[float, int, int]:
    """Re-billed dollars, misses and partials from raw requests: what each request paid minus what it
    would have paid had it read what the chain's previous request left cached (its first tokens moved
    from 1-hour writes, then 5-minute writes, then input, to reads)."""
    total, misses, partials = 0.0, 0, 0
    for reqs in chains.values():
        prev = None
        for r in reqs:
            p = _price(r["model"])
            minimum = p.min_cacheable_tokens if p else 1024
            sent = r["input"] + r["read"] + r["w5"] + r["w1h"]
            held = prev["read"] + prev["w5"] + prev["w1h"] if prev is not None else 0
            if r["read"] == 0:
                misses += 1
            elif r["read"] < held:
                partials += 1
            if p is not None and r["read"] < held and (sent >= minimum or r["read"] or r["w5"] or r["w1h"]):
                move = held - r["read"]
                hit = dict(r)
                for k in ("w1h", "w5", "input"):
                    m = min(move, hit[k])
                    hit[k] -= m
                    hit["read"] += m
                    move -= m
                total += _bill(p, r["input"], r["read"], r["w5"], r["w1h"], r["out"]) - _bill(
                    p, hit["input"], hit["read"], hit["w5"], hit["w1h"], hit["out"])
            prev = r
    return total, misses, partials


def _claude_code_raw(path: Path) -> dict[str, list[dict]]:
    """Requests per chain from the raw lines: one per requestId (else message.id), the last line's usage."""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    by_uuid = {d.get("uuid"): d for d in lines if isinstance(d, dict) and d.get("uuid")}

    def chain_of(d):
        if not d.get("isSidechain"):
            return "main"
        if d.get("agentId"):
            return str(d["agentId"])
        while by_uuid.get(d.get("parentUuid"), {}).get("isSidechain"):
            d = by_uuid[d["parentUuid"]]
        return d.get("uuid")

    reqs: dict[tuple[str, str], dict] = {}
    for d in lines:
        m = d.get("message") if isinstance(d, dict) and d.get("type") == "assistant" else None
        if not isinstance(m, dict) or not isinstance(m.get("usage"), dict) or m.get("model") == "<synthetic>":
            continue
        u, chain = m["usage"], chain_of(d)
        rid = d.get("requestId") or m.get("id")
        split = u.get("cache_creation") if isinstance(u.get("cache_creation"), dict) else {}
        w1h = split.get("ephemeral_1h_input_tokens", 0) or 0
        write = u.get("cache_creation_input_tokens", 0) or 0
        reqs[(chain, rid)] = {"chain": chain, "model": m.get("model"), "input": u.get("input_tokens", 0) or 0,
                              "read": u.get("cache_read_input_tokens", 0) or 0, "w5": write - w1h, "w1h": w1h,
                              "out": u.get("output_tokens", 0) or 0}
    chains: dict[str, list[dict]] = {}
    for r in reqs.values():  # dicts keep the first line's order: the request's place in its chain
        if r["input"] + r["read"] + r["w5"] + r["w1h"] + r["out"]:
            chains.setdefault(r["chain"], []).append(r)
    return chains


def _pi_raw(path: Path) -> dict[str, list[dict]]:
    out = []
    for x in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(x)
        m = d.get("message") if d.get("type") == "message" else None
        if not isinstance(m, dict) or m.get("role") != "assistant" or not isinstance(m.get("usage"), dict):
            continue
        u = m["usage"]
        r = {"chain": "main", "model": m.get("model"), "input": u.get("input", 0), "read": u.get("cacheRead", 0),
             "w5": u.get("cacheWrite", 0), "w1h": 0, "out": u.get("output", 0)}
        if r["input"] + r["read"] + r["w5"] + r["out"]:
            out.append(r)
    return {"main": out}


REAL_FILES = [("pi", REAL_DATA / "pi" / "large-session.jsonl")] + [
    ("claude-code", p) for p in sorted((REAL_DATA / "claude-code").glob("*.jsonl"))]


@pytest.mark.parametrize("kind, path", REAL_FILES, ids=[p.name for _, p in REAL_FILES])
def test_real_file_every_miss_has_a_cause_and_the_dollars_add_up(kind, path):
    if not path.is_file():
        pytest.skip(f"{path} not found (real transcripts live in ../shared/data/real)")
    raw = _pi_raw(path) if kind == "pi" else _claude_code_raw(path)
    entries = ledger(load_session(path))
    assert len(entries) == sum(len(r) for r in raw.values()), "one entry per recorded request, every chain"
    assert sorted(len(r) for r in raw.values()) == sorted(
        sum(1 for e in entries if e.chain == c) for c in {e.chain for e in entries})
    for e in entries:
        assert e.status in ("hit", "partial", "miss")
        if e.status != "hit":
            assert e.cause in CAUSES and e.detail
    cost, misses, partials = _miss_cost(raw)
    summary = ledger_summary(entries)
    assert sum(row["misses"] for row in summary.values()) == misses
    assert sum(row["partials"] for row in summary.values()) == partials
    assert sum(row["dollars"] for row in summary.values()) == pytest.approx(cost, rel=1e-6, abs=1e-6)


# -- the CLI ------------------------------------------------------------------------------------------

def test_cli_misses_prints_the_ledger_escaped_and_json_carries_it(tmp_path):
    s = two_requests(gap=400, second=asst(1, read=0, write=20_500, t=T0 + 401, model="evil\x1b[31m-model"))
    path = tmp_path / "s.jsonl"
    save_session(s, path)
    out_json = tmp_path / "out.json"
    run = subprocess.run([sys.executable, "-m", "pruner", "replay", str(path), "--misses", "--strategies",
                          "as_recorded,full", "--json", str(out_json)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "evil\\x1b[31m-model" in run.stdout
    assert "request 1 [main] miss model_changed" in run.stdout
    data = json.loads(out_json.read_text(encoding="utf-8"))["ledger"]
    assert [e["cause"] for e in data["entries"]] == ["first_request", "model_changed"]
    assert data["summary"]["model_changed"]["misses"] == 1 and list(data["summary"]) == list(CAUSES)


def test_cli_misses_on_a_session_without_usage_says_so(samples):
    run = subprocess.run([sys.executable, "-m", "pruner", "replay", str(samples / "openai_chat.json"), "--misses",
                          "--strategies", "as_recorded"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "cache ledger: no request records usage" in run.stdout


def test_replay_ledger_matches_the_session_ledger():
    s = two_requests(gap=301)
    r = replay(s, ["as_recorded"])
    assert r.ledger == ledger(s, default=r.price)
    assert ledger_summary(r) == ledger_summary(r.ledger)
