"""Expired context: results a newer one has made stale."""

from __future__ import annotations

from ..engine.index import SessionIndex
from ..engine.fileops import READ
from . import Removal, explains, register_rule


def _short(key: str, limit: int = 60) -> str:
    return key if len(key) <= limit else key[: limit - 1] + "…"


@register_rule("superseded_call", stage="expired",
               description="a tool result is replaced by a newer result of the same call "
                           "(same tool name and arguments, or the same explicit key)")
def supersede_calls(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    """Every result but the newest of its key goes; each points at the next newer one.

    Pointing at the next newer result (not the newest) keeps a decision stable as
    the conversation grows: a later re-run changes only the previous newest.
    """
    out: list[Removal] = []
    next_newer: dict[str, int] = {}
    keys = index.result_key
    for i in range(len(keys) - 1, -1, -1):  # position decides "newer", never the id
        key = keys[i]
        if key is None or not alive[i]:
            continue
        j = next_newer.get(key)
        if j is not None:
            out.append(Removal(i, "superseded_call", j, (key,)))
        next_newer[key] = i
    return out


@register_rule("file_state", stage="expired",
               description="a file read is stale once the same path is written, edited, or read again in full")
def expire_stale_reads(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    out: list[Removal] = []
    later: dict[str, tuple[int, str]] = {}  # path -> nearest later (index, op) that makes a read stale
    msgs = index.messages
    for i in range(len(msgs) - 1, -1, -1):
        accesses = index.file_access[i]
        if not accesses:
            continue
        if alive[i]:
            for a in accesses:
                if a.op == READ and a.path in later:
                    j, op = later[a.path]
                    out.append(Removal(i, "file_state", j, (a.path, op)))
                    break
        for a in accesses:
            if a.op != READ or not a.partial:
                later[a.path] = (i, a.op)
    return out


@register_rule("ttl", stage="expired",
               description="a message whose expires_after_turn is below the session's last turn")
def expire_by_ttl(index: SessionIndex, alive: list[bool], config) -> list[Removal]:
    last = index.last_turn
    return [Removal(i, "ttl", None, (m.expires_after_turn, last))
            for i, m in enumerate(index.messages)
            if m.expires_after_turn is not None and m.expires_after_turn < last and alive[i]]


@explains("superseded_call")
def _explain_superseded(r: Removal, messages) -> str:
    return f"superseded by a newer result of {_short(r.detail[0])} at turn {messages[r.related].turn}"


@explains("file_state")
def _explain_file_state(r: Removal, messages) -> str:
    path, op = r.detail
    what = "read again" if op == READ else ("written" if op == "write" else "edited")
    return f"stale read of {path}: the file was {what} at turn {messages[r.related].turn}"


@explains("ttl")
def _explain_ttl(r: Removal, messages) -> str:
    return f"expired after turn {r.detail[0]}; the session is at turn {r.detail[1]}"
