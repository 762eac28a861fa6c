"""A replay as text, JSON and CSV (the CLI writes these; the dashboard reads the same rows).

>>> from pruner.bench.workloads import generate
>>> from pruner.replay.engine import replay
>>> r = replay(generate("plain_chat", turns=10, seed=0), ["full", "truncate"])
>>> summary_rows(r)[0]["strategy"], sorted(to_json(r))
('full', ['calibration', 'meta', 'schema', 'strategies'])
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .calibration import from_replay
from .engine import Replay, RequestRow
from .verdict import recall_json, verdict

SCHEMA = "pruner.replay/1"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # transcript text must not drive the terminal


def escape(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` (newlines and tabs kept)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def summary_rows(r: Replay) -> list[dict[str, Any]]:
    """One row per strategy: the totals the CLI table and the dashboard show."""
    return [run.totals for run in r.runs.values()]


def _row_dict(name: str, row: RequestRow) -> dict[str, Any]:
    return {
        "strategy": name, "request": row.request, "position": row.position, "turn": row.turn,
        "messages": row.messages, "tokens": row.tokens, "input": row.input, "cached": row.cached,
        "written": row.written, "fresh": row.fresh, "output": row.output, "cached_share": round(row.cached_share, 4),
        "dollars": round(row.dollars, 8), "dollars_not_inherited": round(row.dollars_not_inherited, 8),
        "dollars_unscaled": round(row.dollars_unscaled, 8), "miss": row.miss, "rejected": row.rejected,
        "aborted": row.aborted, "changed_at": row.changed_at, "model_cached": row.model_cached,
        "model_miss": row.model_miss, "extra_input": row.extra_input, "extra_output": row.extra_output,
        "facts_missing": row.facts_missing,
        "events": [{"kind": e.kind, "tokens_before": e.tokens_before, "tokens_after": e.tokens_after,
                    "position": e.position, "detail": e.detail} for e in row.events],
    }


def meta(r: Replay) -> dict[str, Any]:
    return {
        "session": r.session.name, "source_format": r.session.source_format, "messages": len(r.session.messages),
        "requests": len(r.requests), "turns": r.session.last_turn, "provider": r.price.provider,
        "model": r.price.model, "prices": r.money_label, "price": r.price.as_dict(), "context_window": r.window,
        "scale": r.scale, "scale_source": r.scale_source, "cache_model": r.cache_description,
        "recorded_usage": r.recorded_usage, "notes": list(r.notes),
        "settings": {"ttl": r.settings.ttl, "reserve_tokens": r.settings.reserve_tokens,
                     "keep_recent_tokens": r.settings.keep_recent_tokens, "clear_trigger": r.settings.clear_trigger,
                     "clear_keep": r.settings.clear_keep, "clear_at_least": r.settings.clear_at_least,
                     "clear_exclude_tools": list(r.settings.clear_exclude_tools),
                     "clear_placeholder": r.settings.clear_placeholder, "inherit_cold": r.settings.inherit_cold,
                     "truncate_budget": r.settings.truncate_budget},
    }


def to_json(r: Replay, *, min_recall: float | None = None) -> dict[str, Any]:
    """Everything: meta, the calibration (when usage is recorded), per strategy its totals and every request."""
    calibration = from_replay(r)
    return {
        "schema": SCHEMA, "meta": meta(r),
        "calibration": calibration.as_dict() if calibration else None,
        "strategies": {name: {"summary": run.summary, "totals": run.totals,
                              "requests": [_row_dict(name, row) for row in run.rows],
                              **({"recall": recall_json(r, name)} if r.recall is not None else {})}
                       for name, run in r.runs.items()},
        **({"verdict": verdict(r, **({} if min_recall is None else {"min_recall": min_recall})).as_dict()}
           if r.recall is not None else {}),
    }


CSV_FIELDS = ("strategy", "request", "position", "turn", "messages", "tokens", "input", "cached", "written",
              "fresh", "output", "cached_share", "dollars", "dollars_not_inherited", "dollars_unscaled", "miss",
              "rejected", "aborted", "changed_at", "extra_input", "extra_output", "facts_missing", "events")


def to_csv(r: Replay) -> str:
    """One line per request per strategy; ``events`` as ``kind:before->after`` joined by ``;``."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for name, run in r.runs.items():
        for row in run.rows:
            d = _row_dict(name, row)
            d["events"] = ";".join(f"{e['kind']}:{e['tokens_before']}->{e['tokens_after']}" for e in d["events"])
            w.writerow(["" if d[k] is None else d[k] for k in CSV_FIELDS])
    return out.getvalue()


def _money(x: float) -> str:
    return f"${x:,.2f}" if x >= 1 else f"${x:,.4f}"


def table(r: Replay) -> str:
    """The per-strategy table the CLI prints."""
    facts = any(run.totals["facts_missing_max"] is not None for run in r.runs.values())
    head = ["strategy", "requests", "fresh", "cached", "written", "cached %", "dollars", "unscaled", "peak ctx",
            "rejected", "prunes", "compactions"] + (["facts missing"] if facts else []) + (
        ["recall"] if r.recall is not None else [])
    body = []
    for run in r.runs.values():
        t = run.totals
        row = [run.name, f"{t['billed_requests']:,}", f"{t['fresh']:,}", f"{t['cached']:,}", f"{t['written']:,}",
               f"{100 * t['cached_share']:.1f}", _money(t["dollars"]), _money(t["dollars_unscaled"]),
               f"{t['peak_context']:,}", f"{t['rejected']:,}", f"{t['prunes']:,}", f"{len(t['compactions'])}"]
        if facts:
            row.append("-" if t["facts_missing_max"] is None else
                       f"{t['facts_missing_max']} (at {t['requests_missing_facts']} requests)")
        if r.recall is not None:
            row.append(f"{100 * t['context_recall']:.1f} %")
        body.append(row)
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(x, widths)))
             for x in [head, *body]]
    return "\n".join(lines)


def events_text(r: Replay, *, limit: int = 20) -> list[str]:
    """Compactions (every one, tokens before -> after) and a count of the other events."""
    out = []
    for run in r.runs.values():
        comps = [(row, e) for row, e in run.events if e.kind == "compact"]
        if comps:
            shown = "; ".join(f"request {row.request}: {e.tokens_before:,} -> {e.tokens_after:,}"
                              for row, e in comps[:limit])
            more = f"; and {len(comps) - limit} more" if len(comps) > limit else ""
            out.append(f"  {run.name} compactions (our tokens before -> after): {shown}{more}")
    return out


def show_context(r: Replay, strategy: str, request: int) -> list[str]:
    """The exact messages sent at ``request`` under ``strategy``, control characters escaped."""
    messages = r.context(strategy, request)
    row = r.runs[strategy].rows[request]
    out = [f"== request {request} (turn {row.turn}) under {strategy}: {len(messages)} messages, "
           f"{row.tokens:,} tokens (ours), {row.input:,} provider tokens, {row.cached:,} cached =="]
    for k, m in enumerate(messages):
        kind = m.metadata.get("kind") if isinstance(m.metadata, dict) else None
        label = {"placeholder": " [placeholder: the result was left out]",
                 "compaction_summary": " [compaction summary]"}.get(kind, "")
        if m.role == "summary":
            label = " [summary recorded in the session]"
        calls = "".join(f"\n    -> call {c.id} {c.name}({escape(str(c.arguments))})" for c in m.tool_calls)
        answers = f" (result of {m.tool_call_id})" if m.tool_call_id else ""
        out.append(f"[{k}] {m.role} {m.id}{answers}{label}:\n{escape(m.content)}{calls}")
    return out
