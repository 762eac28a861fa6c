"""``pruner inspect FILE``: what a transcript holds, without changing anything.

Prints the detected format, messages, turns, tool calls (and how many are
answered), tokens per role and any recorded compactions; ``--json`` prints
the same as one JSON object. Transcript text is shown as plain, shortened
text only (never interpreted).
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from ..model import ROLES, Session
from ..engine.prune import message_tokens
from ..tokens import ENCODINGS, get_counter
from ..formats import load_dialogues, load_session, repairs
from ..jsonio import dumps_json
from .common import add_input_arguments, report_repairs, say


def add_loading_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)  # FILE, --format, --skip-bad-lines, --max-bytes, --dialogue, --retrieval-tool


def load_one(args: argparse.Namespace) -> Session:
    session = load_session(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                           max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None,
                           dialogue=args.dialogue)
    report_repairs([session], args.file)
    return session


def load_all(args: argparse.Namespace) -> list[Session]:
    """Every dialogue of the file, or just ``--dialogue N``."""
    if args.dialogue is not None:
        return [load_one(args)]
    sessions = load_dialogues(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                              max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None)
    report_repairs(sessions, args.file)
    return sessions


NAME = "inspect"
HELP = "show what a transcript holds: format, messages, turns, tool calls, tokens per role, compactions"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_loading_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--encoding", choices=ENCODINGS, default="o200k_base", help="tiktoken encoding")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())  # control characters left are escaped when printed (common.say)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(sessions: list[Session], *, encoding: str = "o200k_base") -> dict[str, Any]:
    """Counts for one or more sessions (several when the file holds several dialogues)."""
    counter = get_counter(encoding)
    roles: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    calls = answered = turns = 0
    tool_names: Counter[str] = Counter()
    compactions: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()  # entries that are not messages (Claude Code metadata lines)
    for s in sessions:
        turns += s.last_turn
        source = s.metadata.get("source")
        entries = source.get("skipped_entries") if isinstance(source, dict) else None
        if isinstance(entries, dict):
            skipped.update({str(k): v for k, v in entries.items() if isinstance(v, int)})
        result_ids = {m.tool_call_id for m in s.messages if m.tool_call_id}
        for m in s.messages:
            roles[m.role] += 1
            tokens[m.role] += message_tokens(m, counter)
            for c in m.tool_calls:
                calls += 1
                answered += c.id in result_ids
                tool_names[c.name] += 1
        for c in s.metadata.get("recorded_compactions") or []:
            compactions.append({**c, "summary": c.get("summary", "")})
    return {
        "format": sessions[0].source_format if sessions else None,
        "name": sessions[0].name if len(sessions) == 1 else "",
        "dialogues": len(sessions),
        "messages": sum(roles.values()),
        "turns": turns,
        "messages_by_role": {r: roles[r] for r in ROLES if roles[r]},
        "tool_calls": calls,
        "tool_calls_answered": answered,
        "tools": dict(sorted(tool_names.items(), key=lambda kv: (-kv[1], kv[0]))),
        "tokens_by_role": {r: tokens[r] for r in ROLES if roles[r]},
        "tokens": sum(tokens.values()),
        "counter": counter.name,
        "recorded_compactions": compactions,
        "skipped_bad_lines": sum(s.metadata.get("skipped_bad_lines", 0) for s in sessions),
        "skipped_entries": dict(sorted(skipped.items())),
        "repairs": [{**({"dialogue": i} if len(sessions) > 1 else {}),
                     **{k: r[k] for k in ("kind", "count", "message", "lines", "types") if k in r}}
                    for i, s in enumerate(sessions) for r in repairs(s)],
    }


def text_lines(info: dict[str, Any]) -> list[str]:
    lines = [f"format:      {info['format']}" + (f"  ({info['dialogues']} dialogues)" if info["dialogues"] > 1 else "")]
    if info["name"]:
        lines.append(f"name:        {_short(info['name'])}")
    by_role = ", ".join(f"{r} {n}" for r, n in info["messages_by_role"].items())
    lines += [f"messages:    {info['messages']} ({by_role})",
              f"turns:       {info['turns']}",
              f"tool calls:  {info['tool_calls']} ({info['tool_calls_answered']} answered)"]
    if info["tools"]:
        top = list(info["tools"].items())[:8]
        lines.append("tools:       " + ", ".join(f"{_short(n, 40)} {k}" for n, k in top)
                     + (", …" if len(info["tools"]) > 8 else ""))
    toks = ", ".join(f"{r} {n:,}" for r, n in info["tokens_by_role"].items())
    lines.append(f"tokens:      {info['tokens']:,} ({toks}) [{info['counter']}]")
    comps = info["recorded_compactions"]
    lines.append(f"compactions: {len(comps)} recorded")
    for c in comps:
        before = c.get("tokens_before")
        lines.append(f"  at message #{c.get('position_index')}"
                     + (f", first kept #{c['first_kept_index']}" if c.get("first_kept_index") is not None else "")
                     + (f", {before:,} tokens before" if isinstance(before, int) else "")
                     + f": {_short(c.get('summary', ''), 60)}")
    if info["skipped_entries"]:
        lines.append("not messages: " + ", ".join(f"{_short(k, 40)} {n:,}" for k, n in info["skipped_entries"].items()))
    for r in info["repairs"]:
        where = f"dialogue {r['dialogue']}: " if "dialogue" in r else ""
        lines.append(f"repaired:    {where}{r['message']}")
    return lines


def run(args: argparse.Namespace) -> int:
    info = describe(load_all(args), encoding=args.encoding)
    if args.json:
        print(dumps_json(info, indent=2))
    else:
        say(text_lines(info))
    return 0
