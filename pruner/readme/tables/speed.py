"""The README's speed tables: ``pruner bench-speed --json`` and ``pruner bench --scaling --json``."""

from __future__ import annotations

from typing import Any

from . import register_table


def _ms(t: dict[str, Any]) -> str:
    return f"{t['wall_ms']:,.1f} ms ({t['cpu_ms']:,.1f} ms CPU)"


def _verdict(value: float, target: float) -> str:
    return f"≤ {target:g} ms: {'met' if value <= target else '**missed**'}"


@register_table("speed", source="sample_sessions/bench/speed.json",
                command="pruner bench-speed --json sample_sessions/bench/speed.json")
def render_speed(rep: dict[str, Any]) -> str:
    t = rep["targets"]
    rows = rep["warm"]
    base = rows[0]
    decided = base["prune_decisions"]
    out = ["| what is timed (tool_agent unless named) | figure | target |", "|---|---|---|",
           f"| `prune()` and every decision read, {base['messages']:,} messages, caches warm | "
           f"{_ms(decided)} | {_verdict(decided['wall_ms'], t['prune_decisions_ms'])} |",
           f"| the passes alone (`stats.elapsed_ms`), {base['messages']:,} messages | {base['passes_ms']:,.1f} ms "
           f"| {_verdict(base['passes_ms'], t['passes_ms'])} |",
           f"| the `prune()` call alone (decisions built when read) | {_ms(base['prune'])} | |",
           f"| `prune()` of a new `Session` object with the same messages (its index built again) "
           f"| {_ms(base['new_session'])} | |"]
    base_cpu = base["prune"]["cpu_ms"] / base["messages"]
    for r in rows[1:]:
        ratio = r["us_per_message"] / base["us_per_message"]
        cpu_ratio = r["prune"]["cpu_ms"] / r["messages"] / base_cpu if base_cpu else float("nan")
        factor = r["messages"] // base["messages"]
        target = (f"≤ {t['flatness']}×: {'met' if ratio <= t['flatness'] else '**missed**'}" if factor == 50 else "")
        out.append(f"| the passes per message at {r['messages']:,} messages ({factor}×) "
                   f"| {r['us_per_message']:.2f} µs, {ratio:.2f}× the {base['messages']:,}-message figure "
                   f"(CPU time of the `prune()` call per message: {cpu_ratio:.2f}×) | {target} |")
    share = 100 * (1 - base["exact_only_ms"] / base["passes_ms"]) if base["passes_ms"] else 0
    out.append(f"| near-duplicate search, share of the passes at {base['messages']:,} messages | {share:.0f}% | |")
    cold = rep.get("cold")
    if cold:
        out.append(f"| cold `prune()` in a fresh process, {cold['turns']:,} turns ({cold['messages']:,} messages), "
                   f"tokenising included (median of {cold['runs']}) | {cold['wall_ms']:,.1f} ms "
                   f"({cold['cpu_ms']:,.1f} ms CPU); loading the vocabulary first: {cold['vocabulary_ms']:,.0f} ms "
                   f"| {_verdict(cold['wall_ms'], t['cold_ms'])} |")
    for c in rep.get("reference_corpora", []):
        ref = c["reference"]
        target = t.get(c["corpus"])
        out.append(f"| the reference's {ref['label']} corpus ({c['messages']:,} messages), `prune()` "
                   f"| {_ms(c['prune'])}; "
                   f"kept {c['required_kept']:,}/{c['required']:,} required; removed {c['reduction_pct']:.1f}% of "
                   f"tokens (the reference: {ref['reduction_pct'][0]}–{ref['reduction_pct'][1]}%) "
                   f"| {_verdict(c['prune']['wall_ms'], target) if target else ''}; the reference pruner: "
                   f"{ref['quiet_ms']:g} ms quiet, {ref['busy_ms']:g} ms busy, measured once on this machine class |")
    near = rep.get("near_search")
    if near:
        out.append(f"| near-duplicate search against exact containment: templated documents "
                   f"({'/'.join(str(d) for d in near['documents'])} per session, {near['seeds']} seeds) "
                   f"| {near['missed']} of {near['copies']:,} copies missed, {near['missed_above_0.9']} above 0.9 "
                   f"containment | none missed above 0.9 |")
    return "\n".join(out)


@register_table("scaling", source="sample_sessions/bench/scaling.json",
                command="pruner bench --scaling --json sample_sessions/bench/scaling.json")
def render_scaling(rep: dict[str, Any]) -> str:
    out = ["| turns | messages | the passes | per 1,000 messages |", "|---|---|---|---|"]
    for r in rep["sizes"]:
        caches = "" if r.get("warm", True) else " (first run: past the caches)"
        out.append(f"| {r['turns']:,} | {r['messages']:,} | {r['prune_ms']:,.1f} ms{caches} "
                   f"| {r['ms_per_1000_messages']:.2f} ms |")
    out += ["", "| every turn, as an agent loop runs it | total | per turn | target |", "|---|---|---|---|"]
    for key, what in (("per_turn", "the 2,000-turn tool_agent session"),
                      ("per_turn_reference_corpus", "the reference's 2,000-turn tool-agent corpus")):
        pt = rep.get(key)
        if not pt:
            continue
        inc, full = pt["incremental"], pt["full_reprune"]
        how = f"estimated from {full['sampled_turns']} sampled turns" if full["estimated"] else "every turn timed"
        same = "yes" if inc["equals_full_prune"] and inc["context_equals_full_prune"] else "**no**"
        if key == "per_turn":
            target = f"≤ 1 s: {'met' if inc['total_s'] <= 1 else '**missed**'}"
        else:
            speedup = rep["reference_per_turn_s"] / inc["total_s"]
            target = f"10× faster than the reference: {'met' if speedup >= 10 else '**missed**'} ({speedup:.0f}×)"
        out.append(f"| {what}: `IncrementalPruner.append()` + `context()` (equal to `prune()`: {same}) "
                   f"| {inc['total_s']:.2f} s ({inc['cpu_s']:.2f} s CPU) | {inc['ms_per_turn']:.2f} ms | {target} |")
        out.append(f"| {what}: a full `prune()` of a new session every turn | {full['total_s']:,.0f} s "
                   f"({full['cpu_s']:,.0f} s CPU; {how}) | | |")
        if key == "per_turn_reference_corpus":
            out.append(f"| {what}: the reference pruner, a full re-prune every turn (measured once on this machine "
                       f"class, not in this run) | about {rep['reference_per_turn_s']:.0f} s | | |")
    return "\n".join(out)
