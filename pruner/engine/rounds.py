"""When does a second round of the passes change nothing?

Pruning restores what kept messages need. A restored message is back in the
kept set, and pruning that set again must keep exactly the same messages
(idempotence). That holds without running the passes again when every
restored message would be removed again and restored again for the same need:

* it was a pass-2 copy (the walk before it is unchanged, so it is a copy again), or
* a reason pass 1 had to remove it is still in the kept set: a later result of
  the same call, a later change of a file it read, or its TTL.

``prune`` and ``IncrementalPruner`` both ask ``settled``; when it says no,
``prune`` runs the passes again on the kept set (and the incremental pruner
prunes in full).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from .index import SessionIndex
from .fileops import READ


def settled(index: SessionIndex, restored: Iterable[int], *, kept: Callable[[int], bool],
            removed_by_pass1: Callable[[int], bool], later_results: Callable[[int], Iterable[int]],
            later_invalidators: Callable[[int, str], Iterable[int]],
            witness: dict[int, int] | None = None) -> bool:
    """True when a second round of the passes over the kept messages changes nothing.

    ``witness`` (optional, kept by the caller between calls) remembers, for each
    restored message, the kept message that showed its removal reason still
    holds; it is checked first, so a caller asking after every turn does not
    search again while the witness stays kept.
    """
    msgs: Sequence = index.messages
    last = len(msgs) - 1
    while last >= 0 and not kept(last):
        last -= 1
    if (msgs[last].turn if last >= 0 else 0) != index.last_turn:
        return False  # the kept set ends at an earlier turn: TTLs would read differently
    for r in restored:
        if not removed_by_pass1(r):
            continue
        if witness is not None:
            w = witness.get(r)
            if w is not None and kept(w):
                continue
        found = next((j for j in later_results(r) if kept(j)), None)
        if found is None:
            found = next((v for a in index.file_access[r] if a.op == READ
                          for v in later_invalidators(r, a.path) if kept(v)), None)
        if found is not None:
            if witness is not None:
                witness[r] = found
            continue
        eat = msgs[r].expires_after_turn
        if eat is not None and eat < index.last_turn:
            continue
        return False
    return True


def full_session_lookups(index: SessionIndex):
    """``later_results`` and ``later_invalidators`` for a whole index, built once."""
    by_key: dict[str, list[int]] = {}
    for i, k in enumerate(index.result_key):
        if k is not None:
            by_key.setdefault(k, []).append(i)
    by_path: dict[str, list[int]] = {}
    for i, accesses in enumerate(index.file_access):
        for a in accesses:
            if a.op != READ or not a.partial:
                by_path.setdefault(a.path, []).append(i)

    def later_results(r: int):
        key = index.result_key[r]
        return [j for j in by_key.get(key, ()) if j > r] if key is not None else ()

    def later_invalidators(r: int, path: str):
        return [v for v in by_path.get(path, ()) if v > r]

    return later_results, later_invalidators
