"""What a recorded session cost, summed straight from its raw file(s), independently of pruner's readers.

Each format's own fields, each request at the price row of the model it records (the price table is
data; the arithmetic and the reading are this module's own): Claude Code one request per
``requestId`` (else ``message.id``) across the session's files, the copy with the most output;
Codex one request per ``token_count`` event with new totals, at the latest ``turn_context`` model;
Pi one per assistant message; Gemini CLI one per ``gemini`` message (input counts cached tokens;
thoughts are output). A model without a price row adds nothing (the bill calls it unpriced).
"""

from __future__ import annotations

import json
from pathlib import Path

from pruner.replay import default_prices

_PRICES = default_prices()


def _dollars(model, fresh, read, write_5m, write_1h, out) -> float:
    p = _PRICES.find(model) if isinstance(model, str) and model else None
    if p is None:
        return 0.0
    w5 = p.input if p.cache_write_5m is None else p.cache_write_5m
    w1 = p.input if p.cache_write_1h is None else p.cache_write_1h
    return (fresh * p.input + read * p.cached_input + write_5m * w5 + write_1h * w1 + out * p.output) / 1e6


def _lines(path: Path):
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            yield n, json.loads(line)


def claude_code(paths: list[Path]) -> float:
    best: dict[str, tuple[int, str, dict]] = {}
    for path in paths:
        for n, d in _lines(path):
            m = d.get("message") if d.get("type") == "assistant" else None
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict) or m.get("model") == "<synthetic>":
                continue
            key = d.get("requestId") or m.get("id") or f"{path}:{n}"
            out = m["usage"].get("output_tokens") or 0
            if key not in best or out >= best[key][0]:
                best[key] = (out, m.get("model"), m["usage"])
    total = 0.0
    for out, model, u in best.values():
        written = u.get("cache_creation_input_tokens") or 0
        hour = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
        total += _dollars(model, u.get("input_tokens") or 0, u.get("cache_read_input_tokens") or 0, written - hour,
                          hour, out)
    return total


def codex(path: Path) -> float:
    total, model, last_total = 0.0, None, None
    for _, d in _lines(path):
        p = d.get("payload") or {}
        if d.get("type") == "turn_context":
            model = p.get("model") or model
        elif d.get("type") == "event_msg" and p.get("type") == "token_count":
            info = p.get("info") or {}
            if info.get("total_token_usage") == last_total:
                continue
            last_total = info.get("total_token_usage")
            u = info.get("last_token_usage")
            if u:
                cached = u.get("cached_input_tokens") or 0
                total += _dollars(model, u["input_tokens"] - cached, cached, 0, 0, u["output_tokens"])
    return total


def pi(path: Path) -> float:
    total = 0.0
    for _, d in _lines(path):
        m = d.get("message") or {}
        if d.get("type") == "message" and m.get("role") == "assistant" and isinstance(m.get("usage"), dict):
            u = m["usage"]
            total += _dollars(m.get("model"), u.get("input", 0), u.get("cacheRead", 0), u.get("cacheWrite", 0), 0,
                              u.get("output", 0))
    return total


def gemini_cli(path: Path) -> float:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return sum(_dollars(m.get("model"), t["input"] - t["cached"] + t.get("tool", 0), t["cached"], 0, 0,
                        t["output"] + t["thoughts"])
               for m in doc["messages"] if m.get("type") == "gemini" and (t := m.get("tokens")))


def session_dollars(agent: str, paths: list[Path]) -> float:
    """The raw sum of one session (Claude Code: its main file and its subagent files)."""
    if agent == "claude_code":
        return claude_code(paths)
    return {"codex": codex, "pi": pi, "gemini_cli": gemini_cli}[agent](paths[0])
