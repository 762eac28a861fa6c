"""The Goose fixture's sessions (``tests/support/goose_store.py`` writes them as Goose does).

Run ``python tests/data/agents/goose/sessions.py`` from the repository root to write the fixture
HOME again (``home/.local/share/goose/sessions/sessions.db``). The message shapes follow Goose's
``conversation/message.rs`` and ``tool_result_serde.rs`` (see README.md); Goose records the tokens of
a whole session (``accumulated_*``) and of its latest request, no cost.
"""

from __future__ import annotations

import sys
from pathlib import Path

T0 = 1767312000  # 2026-01-02T00:00:00Z, in Goose's epoch seconds


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def call(cid: str, name: str, arguments: dict) -> dict:
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success",
                                                           "value": {"name": name, "arguments": arguments}}}


def result(cid: str, out: str, error: bool = False) -> dict:
    if error:
        return {"type": "toolResponse", "id": cid, "toolResult": {"status": "error", "error": out}}
    return {"type": "toolResponse", "id": cid,
            "toolResult": {"status": "success", "value": {"content": [text(out)], "isError": False}}}


SESSIONS = [
    {"id": "20260102_1", "name": "Tidy the README", "working_dir": "/work/docs", "updated_at": "2026-01-02 00:05:00",
     "provider": "anthropic", "model": "claude-sonnet-4-5",
     "tokens": {"input_tokens": 5200, "output_tokens": 180, "total_tokens": 5380,
                "accumulated_input_tokens": 14100, "accumulated_output_tokens": 610,
                "accumulated_total_tokens": 14710},
     "messages": [
         {"id": "msg_u1", "role": "user", "created": T0, "content": [text("Tidy the README's install section.")]},
         {"id": "msg_a1", "role": "assistant", "created": T0 + 3,
          "content": [{"type": "thinking", "thinking": "Read it first.", "signature": "sig"},
                      text("Reading the README."),
                      call("toolu_1", "developer__text_editor", {"command": "view", "path": "/work/docs/README.md"})]},
         {"id": "msg_u2", "role": "user", "created": T0 + 4,
          "content": [result("toolu_1", "# Install\nrun make\nrun make install\n")]},
         {"id": "msg_a2", "role": "assistant", "created": T0 + 9,
          "content": [call("toolu_2", "developer__shell", {"command": "make -n install"})]},
         {"id": "msg_u3", "role": "user", "created": T0 + 10,
          "content": [result("toolu_2", "make: *** No rule to make target 'install'.", error=True)]},
         {"id": "msg_a3", "role": "assistant", "created": T0 + 15,
          "content": [text("The install target does not exist; the README now says `make` only."),
                      {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "saved"}]},
     ]},
    {"id": "20260102_2", "name": "", "working_dir": "/work/api", "updated_at": "2026-01-02 01:00:00",
     "provider": "openai", "model": "gpt-5",
     "tokens": {"input_tokens": 2100, "output_tokens": 95, "total_tokens": 2195},
     "messages": [
         {"role": "user", "created": T0 + 3600, "content": [text("What does /health return?")]},
         {"role": "assistant", "created": T0 + 3604, "content": [text("{\"ok\": true} with status 200.")]},
     ]},
]


def main() -> None:
    root = Path(__file__).resolve().parents[4]
    sys.path.insert(0, str(root))
    from tests.support.goose_store import write_db

    db = Path(__file__).resolve().parent / "home" / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    db.unlink(missing_ok=True)
    write_db(db, SESSIONS)


if __name__ == "__main__":
    main()
