"""docs/own-logs.md's speed table: ``pruner bench-logs`` on a generated Claude Code folder."""

from __future__ import annotations

from typing import Any

from . import register_table

#: The targets of issue 22, printed beside what was reached (never used to decide anything).
TARGETS = {"bill_ledger": "≥ 100 MB/s", "strategies": "≥ 10 MB/s", "rerun": "< 2 s"}


def _load(r: dict[str, Any]) -> str:
    after = r.get("load_after")
    return f"{r['load_before']:.1f}" + (f" → {after:.1f}" if after is not None else "")


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


@register_table("logs", source="sample_sessions/bench/logs.json", command="pruner bench-logs",
                document="docs/own-logs.md")
def render(results: dict[str, Any]) -> str:
    bill, every, rerun = results["bill_ledger"], results["strategies"], results["rerun"]
    w = results["workers"]
    out = ["| reading | files | MB | time | reached | target | met | 1-minute load |",
           "|---|---|---|---|---|---|---|---|",
           f"| bill + cache ledger (`--bill-only`), {w} workers | {bill['files']:,} | {bill['mb']:,.0f} "
           f"| {bill['seconds']:,.1f} s | {bill['mb_per_s']:,.1f} MB/s | {TARGETS['bill_ledger']} "
           f"| {_met(bill['mb_per_s'] >= 100)} | {_load(bill)} |",
           f"| every strategy replayed ({len(every['strategies'])}), {w} workers | {every['files']:,} "
           f"| {every['mb']:,.1f} | {every['seconds']:,.1f} s | {every['mb_per_s']:,.2f} MB/s "
           f"| {TARGETS['strategies']} | {_met(every['mb_per_s'] >= 10)} | {_load(every)} |",
           f"| rerun, nothing changed (in process) | {rerun['files']:,} | | {rerun['in_process_s']:,.2f} s "
           f"| {rerun['read']} sessions read | {TARGETS['rerun']} | {_met(rerun['in_process_s'] < 2)} "
           f"| {rerun['load_before']:.1f} |",
           f"| rerun, nothing changed (the whole `pruner logs` command) | {rerun['files']:,} | "
           f"| {rerun['command_s']:,.2f} s | {rerun['read_by_command']} sessions read | {TARGETS['rerun']} "
           f"| {_met(rerun['command_s'] < 2)} | |"]
    parse = ", ".join(f"{name} {mb:,.0f} MB/s" for name, mb in results["json_mb_per_s"].items())
    if bill.get("cpu_seconds") and every.get("cpu_seconds"):
        out += ["", f"CPU time: the bill-and-ledger reading took {bill['cpu_seconds']:,.1f} CPU seconds "
                    f"({bill['mb_per_cpu_second']:,.1f} MB per CPU second: {bill['mb_per_s_if_idle']:,.0f} MB/s were "
                    f"that time spread over {w} idle cores); every strategy took {every['cpu_seconds']:,.1f} "
                    f"({every['mb_per_cpu_second']:,.2f} MB per CPU second: {every['mb_per_s_if_idle']:,.1f} MB/s on "
                    f"{w} idle cores). The wall-clock figures above are what the shared machine gave."]
    if "bill_only_sessions" in bill:
        rest = bill["files"] - bill["bill_only_sessions"]
        out += ["", f"The bill-and-ledger reading read {bill['bill_only_sessions']:,} of its {bill['files']:,} "
                    "sessions with the bill-only reader (usage, ids, chains and times; no text, no tokens)"
                    + (f" and {rest:,} in full" if rest else "") + "; it gives the row the full reading gives."]
    out += ["", f"Peak memory (max RSS): {bill['self_mb']:,.0f} MB in the run's own process, "
                f"{bill['workers_mb']:,.0f} MB in its largest worker, for a {bill['mb']:,.0f} MB folder whose largest "
                f"file is {results['largest_file_mb']:.1f} MB: each worker holds one session at a time, so memory "
                "follows the largest file, not the folder.",
            "", f"JSON parsing alone, on the real files' lines: {parse}. `pruner logs` reads lines with msgspec "
                "(the strict standard-library reader decides every line msgspec refuses, so NaN, Infinity, "
                "overflowing numbers and over-long integers are refused as before).",
            "", f"The machine has {results['cpus']} cores, at times shared with other work; the load column says "
                "how busy it was (at a load near the number of cores, every figure roughly halves)."]
    return "\n".join(out)


@register_table("logs-summary", source="sample_sessions/bench/logs.json", command="pruner bench-logs",
                document="README.md")
def summary(results: dict[str, Any]) -> str:
    """The README's three figures of the same run (the whole table, with CPU time and memory, is in
    docs/own-logs.md)."""
    bill, every, rerun = results["bill_ledger"], results["strategies"], results["rerun"]
    return "\n".join([
        "| `pruner logs`, 2,000-session Claude Code folder | reached | target | 1-minute load |",
        "|---|---|---|---|",
        f"| the bill and the cache ledger ({bill['mb']:,.0f} MB) | {bill['mb_per_s']:,.0f} MB/s "
        f"| {TARGETS['bill_ledger']} | {_load(bill)} |",
        f"| every strategy replayed, with context recall ({every['files']:,} sessions) "
        f"| {every['mb_per_s']:,.1f} MB/s | {TARGETS['strategies']} | {_load(every)} |",
        f"| a rerun with nothing changed ({rerun['files']:,} files, the whole command) "
        f"| {rerun['command_s']:,.2f} s | {TARGETS['rerun']} | {rerun['load_before']:.1f} |"])
