"""A replay as text, JSON and CSV (the CLI writes these; the dashboard reads the same rows).

>>> from pruner.bench.workloads import generate
>>> from pruner.replay.engine import replay
>>> r = replay(generate("plain_chat", turns=10, seed=0), ["full", "truncate"])
>>> summary_rows(r)[0]["strategy"], sorted(to_json(r))
('full', ['answer', 'calibration', 'ledger', 'meta', 'schema', 'strategies', 'verdict'])
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .answer import Figures, answer, not_applicable_text
from .calibration import from_replay
from .engine import Replay, RequestRow, money_label
from .rows import ROW_FIELDS
from .verdict import DEFAULT_MIN_RECALL, feasible, recall_json, verdict
from pruner.money import money

SCHEMA = "pruner.replay/2"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # transcript text must not drive the terminal


def escape(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` (newlines and tabs kept)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def summary_rows(r: Replay) -> list[dict[str, Any]]:
    """One row per strategy: the totals the CLI table and the dashboard show."""
    return [run.totals for run in r.runs.values()]


def _row_dict(name: str, row: RequestRow) -> dict[str, Any]:
    return {"strategy": name, **row.as_dict()}


def meta(r: Replay) -> dict[str, Any]:
    return {
        "session": r.session.name, "source_format": r.session.source_format, "messages": len(r.session.messages),
        "requests": len(r.requests), "turns": r.session.last_turn, "chains": r.chains,
        "provider": r.price.provider, "model": r.price.model, "prices": r.money_label, "price": r.price.as_dict(),
        "models": {name: {**p.as_dict(), "money_label": money_label(p, r.settings.ttl),
                          "priced": not p.source.startswith("unpriced")} for name, p in r.models.items()},
        "context_window": r.window, "scale": {"slope": r.scale.slope, "offset": r.scale.offset},
        "scale_source": r.scale_source, "cache_model": r.cache_description,
        "recorded_usage": r.recorded_usage, "notes": list(r.notes),
        "settings": {"ttl": r.settings.ttl, "reserve_tokens": r.settings.reserve_tokens,
                     "keep_recent_tokens": r.settings.keep_recent_tokens, "clear_trigger": r.settings.clear_trigger,
                     "clear_keep": r.settings.clear_keep, "clear_at_least": r.settings.clear_at_least,
                     "clear_exclude_tools": list(r.settings.clear_exclude_tools),
                     "clear_placeholder": r.settings.clear_placeholder, "inherit_cold": r.settings.inherit_cold,
                     "truncate_budget": r.settings.truncate_budget,
                     "openai_retention": r.settings.openai_retention,
                     "clear_trigger_type": r.settings.clear_trigger_type,
                     "clear_tool_inputs": r.settings.clear_tool_inputs if isinstance(r.settings.clear_tool_inputs, bool)
                     else list(r.settings.clear_tool_inputs)},
    }


def to_json(r: Replay, *, ledger: Any = None, min_recall: float | None = None, limits: Any = None,
            said: Any = None, bound_note: str | None = None) -> dict[str, Any]:
    """Everything: meta, the calibration (when usage is recorded), per strategy its totals and every request.

    ``ledger``: the cache ledger's JSON (why each recorded miss happened; computed from these rows and
    the bill by ``pruner.replay.ledger`` where it exists), else None. ``limits``: the hindsight bound
    (``pruner.replay.limit.compute_limits``): written as ``limit``, and each strategy's ``totals.regret``;
    ``bound_note``: why it was not computed (``limit`` is then ``{"computed": false, "note": ...}``).
    ``said``: the replay's ``verdict.Answer`` when the caller built it (the verdict is its ``to_json``: the
    one the terminal printed), else built here from the same arguments."""
    calibration = from_replay(r)
    figures = said.figures if said is not None else answer(r, calibration)
    if ledger is None:
        ledger = _ledger_json(r)
    if said is None and r.recall is not None:
        from .verdict import Bound

        bound = None if bound_note is None else Bound(False, min_recall if min_recall is not None else
                                                      DEFAULT_MIN_RECALL, note=bound_note)
        said = verdict(r, figures=figures, limits=limits, bound=bound,
                       **({} if min_recall is None else {"min_recall": min_recall}))
    out = _to_json(r, calibration, figures, ledger, said)
    if limits is None and bound_note is not None:
        out["limit"] = {"computed": False, "note": bound_note}
    if limits is not None:
        out["limit"] = limits.as_dict()
        for entry in out["strategies"].values():
            t = entry["totals"]
            regret = limits.regret(t["dollars"], feasible(t) and t.get("unpriced_requests", 0) == 0)
            bound = limits.families.get("combined")
            t["regret"] = regret
            t["regret_share"] = round(regret / bound.dollars, 6) if regret is not None and bound.dollars else None
    return out


def _to_json(r: Replay, calibration: Any, figures: Figures, ledger: Any, said: Any) -> dict[str, Any]:
    return {
        "schema": SCHEMA, "meta": meta(r),
        "calibration": calibration.as_dict() if calibration else None,
        "answer": figures.as_dict(),
        "ledger": ledger,
        "strategies": {name: {"summary": run.summary, "totals": run.totals,
                              "requests": [_row_dict(name, row) for row in run.rows],
                              **({"recall": recall_json(r, name)} if r.recall is not None else {})}
                       for name, run in r.runs.items()},
        **({"verdict": said.to_json()} if said is not None else {}),
    }


def _ledger_json(r: Replay) -> Any:
    """The cache ledger's JSON (``pruner.replay.ledger_report``): why each recorded miss happened."""
    from .ledger_report import ledger_json

    return ledger_json(r)


