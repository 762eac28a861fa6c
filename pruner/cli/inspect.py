"""``pruner inspect FILE``: what a transcript holds, without changing anything.

Prints the detected format, messages, turns, tool calls (and how many are
answered), tokens per role and any recorded compactions; ``--json`` prints
the same as one JSON object. Transcript text is shown as plain, shortened
text only (never interpreted).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

from ..model import ROLES, Session
from ..engine.prune import message_tokens
from ..tokens import ENCODINGS, get_counter
from ..formats import load_dialogues, load_session
from .common import add_input_arguments


def add_loading_arguments(p) -> None:
    add_input_arguments(p)  # FILE, --format, --skip-bad-lines, --max-bytes, --dialogue, --retrieval-tool


def _warn_skipped(sessions, file: str) -> None:
    skipped = sum(s.metadata.get("skipped_bad_lines", 0) for s in sessions)
    if skipped:
        print(f"warning: skipped {skipped} unreadable line(s) in {file}", file=sys.stderr)


def load_one(args):
    session = load_session(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                           max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None,
                           dialogue=args.dialogue)
    _warn_skipped([session], args.file)
    return session


def load_all(args):
    """Every dialogue of the file, or just ``--dialogue N``."""
    if args.dialogue is not None:
        return [load_one(args)]
    sessions = load_dialogues(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                              max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None)
    _warn_skipped(sessions, args.file)
    return sessions


NAME = "inspect"
HELP = "show what a transcript holds: format, messages, turns, tool calls, tokens per role, compactions"


def add_arguments(p) -> None:
    add_loading_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--encoding", choices=ENCODINGS, default="o200k_base", help="tiktoken encoding")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(sessions: list[Session], *, encoding: str = "o200k_base") -> dict[str, Any]:
    """Counts for one or more sessions (several when the file holds several dialogues)."""
    counter = get_counter(encoding)
    roles: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    calls = answered = turns = 0
    tool_names: Counter[str] = Counter()
    compactions: list[dict[str, Any]] = []
    for s in sessions:
        turns += s.last_turn
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
    if info["skipped_bad_lines"]:
        lines.append(f"skipped:     {info['skipped_bad_lines']} unreadable line(s)")
    return lines


def run(args) -> int:
    info = describe(load_all(args), encoding=args.encoding)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        print("\n".join(text_lines(info)))
    return 0
