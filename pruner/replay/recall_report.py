"""The committed recall report: every shared real session's recall and dollars per strategy, the
verdict, ten lost terms per strategy with the message each came from, the compaction-quality figures,
and whether ``cache_aware_prune`` is the policy a user would pick (issue 20).

Run it from the repository root, beside ``../shared``::

    python -m pruner.replay.recall_report            # writes sample_sessions/bench/recall_report.{md,json}
    python -m pruner.replay.recall_report --check    # exit 1 when the committed files differ

A module rather than a ``pruner`` subcommand, like ``python -m pruner.readme``: it reads the
project's shared test data and writes a committed file, which is maintenance, not something a user
runs on their own transcripts (``pruner replay FILE`` is that). Every session is replayed with the same
settings (each session's own provider and model, ``ReplaySettings`` defaults otherwise): nothing is
tuned on one session.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..engine.prune import prune
from ..files import write_atomic
from ..formats import load_session
from ..model import Session
from .engine import replay
from .prices import default_prices
from .verdict import DEFAULT_MIN_RECALL, feasible, lost_examples, verdict

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "real"
OUT_MD = ROOT / "sample_sessions" / "bench" / "recall_report.md"
OUT_JSON = ROOT / "sample_sessions" / "bench" / "recall_report.json"
BENCH_RESULTS = ROOT / "sample_sessions" / "bench" / "results.json"
POLICY = "cache_aware_prune"

#: The shared sessions the report covers: (label, path under ../shared/data/real, dialogue).
SESSIONS: tuple[tuple[str, str, int | None], ...] = (
    ("Pi large session", "pi/large-session.jsonl", None),
    *((f"Claude Code {n}", f"claude-code/{n}.jsonl", None) for n in (
        "codemie-session-624a4a58", "codemie-session-3fe1b6bc", "codemie-session-196820da",
        "codemie-subagent-a485154", "cctrace-phase0-main", "ccviewer-fe5e1c67", "ccviewer-5c0375b4",
        "task-patterns-998db3cd", "dmux-a9185eb7")),
    ("Codex rollout", "codex/codemie-rollout-2026-05-11.jsonl", None),
    ("tau-bench airline, first dialogue", "tau-bench/gpt-4o-airline.json", 0),
    ("SWE-agent marshmallow-1867", "swe-agent/marshmallow-1867.function_calling_replace.traj", None),
)


def _rule(session: Session, position: int, at: int, cache: dict[tuple[str, int], Any],
          chain: str = "main") -> str | None:
    """The shared pruner's rule for the message at ``position``, as it stood when the request at
    ``at`` was made (prune of the conversation up to there)."""
    key = (chain, at)
    if key not in cache:
        cache[key] = prune(session.with_messages(session.messages[:at]), validate=False).decisions
    decisions = cache[key]
    if position >= len(decisions):
        return None
    d = decisions[position]
    return None if d.status == "kept" else f"{d.status}: {d.rule}"


def session_figures(label: str, path: Path, dialogue: int | None) -> dict[str, Any]:
    session = load_session(path, dialogue=dialogue)
    prices = default_prices()
    r = replay(session, prices=prices, snapshots=False)  # the session's own provider and model
    v = verdict(r, min_recall=DEFAULT_MIN_RECALL)
    rules: dict[tuple[str, int], Any] = {}
    chains = dict(session.chains)
    strategies = {}
    for name, run in r.runs.items():
        t = run.totals
        lost = []
        for loss in lost_examples(r, name, 10):
            src = loss["source_position"]
            chain = chains.get(loss["chain"], session)
            m = chain.messages[src] if src is not None else None
            if m is not None and loss["why"].startswith(("pruned", "never sent")):
                at = loss["left_at"] if loss["left_at"] is not None else loss["request"]
                rule = _rule(chain, src, r.requests[at].position, rules, loss["chain"])
                if rule:
                    loss["why"] += f"; pruner: {rule}"
            lost.append({**loss, "source_role": m.role if m else None, "source_tool": m.tool_name if m else None})
        strategies[name] = {
            # modelled, the recording's too (its bill is the verdict's ``billed``): like with like
            "dollars": t["dollars_modelled"] if name == v.reference else t["dollars"], "feasible": feasible(t),
            "context_recall": t["context_recall"],
            "used_terms": t["used_terms"], "terms_missing": t["terms_missing"],
            "summary_recall": [c for c in t["summary_recall"] if c["candidates"]], "lost": lost,
        }
    recorded = [c.as_dict() for c in r.recall.recorded_compactions]
    return {"label": label, "file": str(path.relative_to(SHARED)), "dialogue": dialogue,
            "messages": len(session.messages), "requests": len(r.requests), "prices": r.money_label,
            "verdict": v.as_dict(), "strategies": strategies, "recorded_compactions": recorded,
            "policy": policy(strategies, v.best)}


#: Dollars within this share of the cheapest count as a tie (the cheapest by a rounding is no better).
TIE = 0.005


def _loss_kinds(lost: list[dict[str, Any]]) -> str:
    kinds: dict[str, int] = {}
    for loss in lost:
        why = loss["why"]
        kind = why.split("; pruner: ")[1] if "; pruner: " in why else why.split(" at ")[0].split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{k} ({n} of the {len(lost)} examples)" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))


def policy(strategies: dict[str, dict[str, Any]], best: str | None) -> dict[str, Any]:
    """Is ``cache_aware_prune`` the cheapest feasible strategy keeping the bar (ties within ``TIE``)?
    If not, which is, and why."""
    mine = strategies.get(POLICY)
    if mine is None:
        return {"ok": None, "why": f"{POLICY} was not replayed"}
    keeps = mine["feasible"] and mine["context_recall"] >= DEFAULT_MIN_RECALL
    if best == POLICY or (keeps and best is not None and mine["dollars"] <= strategies[best]["dollars"] * (1 + TIE)):
        tie = "" if best == POLICY else f" (ties with {best} within {100 * TIE:g} %)"
        return {"ok": True, "best": best, "why": f"{POLICY} is the cheapest feasible strategy keeping ≥ 99 %{tie}"}
    if not mine["feasible"]:
        return {"ok": False, "best": best, "why": f"{POLICY} would send a request over the window"}
    if not keeps:
        return {"ok": False, "best": best,
                "why": f"{POLICY} keeps {100 * mine['context_recall']:.1f} % (below 99 %); its losses: "
                       f"{_loss_kinds(mine['lost'])}; "
                       + (f"{best} is the cheapest that keeps 99 %" if best else "no strategy keeps 99 %")}
    other = strategies[best] if best else None
    if other is None:
        return {"ok": False, "best": None, "why": "no strategy keeps 99 %"}
    lost = f"; what {best} loses: {_loss_kinds(other['lost'])}" if other["lost"] else ""
    return {"ok": False, "best": best,
            "why": f"{best} keeps {100 * other['context_recall']:.1f} % at ${other['dollars']:,.2f}, "
                   f"{100 * (1 - other['dollars'] / mine['dollars']):.1f} % cheaper than {POLICY}'s "
                   f"${mine['dollars']:,.2f} ({100 * mine['context_recall']:.1f} %){lost}"}


def bench_policy() -> list[dict[str, Any]]:
    """The same question on every benchmark configuration (from the committed results)."""
    if not BENCH_RESULTS.is_file():
        return []
    data = json.loads(BENCH_RESULTS.read_text(encoding="utf-8"))
    out = []
    for row in data.get("rows", []):
        cost = row.get("cost") or {}
        if not cost or any("context_recall" not in c for c in cost.values()):
            continue
        ok = {n: c for n, c in cost.items() if not c["rejected"] and c["context_recall"] >= DEFAULT_MIN_RECALL}
        best = min(ok, key=lambda n: (ok[n]["dollars"], n)) if ok else None
        aware = cost.get(POLICY, {})
        why = ""
        tie = best is not None and not aware.get("rejected") and aware.get("context_recall", 0) >= DEFAULT_MIN_RECALL \
            and aware.get("dollars", 0) <= ok[best]["dollars"] * (1 + TIE)
        if best != POLICY and not tie:
            why = (f"{POLICY} is over the window at {aware.get('rejected')} requests" if aware.get("rejected") else
                   f"{POLICY} keeps {100 * aware.get('context_recall', 0):.1f} %"
                   if aware.get("context_recall", 1) < DEFAULT_MIN_RECALL else
                   f"{best} is cheaper (${ok[best]['dollars']:,.2f} against ${aware.get('dollars', 0):,.2f})"
                   if best else "")
        out.append({"workload": row["workload"], "turns": row["turns"], "seed": row["seed"], "best": best,
                    "best_dollars": ok[best]["dollars"] if best else None,
                    "cache_aware_prune": {"dollars": aware.get("dollars"),
                                          "context_recall": aware.get("context_recall"),
                                          "rejected": aware.get("rejected")}, "ok": best == POLICY or tie, "why": why})
    return out


def build() -> dict[str, Any]:
    sessions = []
    for label, rel, dialogue in SESSIONS:
        path = SHARED / rel
        if path.is_file():
            sessions.append(session_figures(label, path, dialogue))
    return {"schema": "pruner.recall_report/1", "min_recall": DEFAULT_MIN_RECALL,
            "definition": "docs/context-recall.md", "sessions": sessions, "benchmark_policy": bench_policy()}


def markdown(report: dict[str, Any]) -> str:
    from .recall_report_md import render
    return render(report)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pruner.replay.recall_report", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = p.parse_args(argv)
    if not SHARED.is_dir():
        print(f"{SHARED}: the shared real sessions are not there; nothing to report", file=sys.stderr)
        return 2
    report = build()
    text_json = json.dumps(report, ensure_ascii=False, indent=1, sort_keys=False) + "\n"
    text_md = markdown(report)
    if args.check:
        same = (OUT_JSON.is_file() and OUT_JSON.read_text(encoding="utf-8") == text_json
                and OUT_MD.is_file() and OUT_MD.read_text(encoding="utf-8") == text_md)
        print("recall report: up to date" if same else "recall report: differs; run python -m "
              "pruner.replay.recall_report")
        return 0 if same else 1
    write_atomic(OUT_JSON, text_json)
    write_atomic(OUT_MD, text_md)
    print(f"wrote {OUT_MD.relative_to(ROOT)} and {OUT_JSON.relative_to(ROOT)} ({len(report['sessions'])} sessions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