#: One CSV column per row field (derived from ``RequestRow``), after the strategy's name.
CSV_FIELDS = ("strategy",) + ROW_FIELDS


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


def table(r: Replay, figures: Figures | None = None, limits: Any = None) -> str:
    """The per-strategy table the CLI prints; below it, every strategy that could not have run and why
    (an infeasible or not applicable strategy is listed, never ranked). Every row's dollars are modelled
    (the recording's too: the bill is printed once, above), and ``vs modelled`` is each strategy's cost
    against the modelled recording (``pruner.replay.answer``). ``limits``: the hindsight bound, a
    ``regret`` column (each strategy's dollars over the combined bound)."""
    a = figures if figures is not None else answer(r)
    facts = any(run.totals["facts_missing_max"] is not None for run in r.runs.values())
    head = ["strategy", "requests", "fresh", "cached", "written", "cached %", "dollars", "unscaled", "vs modelled",
            "peak ctx", "rejected", "prunes", "compactions"] + (["facts missing"] if facts else []) + (
        ["recall"] if r.recall is not None else []) + (["regret"] if limits is not None else [])
    body, why, unpriced_note = [], [], ""
    changes = {s.strategy: s.change() + ("" if s.measurable or s.share is None else " ~") for s in a.savings}
    for run in r.runs.values():
        t = run.totals
        dollars, unscaled = money(t["dollars_modelled"] if run.name == a.reference else t["dollars"]), \
            money(t["dollars_unscaled"])
        unpriced = t.get("unpriced_requests", 0)
        if unpriced and unpriced >= t["billed_requests"]:
            # Every request is of a model without a price: $0 would read as free.
            dollars = unscaled = "unpriced"
        elif unpriced:
            dollars, unscaled = dollars + "*", unscaled + "*"
            unpriced_note = (f"* these dollars leave out the {unpriced:,} requests of models without a price "
                             "(their tokens: totals.unpriced_tokens in --json)")
        if not t["applicable"]:
            dollars = "n/a"
            why.append(f"{run.name}: {not_applicable_text(run.name)}: {t['not_applicable_reason']}")
        elif not t["feasible"]:  # never an amount: its partial dollars are said as what they are
            dollars = "n/a"
            why.append(f"{run.name}: {a.na_of(run.name)}")
        row = [run.name, f"{t['billed_requests']:,}", f"{t['fresh']:,}", f"{t['cached']:,}", f"{t['written']:,}",
               f"{100 * t['cached_share']:.1f}", dollars, unscaled, "reference" if run.name == a.reference else
               changes.get(run.name, "-"),
               f"{t['peak_context']:,}", f"{t['rejected']:,}", f"{t['prunes']:,}", f"{len(t['compactions'])}"]
        if facts:
            row.append("-" if t["facts_missing_max"] is None else
                       f"{t['facts_missing_max']} (at {t['requests_missing_facts']} requests)")
        if r.recall is not None:  # a strategy refused from its first request sent nothing: no recall to show
            stop = t.get("infeasible_from")
            sent = stop is None or any(x.request < stop for x in run.rows)
            row.append(f"{100 * t['context_recall']:.1f} %" if sent else "-")
        if limits is not None:
            regret = limits.regret(t["dollars"], feasible(t) and not unpriced)
            row.append("-" if regret is None else f"{'+' if regret >= 0 else '−'}{money(abs(regret))}")
        body.append(row)
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(x, widths)))
             for x in [head, *body]]
    lines += [f"not ranked: {w}" for w in why] + ([unpriced_note] if unpriced_note else [])
    if any(s.share is not None and not s.measurable for s in a.savings):
        lines.append(f"~ within the ±{100 * a.band:.1f} % band of the cache model's error: no measurable difference")
    return "\n".join(lines)


