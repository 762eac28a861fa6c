"""The README's resource table: what the worst inputs cost per 10 MB (``pruner bench-limits``)."""

from __future__ import annotations

from typing import Any

from ...bench.limits import per_10mb
from . import register_table


@register_table("limits", source="sample_sessions/bench/limits.json", command="pruner bench-limits")
def render(results: dict[str, Any]) -> str:
    cases = results["meta"]["cases"]
    sizes = results["meta"]["sizes_mb"]
    out = [f"| worst case | command | CPU per 10 MB | memory per 10 MB | at {max(sizes)} MB: wall, CPU, peak memory |",
           "|---|---|---|---|---|"]
    for r in per_10mb(results):
        exit_note = "" if r["exit_code"] == 0 else f" (exit {r['exit_code']})"
        out.append(f"| {r['case'].replace('_', ' ')}: {cases[r['case']]} | `{r['command']}` "
                   f"| {r['cpu_s_per_10mb']:.1f} s | {r['peak_mb_per_10mb']:,.0f} MB "
                   f"| {r['wall_s']:.1f} s, {r['cpu_s']:.1f} s, {r['peak_mb']:,.0f} MB{exit_note} |")
    limit = f"{results['meta']['default_max_bytes']:,}-byte limit"
    for r in results["rows"]:
        if r["case"] == "over_the_limit":
            out.append(f"| a file one byte over the {limit} | `{r['command']}` | refused before reading: exit "
                       f"{r['exit_code']} | | {r['wall_s']:.2f} s, {r['cpu_s']:.2f} s, {r['peak_mb']:,.0f} MB |")
        elif r["case"] == "deep_over_the_limit":
            out.append(f"| {r['size_mb']} MB of deep nesting, charged 8 bytes per array and object: over the {limit} "
                       f"| `{r['command']}` | refused before parsing: exit {r['exit_code']} | | {r['wall_s']:.2f} s, "
                       f"{r['cpu_s']:.2f} s, {r['peak_mb']:,.0f} MB |")
    out.append("")
    out.append(f"Per 10 MB: the difference between {min(sizes)} MB and {max(sizes)} MB, divided by "
               f"{(max(sizes) - min(sizes)) // 10}. Each command runs in a fresh process, so the {max(sizes)} MB "
               "figures include start-up and the differences do not. Wall-clock time depends on how busy the "
               "machine was (the load below); CPU time and memory much less.")
    return "\n".join(out)
