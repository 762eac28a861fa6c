"""Reads of a file that a later call edits, found from the calls themselves (issue 20's file_state rule)."""

from __future__ import annotations

from pruner.analysis.fileops import EDIT, READ, file_operations


def reads_edited_later(session) -> list[tuple[str, str]]:
    """(result id of a read, result id of a later edit of the same path) for every such pair; a call's
    operations come from ``file_operations`` (the tool names each format's agent uses)."""
    result_of = {m.tool_call_id: m.id for m in session.messages if m.tool_call_id is not None}
    reads: dict[str, list[str]] = {}
    pairs = []
    for m in session.messages:
        for call in m.tool_calls:
            rid = result_of.get(call.id)
            if rid is None:
                continue
            for op, path in file_operations(call):
                if op == EDIT:
                    pairs += [(r, rid) for r in reads.get(path, ())]
                elif op == READ:
                    reads.setdefault(path, []).append(rid)
    return pairs


def assert_edited_reads_are_kept(session, result) -> None:
    """The sample has a read its agent edits afterwards, and pruning keeps that read: an edit changes a few
    lines, and the next edit copies the others from it."""
    pairs = reads_edited_later(session)
    assert pairs, "the sample should read a file and edit it afterwards"
    status = {d.id: d.status for d in result.decisions}
    assert {r: status[r] for r, _ in pairs} == {r: "kept" for r, _ in pairs}


def expired_rules(result) -> list[str]:
    """The rule of each expired decision, and of each result a rule would have expired but kept because
    its placeholder would be longer (issue 34: the rule still found it; the removal would not pay)."""
    held = "placeholder would be longer: "
    return [d.rule if d.status == "expired" else d.reason[len(held):].split(" ", 1)[0]
            for d in result.decisions if d.status == "expired" or d.reason.startswith(held)]