def chain_lines(r: Replay) -> list[str]:
    """Per chain and per model, what each strategy's requests cost (sessions with subagents or
    several models)."""
    out = []
    for run in r.runs.values():
        t = run.totals
        if len(t["by_chain"]) < 2 and len(t["by_model"]) < 2:
            continue
        unpriced: dict[str, int] = {}
        stop = t.get("infeasible_from")  # by_chain counts the requests before it
        for row in run.rows:
            if not row.priced and not row.aborted and (stop is None or row.request < stop):
                unpriced[row.chain] = unpriced.get(row.chain, 0) + 1

        def chain_money(c: str, v: dict[str, Any], unpriced: dict[str, int] = unpriced) -> str:  # not free: unpriced
            left_out = min(unpriced.get(c, 0), v["requests"])
            if left_out and left_out >= v["requests"]:
                return "unpriced"
            return money(v["dollars"]) + (f" (+{left_out:,} unpriced)" if left_out else "")

        by_chain, by_model, label = t["by_chain"], t["by_model"], "by chain"
        if run.name == "as_recorded" and r.recorded_usage:
            # the recording's breakdown is the bill's (each request id once), never a second "what I paid"
            from .calibration import _billed

            b = _billed(r)
            by_chain, by_model, label, unpriced = dict(b.by_chain), dict(b.by_model), "billed by chain", {}
        chains = "; ".join(f"{c} {v['requests']:,} requests {chain_money(c, v)}" for c, v in by_chain.items())
        models = "; ".join(f"{m} {v['requests']:,} {money(v['dollars']) if v.get('priced', True) else 'unpriced'}"
                           for m, v in by_model.items())
        out.append(f"  {run.name}: {label}: {chains}; by model: {models}")
    return out


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
    chain = "" if row.chain == "main" and len(r.chains) == 1 else f", chain {row.chain}"
    out = [f"== request {request} (turn {row.turn}{chain}) under {strategy}: {len(messages)} messages, "
           f"{row.tokens:,} tokens (ours), {row.input:,} provider tokens, {row.cached:,} cached =="]
    for k, m in enumerate(messages):
        kind = m.metadata.get("kind") if isinstance(m.metadata, dict) else None
        label = {"placeholder": " [placeholder: the result was left out]",
                 "compaction_summary": " [compaction summary]"}.get(kind, "") if isinstance(kind, str) else ""
        if m.role == "summary":
            label = " [summary recorded in the session]"
        calls = "".join(f"\n    -> call {c.id} {c.name}({escape(str(c.arguments))})" for c in m.tool_calls)
        answers = f" (result of {m.tool_call_id})" if m.tool_call_id else ""
        out.append(f"[{k}] {m.role} {m.id}{answers}{label}:\n{escape(m.content)}{calls}")
    return out
