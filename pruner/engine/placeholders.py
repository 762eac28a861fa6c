"""The text the export sends in place of a pruned tool result whose call is kept.

The Chat Completions API rejects a call without its result, so a kept call whose
result was pruned is answered by a short placeholder that says why and names the
message that replaced it.
"""

from __future__ import annotations

from ..model import Message


def placeholder_text(status: str, rule: str, related: Message | None, m: Message) -> str:
    """The placeholder for result ``m``, removed with ``status`` by ``rule``, pointing at ``related``."""
    where = f" at turn {related.turn} (id {related.id})" if related is not None else ""
    if rule == "superseded_call":
        return f"[superseded by the result{where}]"
    if rule == "file_state":
        return f"[stale file read; the file changed{where}]"
    if status == "duplicate":
        return f"[same as the result{where}]"
    if rule == "ttl":
        return f"[expired after turn {m.expires_after_turn}]"
    return "[result removed by pruning]"
