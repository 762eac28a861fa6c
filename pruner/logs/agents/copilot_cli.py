"""GitHub Copilot CLI: ``~/.copilot/session-state/<sessionId>/events.jsonl`` (``$COPILOT_HOME`` replaces
``~/.copilot``), and the first versions' ``~/.copilot/session-state/<sessionId>.jsonl``. Copilot CLI files
sessions by id, not by folder, so a session's project is the ``cwd`` its ``session.start`` records.

Copilot CLI is closed source; the layout is its own documentation's: github/copilot-cli
``changelog.md`` (commit 9532bdacf5a343c3dcc444337f7b25e88fc7372c; 0.0.342: "New sessions are stored
in ``~/.copilot/session-state``"; "``--config-dir`` is deprecated in favor of ``COPILOT_HOME``") and
github/copilot-sdk ``docs/features/agent-loop.md`` / ``docs/setup/multi-tenancy.md`` (commit
cc0438d66e3e68c333537cb935d9425d4e4ed8d5: ``~/.copilot/session-state/<sessionId>/events.jsonl``; "The
runtime stores session state under the configured ``COPILOT_HOME``, including
``session-state/{sessionId}``"). The legacy ``~/.copilot/history-session-state`` (before 0.0.342) and
the opt-in OpenTelemetry export ccusage reads (``~/.copilot/otel/*.jsonl``) are not read."""

from __future__ import annotations

import os

from ...model import Session
from ..found import LogSession, file_state, files_in, subfolders
from ..names import clean
from .base import Agent
from .codex import HEAD_BYTES

_UNKNOWN = "(no cwd recorded)"


def first_cwd(path: str) -> str:
    """The working folder the log's ``session.start`` records (in its first ``HEAD_BYTES``), or ""."""
    import json

    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return ""
    for line in head.split(b"\n")[:20]:
        try:
            e = json.loads(line)
        except (ValueError, RecursionError):  # a line nested too deeply is the reader's error row, not the listing's
            continue
        data = e.get("data") if isinstance(e, dict) and e.get("type") == "session.start" else None
        context = data.get("context") if isinstance(data, dict) else None
        cwd = context.get("cwd") if isinstance(context, dict) else None
        if isinstance(cwd, str) and cwd:
            # half a character a writer cut is no text: U+FFFD, as in a Codex project (``codex.first_cwd``)
            return cwd if clean(cwd) else "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in cwd)
    return ""


def find(root: str) -> list[LogSession]:
    paths = files_in(root, ".jsonl") + [p for d in subfolders(root)
                                         for p in files_in(d, ".jsonl") if os.path.basename(p) == "events.jsonl"]
    out = []
    for path in sorted(paths):
        state = file_state(path)
        if state is not None:
            out.append(LogSession("copilot_cli", first_cwd(path) or _UNKNOWN, state))
    return out


def load(found: LogSession) -> Session:
    """The full reader, told the format (detection would find it too; this skips the guess)."""
    from ...formats import load_session

    return load_session(found.main.path, format="copilot_cli")


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats._copilot_cli_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="copilot_cli", title="GitHub Copilot CLI", flag="copilot", variable="COPILOT_HOME",
              inner="session-state", default=".copilot", layout="~/.copilot/session-state/<session>/events.jsonl",
              find=find, format="copilot_cli", read_usage=read_usage, load=load, order=60)
