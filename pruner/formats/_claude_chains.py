"""Claude Code's conversations in one file: the main chain and each subagent's, in link order.

A Claude Code file holds the main conversation and, on ``isSidechain: true``
lines, the conversations of the subagents the Task tool started. Every line
names the line before it in its conversation (``parentUuid``), and that link,
not the file order, is the conversation's order: some writers (hook dumps,
viewers' fixtures) put lines out of time order. This module only sorts lines;
``claude_code`` turns each chain into a ``Session``.

* ``link_order``: the lines in file order, except that a line whose parent
  comes later in the file is moved to just after its parent.
* ``split_chains``: main-chain lines and one group per subagent, keyed by the
  ``agentId`` the line records, else by the sidechain's root (the first
  sidechain line reached by following ``parentUuid`` back).

>>> recs = [(1, {"uuid": "b", "parentUuid": "a"}), (2, {"uuid": "a", "parentUuid": None})]
>>> [r["uuid"] for _, r in link_order(recs)]
['a', 'b']
"""

from __future__ import annotations

from typing import Any, Iterable

from .common import JsonObject

Record = tuple[int, JsonObject]


def link_order(records: Iterable[Record]) -> list[Record]:
    """``records`` with every line after its parent (``parentUuid``), otherwise in file order.

    A stable topological order: a line whose parent is in the file but not yet
    placed waits for it; a line whose parent is missing (or that sits on a
    cycle) keeps its place among the rest, at the end for a cycle.
    """
    records = list(records)
    known = {r.get("uuid") for _, r in records if isinstance(r.get("uuid"), str)}
    placed: set[str] = set()
    waiting: dict[str, list[Record]] = {}
    out: list[Record] = []

    def place(rec: Record) -> None:
        stack = [rec]
        while stack:
            current = stack.pop()
            out.append(current)
            uid = current[1].get("uuid")
            if isinstance(uid, str) and uid not in placed:
                placed.add(uid)
                stack.extend(reversed(waiting.pop(uid, [])))

    for rec in records:
        parent = rec[1].get("parentUuid")
        if isinstance(parent, str) and parent in known and parent not in placed and parent != rec[1].get("uuid"):
            waiting.setdefault(parent, []).append(rec)
        else:
            place(rec)
    if waiting:  # parents on a cycle never get placed: keep their lines, in file order
        rest = sorted((r for recs in waiting.values() for r in recs), key=lambda r: r[0])
        seen = {id(r) for r in out}
        out.extend(r for r in rest if id(r) not in seen)
    return out


def split_chains(records: list[Record]) -> tuple[list[Record], list[tuple[str, list[Record]]]]:
    """Main-chain lines, and ``(chain id, lines)`` per subagent in order of first appearance.

    A file whose every conversation line is a sidechain (a subagent's own file)
    is one conversation: all its lines are the main chain.
    """
    side = {r.get("uuid"): r for _, r in records if r.get("isSidechain") and isinstance(r.get("uuid"), str)}
    if not any(not r.get("isSidechain") and r.get("type") in ("user", "assistant") for _, r in records):
        return records, []
    roots: dict[str, str] = {}

    def root_of(rec: JsonObject) -> str:
        path = []
        current = rec
        while True:
            uid = current.get("uuid")
            if uid in roots:
                found = roots[uid]
                break
            path.append(uid)
            parent = current.get("parentUuid")
            if not isinstance(parent, str) or parent not in side or parent in path:
                found = uid if isinstance(uid, str) else f"line-{id(rec)}"
                break
            current = side[parent]
        for uid in path:
            if isinstance(uid, str):
                roots[uid] = found
        return found

    main: list[Record] = []
    groups: dict[str, list[Record]] = {}
    for rec in records:
        entry = rec[1]
        if not entry.get("isSidechain"):
            main.append(rec)
            continue
        agent = entry.get("agentId")
        chain = agent if isinstance(agent, str) and agent else root_of(entry)
        groups.setdefault(chain, []).append(rec)
    return main, list(groups.items())


def task_calls(messages: Iterable[Any]) -> list[tuple[int, str, Any]]:
    """``(position, call id, prompt)`` of every Task (``Agent``) tool call in a chain's messages."""
    out = []
    for i, m in enumerate(messages):
        for c in m.tool_calls:
            if c.name in ("Task", "Agent"):
                prompt = c.arguments.get("prompt") if isinstance(c.arguments, dict) else None
                out.append((i, c.id, prompt))
    return out


def agent_results(messages: Iterable[Any]) -> dict[str, str]:
    """``{agentId: Task call id}`` from the main chain's results (newer Claude Code records the
    subagent's id in the Task result's ``toolUseResult.agentId``)."""
    out: dict[str, str] = {}
    for m in messages:
        if not m.tool_call_id:
            continue
        result = (m.metadata.get("source") or {}).get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        if isinstance(agent, str) and agent:
            out.setdefault(agent, m.tool_call_id)
    return out


def parent_calls(main_messages: tuple[Any, ...], subagents: list[tuple[str, str | None, Any]]) -> dict[str, str]:
    """``{chain id: Task call id}`` for the subagents whose starting call can be found.

    ``subagents``: ``(chain id, agentId or None, first user text)`` in order of first appearance.
    By ``agentId`` when the main chain's result records it; else by the Task
    call whose ``prompt`` is the subagent's first message, not yet taken by an
    earlier subagent, preferring a call whose result says a subagent ran
    (``toolUseResult`` is an object): a Task interrupted and retried with the
    same prompt leaves calls that started nothing.
    """
    by_agent = agent_results(main_messages)
    ran = {m.tool_call_id for m in main_messages
           if m.tool_call_id and isinstance((m.metadata.get("source") or {}).get("toolUseResult"), dict)}
    calls = task_calls(main_messages)
    taken: set[str] = set()
    out: dict[str, str] = {}
    for chain, agent, _ in subagents:
        if agent and agent in by_agent:
            out[chain] = by_agent[agent]
            taken.add(by_agent[agent])
    for chain, _, prompt in subagents:
        if chain in out or not isinstance(prompt, str):
            continue
        free = [cid for _, cid, p in calls if p == prompt and cid not in taken]
        if free:
            out[chain] = next((cid for cid in free if cid in ran), free[0])
            taken.add(out[chain])
    return out
