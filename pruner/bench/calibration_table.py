"""The calibration on every real transcript that records usage: billed, modelled, cache-only, error.

``python -m pruner.bench.calibration_table`` replays ``as_recorded`` and ``full`` on
each file of ``../shared/data/real/`` that records usage (the Pi session, the nine
Claude Code files, the Codex rollout) and writes ``sample_sessions/bench/calibration.json``:
per file its requests (every chain), ``billed`` (each request at its own model's list
prices), ``modelled`` (the cache model on what was really sent, unexplained recorded
misses inherited), ``modelled_cache_only`` (none inherited) and the error of each
against the bill, and whether ``full`` could have run. ``docs/calibration.md`` shows
the table (``python -m pruner.readme docs/calibration.md``); the transcripts stay
outside the repository, only the figures are committed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .environment import finish, start

COMMAND = "python -m pruner.bench.calibration_table"
#: The real files that record usage, relative to ``../shared/data/real``.
FILES = ("pi/large-session.jsonl",
         "claude-code/cctrace-phase0-main.jsonl", "claude-code/ccviewer-5c0375b4.jsonl",
         "claude-code/ccviewer-fe5e1c67.jsonl", "claude-code/codemie-session-196820da.jsonl",
         "claude-code/codemie-session-3fe1b6bc.jsonl", "claude-code/codemie-session-624a4a58.jsonl",
         "claude-code/codemie-subagent-a485154.jsonl", "claude-code/dmux-a9185eb7.jsonl",
         "claude-code/task-patterns-998db3cd.jsonl",
         "codex/codemie-rollout-2026-05-11.jsonl")
#: A modelled bill within this share of the bill counts as calibrated (issue 19: 10 %).
TOLERANCE = 0.10
ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "data" / "real"
OUT = ROOT / "sample_sessions" / "bench" / "calibration.json"


def _error(value: float, billed: float) -> float | None:
    return round((value - billed) / billed, 4) if billed else None


def measure(path: Path) -> dict[str, Any]:
    """One file's calibration figures (the replay's own detection of provider and model)."""
    from .. import load_session
    from ..replay import default_prices, replay
    from ..replay.calibration import from_replay

    session = load_session(str(path))
    r = replay(session, ["as_recorded", "full"], prices=default_prices(), snapshots=False, recall=False)
    c = from_replay(r)
    if c is None:
        return {"requests": len(r.requests), "billed": None}
    full = r.runs["full"].totals
    return {
        "requests": c.requests, "aborted": c.aborted, "chains": len(r.chains), "models": list(r.models),
        "billed": round(c.billed, 6), "billed_recorded_cost": c.billed_recorded_cost,
        "modelled": round(c.modelled, 6), "modelled_cache_only": round(c.modelled_cache_only, 6),
        "modelled_error": _error(c.modelled, c.billed), "cache_only_error": _error(c.modelled_cache_only, c.billed),
        "unpriced_requests": c.unpriced_requests, "full_feasible": full["feasible"],
        "full_infeasible_from": full["infeasible_from"], "full_dollars": full["dollars"], "prices": c.prices,
    }


def run(real: Path = REAL) -> dict[str, Any]:
    env = start(COMMAND)
    rows = []
    for name in FILES:
        path = real / name
        if path.is_file():
            rows.append({"file": name, **measure(path)})
    within = [r for r in rows if r.get("modelled_error") is not None and abs(r["modelled_error"]) <= TOLERANCE]
    return {"meta": {"environment": finish(env), "tolerance": TOLERANCE, "files": len(rows)},
            "summary": {"within_tolerance": len(within), "of": sum(1 for r in rows if r.get("billed"))},
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    if not REAL.is_dir():
        print(f"{REAL}: the real transcripts are not here (they live in ../shared/data/real)", file=sys.stderr)
        return 2
    results = run()
    write_atomic(OUT, json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    s = results["summary"]
    print(f"{OUT.relative_to(ROOT)}: {results['meta']['files']} files; modelled within "
          f"{100 * TOLERANCE:.0f} % of the bill on {s['within_tolerance']} of {s['of']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
