"""Qwen Code: ``~/.qwen/projects/<project>/chats/<sessionId>.jsonl`` (``$QWEN_RUNTIME_DIR`` replaces
``~/.qwen``); the project is the folder Qwen Code filed the session under (its sanitized working
directory).

Where Qwen Code writes (QwenLM/qwen-code, read 2026-12-05): ``ChatRecordingService.ensureChatsDir``
puts a session's file in ``path.join(config.storage.getProjectDir(), 'chats')``
(``packages/core/src/services/chatRecordingService.ts``, commit
015346f1d5d7312fddaf84a7ef1f83c7d217d389); ``Storage.getProjectDir`` is
``<runtime base>/projects/<sanitizeCwd(project root)>``, and the runtime base is ``$QWEN_RUNTIME_DIR``
when set, else ``~/.qwen`` (``packages/core/src/config/storage.ts``, commit
013e660f5799186a369c737aea6b4bcb9ca0ef47, ``getRuntimeBaseDir`` / ``getGlobalQwenDir``). A runtime
folder set in Qwen Code's settings file (``setRuntimeBaseDir``) is not seen here: pass ``--qwen-dir``.
ccusage reads the same layout (ryoppippi/ccusage, ``rust/crates/ccusage/src/adapter/qwen/paths.rs``,
commit 5816e640e8824986f33427203da164b01394a161).

Late-2025 releases wrote Gemini CLI's layout instead (Qwen Code is its fork):
``~/.qwen/tmp/<project hash>/chats/session-*.json``, one JSON document whose model replies are messages
of type ``qwen`` (``pruner.formats.qwen_code.read_older``); those are found in ``tmp`` beside
``projects`` and read as Qwen Code, not Gemini CLI."""

from __future__ import annotations

import os

from ...model import Session
from ..found import LogSession, file_state, files_in, subfolders
from .base import Agent


def find(root: str) -> list[LogSession]:
    """The sessions under ``root`` (``<project>/chats/*.jsonl``, and the older ``<project hash>/chats/
    session-*.json``), and, when ``root`` is the runtime folder's ``projects``, the older layout in
    its sibling ``tmp``."""
    out = []
    roots = [root]
    older = os.path.join(os.path.dirname(root), "tmp")
    if os.path.basename(root) == "projects" and os.path.isdir(older):
        roots.append(older)
    for top in roots:
        for project_dir in subfolders(top):
            chats = os.path.join(project_dir, "chats")
            paths = files_in(chats, ".jsonl") + [p for p in files_in(chats, ".json")
                                                  if os.path.basename(p).startswith("session-")]
            for path in paths:
                state = file_state(path)
                if state is not None:
                    out.append(LogSession("qwen_code", os.path.basename(project_dir), state))
    return out


def load(found: LogSession) -> Session:
    """The full reader, told the format: a Qwen Code line looks much like a Claude Code one."""
    from ...formats import load_session

    return load_session(found.main.path, format="qwen_code")


def read_usage(path: str) -> tuple[Session, str] | None:
    if path.endswith(".json"):
        return None  # the older layout's one JSON document: the full reader reads it
    from ...formats._qwen_code_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="qwen_code", title="Qwen Code", flag="qwen", variable="QWEN_RUNTIME_DIR", inner="projects",
              default=".qwen", layout="~/.qwen/projects/<project>/chats/*.jsonl", find=find, format="qwen_code",
              read_usage=read_usage, load=load, order=50, finds_beside=True)
