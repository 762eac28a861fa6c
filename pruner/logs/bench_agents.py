"""``pruner bench-logs``' readers of the agents with no shared real files: Qwen Code, Copilot CLI, Amp.

The shared real data (``../shared/data/real``) holds no Qwen Code, Copilot CLI or Amp session, so their
bill-only readers are timed on files generated from the repository's samples (``sample_sessions/``):
the sample's records over and over, each copy's ids suffixed (so no record repeats another and every
result answers its own call) and each tool result given 1.4 KB of output (tool output is the bulk of a
real log, and what the bill-only readers skip unread), until the file holds ``mb`` MB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..files import write_atomic

#: agent -> its sample under ``sample_sessions/``
SAMPLES = {"qwen_code": "qwen_code.jsonl", "copilot_cli": "copilot_cli.jsonl", "amp": "amp_thread.json"}
#: Fields holding a record's, a call's or a result's id: suffixed per copy.
_IDS = frozenset({"uuid", "parentUuid", "id", "messageId", "apiCallId", "toolCallId", "parentId", "toolUseID",
                  "toMessageId"})
_OUTPUT = "line of tool output\n" * 75  # about 1.4 KB


def _copy(value: Any, n: int) -> Any:
    if isinstance(value, dict):
        return {k: f"{v}-{n}" if k in _IDS and isinstance(v, str) else _copy(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v, n) for v in value]
    return value


def _bulk(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its tool results' output (whichever agent's shape it is) replaced by ``_OUTPUT``."""
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts if isinstance(parts, list) else []:  # Qwen Code
        if isinstance(part.get("functionResponse"), dict):
            part["functionResponse"]["response"] = {"output": _OUTPUT}
    if record.get("type") == "tool.execution_complete":  # Copilot CLI
        record["data"]["result"] = {"content": _OUTPUT}
    content = record.get("content")
    for block in content if isinstance(content, list) else []:  # Amp
        if block.get("type") == "tool_result" and isinstance(block.get("run"), dict):
            block["run"]["result"] = _OUTPUT
    return record


def generate(agent: str, samples: Path, path: Path, mb: float) -> int:
    """A session file of about ``mb`` MB for ``agent`` from its sample (see the module); returns its size."""
    text = (samples / SAMPLES[agent]).read_text(encoding="utf-8")
    if agent == "amp":
        thread = json.loads(text)
        body, events = thread["messages"], (thread.get("usageLedger") or {}).get("events") or []
        messages: list[Any] = []
        ledger: list[Any] = []
        size, n = 0, 0
        while size < mb * 1e6:
            copies = [_bulk(_copy(m, n)) for m in body]
            messages += copies
            ledger += [_copy(e, n) for e in events]
            size += sum(len(json.dumps(m)) for m in copies)
            n += 1
        thread["messages"] = messages
        if events:
            thread["usageLedger"]["events"] = ledger
        data = json.dumps(thread).encode()
    else:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        # Copilot CLI's session starts once and ends once: the events between them are the ones copied.
        head, tail = ([records.pop(0)], [records.pop()]) if agent == "copilot_cli" else ([], [])
        lines = [json.dumps(r) for r in head]
        size, n = 0, 0
        while size < mb * 1e6:
            for r in records:
                line = json.dumps(_bulk(_copy(r, n)))
                lines.append(line)
                size += len(line) + 1
            n += 1
        data = ("\n".join(lines + [json.dumps(r) for r in tail]) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    return len(data)


def generated_files(scratch: Path, samples: Path, *, mb: float = 32.0) -> list[tuple[str, Path, int]]:
    """``(agent, path, size)`` of a generated file of ``mb`` MB under ``scratch`` for each agent in ``SAMPLES``
    (``pruner bench-logs`` times each agent's bill-only reader on its file: ``bench.time_reader``)."""
    out = []
    for agent, sample in SAMPLES.items():
        path = scratch / f"{agent}{Path(sample).suffix}"
        out.append((agent, path, generate(agent, samples, path, mb)))
    return out
