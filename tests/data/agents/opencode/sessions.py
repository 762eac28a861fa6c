"""The OpenCode fixture's sessions (``tests/support/opencode_store.py`` writes them as OpenCode does).

Run ``python tests/data/agents/opencode/sessions.py`` from the repository root to write the fixture
HOME again (``home/.local/share/opencode``: ``opencode.db`` and the older ``storage/`` files). The
shapes follow OpenCode's ``message-v2.ts`` (see README.md); every ``cost`` is what OpenCode records
(tokens at its provider's list prices, reasoning at the output rate).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

T0 = 1767312000000  # 2026-01-02T00:00:00Z, in OpenCode's epoch milliseconds

_LIST = {"claude-sonnet-4-5": (3.0, 0.3, 3.75, 15.0), "gpt-5": (1.25, 0.125, 1.25, 10.0),
         "claude-opus-4-1": (15.0, 1.5, 18.75, 75.0)}


def tokens(inp: int, out: int, read: int = 0, write: int = 0, reasoning: int = 0) -> dict:
    return {"total": inp + out + read + write + reasoning, "input": inp, "output": out, "reasoning": reasoning,
            "cache": {"read": read, "write": write}}


def cost(model: str, t: dict) -> float:
    i, r, w, o = _LIST[model]
    return round((t["input"] * i + t["cache"]["read"] * r + t["cache"]["write"] * w
                  + (t["output"] + t["reasoning"]) * o) / 1e6, 9)


def user(mid: str, time: int, text: str, model: str, provider: str) -> dict:
    return {"id": mid, "time": time,
            "data": {"role": "user", "time": {"created": time}, "agent": "build",
                     "model": {"providerID": provider, "modelID": model}},
            "parts": [{"id": f"prt_{mid[4:]}_t", "data": {"type": "text", "text": text}}]}


def assistant(mid: str, parent: str, time: int, model: str, provider: str, steps: list[tuple[list, dict]],
              with_steps: bool = True) -> dict:
    parts, total = [], 0.0
    for n, (content, t) in enumerate(steps):
        if with_steps:
            parts.append({"id": f"prt_{mid[4:]}_{n}a", "data": {"type": "step-start", "snapshot": "4b825dc6"}})
        for k, c in enumerate(content):
            parts.append({"id": f"prt_{mid[4:]}_{n}b{k}", "data": c})
        if with_steps:
            parts.append({"id": f"prt_{mid[4:]}_{n}z", "data": {"type": "step-finish", "reason": "tool-calls",
                                                                 "snapshot": "4b825dc6", "cost": cost(model, t),
                                                                 "tokens": t}})
        total += cost(model, t)
    last = steps[-1][1]
    return {"id": mid, "time": time,
            "data": {"role": "assistant", "time": {"created": time, "completed": time + 9000}, "parentID": parent,
                     "modelID": model, "providerID": provider, "mode": "build", "agent": "build",
                     "path": {"cwd": "/work/app", "root": "/work/app"}, "cost": round(total, 9), "tokens": last,
                     "finish": "stop"},
            "parts": parts}


def tool(call: str, name: str, inp: dict, status: str, out: str, start: int) -> dict:
    state = {"status": status, "input": inp, "time": {"start": start, "end": start + 1500}}
    if status == "completed":
        state.update(output=out, title=name, metadata={})
    else:
        state["error"] = out
    return {"type": "tool", "callID": call, "tool": name, "state": state}


def text(s: str) -> dict:
    return {"type": "text", "text": s, "time": {"start": 0, "end": 0}}


SONNET, ANTHROPIC = "claude-sonnet-4-5", "anthropic"
DB_SESSIONS = [
    {"id": "ses_01JAPP0001", "title": "Fix the failing parser test", "directory": "/work/app", "parent": None,
     "messages": [
         user("msg_01JAPP0001U1", T0, "The parser test fails; fix it.", SONNET, ANTHROPIC),
         assistant("msg_01JAPP0001A1", "msg_01JAPP0001U1", T0 + 1000, SONNET, ANTHROPIC, [
             ([{"type": "reasoning", "text": "Read the test first.", "time": {"start": T0, "end": T0}},
               text("Reading the test."),
               tool("toolu_01", "read", {"filePath": "/work/app/test_parser.py"}, "completed",
                    "def test_parse():\n    assert parse('1') == 1\n", T0 + 2000)],
              tokens(1200, 80, read=0, write=11000, reasoning=12)),
             ([text("The test expects an int."),
               tool("toolu_02", "edit", {"filePath": "/work/app/parser.py", "oldString": "s", "newString": "int(s)"},
                    "completed", "Edit applied.", T0 + 5000)],
              tokens(300, 120, read=11000, write=1500)),
             ([text("Fixed: parse() now returns an int.")], tokens(40, 30, read=12500, write=200)),
         ]),
         user("msg_01JAPP0001U2", T0 + 60000, "Run the tests.", SONNET, ANTHROPIC),
         assistant("msg_01JAPP0001A2", "msg_01JAPP0001U2", T0 + 61000, SONNET, ANTHROPIC, [
             ([tool("toolu_03", "bash", {"command": "pytest -q"}, "error", "Error: 1 failed", T0 + 62000)],
              tokens(50, 40, read=12700, write=100)),
             ([text("One test still fails; a subagent is looking.")], tokens(80, 25, read=12800, write=0)),
         ]),
     ]},
    {"id": "ses_01JAPP0002", "title": "Find the second failure (@general subagent)", "directory": "/work/app",
     "parent": "ses_01JAPP0001",
     "messages": [
         user("msg_01JAPP0002U1", T0 + 63000, "Find why test_dates fails.", "gpt-5", "openai"),
         assistant("msg_01JAPP0002A1", "msg_01JAPP0002U1", T0 + 64000, "gpt-5", "openai", [
             ([tool("call_9", "grep", {"pattern": "def test_dates"}, "completed", "tests/test_dates.py:3",
                    T0 + 65000)], tokens(4000, 60, read=0, reasoning=256)),
             ([text("test_dates compares local time with UTC.")], tokens(200, 40, read=3968, reasoning=128)),
         ]),
     ]},
]

#: Written by a release before the database (no step parts: the message's own tokens and cost).
FILE_SESSIONS = [
    {"id": "ses_00OLD00001", "title": "Explain the build", "directory": "/work/old", "parent": None,
     "messages": [
         user("msg_00OLD00001U1", T0 - 86400000, "How is this built?", "claude-opus-4-1", ANTHROPIC),
         assistant("msg_00OLD00001A1", "msg_00OLD00001U1", T0 - 86399000, "claude-opus-4-1", ANTHROPIC,
                   [([text("With make; see the Makefile.")], tokens(900, 150, read=0, write=2048))],
                   with_steps=False),
     ]},
]


def main() -> None:
    root = Path(__file__).resolve().parents[4]
    sys.path.insert(0, str(root))
    from tests.support.opencode_store import write_db, write_files

    data = Path(__file__).resolve().parent / "home" / ".local" / "share" / "opencode"
    if data.exists():
        shutil.rmtree(data)
    write_db(data / "opencode.db", DB_SESSIONS)
    write_files(data, FILE_SESSIONS, project="prj_0")


if __name__ == "__main__":
    main()
