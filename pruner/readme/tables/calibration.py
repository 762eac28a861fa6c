"""docs/calibration.md's table: on every real file with usage, the bill against the modelled bill."""

from __future__ import annotations

from typing import Any

from . import register_table


def _money(x: float | None) -> str:
    return "-" if x is None else f"${x:,.2f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f} %"


@register_table("calibration", source="sample_sessions/bench/calibration.json",
                command="python -m pruner.bench.calibration_table", document="docs/calibration.md")
def render(results: dict[str, Any]) -> str:
    out = ["| file | requests | billed | modelled | cache-only | error | full |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in results["rows"]:
        if r.get("billed") is None:
            out.append(f"| `{r['file']}` | {r['requests']:,} | no usage recorded | | | | |")
            continue
        full = "feasible" if r["full_feasible"] else f"infeasible from request {r['full_infeasible_from']:,}"
        out.append(f"| `{r['file']}` | {r['requests']:,} | {_money(r['billed'])} | {_money(r['modelled'])} | "
                   f"{_money(r['modelled_cache_only'])} | {_pct(r['modelled_error'])} | {full} |")
    s = results["summary"]
    tol = results["meta"]["tolerance"]
    out += ["", f"`modelled` is within {100 * tol:.0f} % of the bill on {s['within_tolerance']} of {s['of']} files. "
                "`error` is modelled against billed; `cache-only` is the cache model with no recorded miss "
                "inherited; `full` says whether sending the whole conversation (the recorded compactions left out) "
                "fits the model's window at every request. Requests count every chain (subagents included)."]
    return "\n".join(out)
