"""When does a second round of the passes change nothing?

Pruning restores what kept messages need. A restored message is back in the
kept set, and pruning that set again must keep exactly the same messages
(idempotence). That holds without running the passes again when every
restored message would be removed again and restored again for the same need.
Each rule declares when that is so for the messages it removed
(``removes_again`` in ``pruner.rules``):

* a pass-2 copy is a copy again: the walk before it is unchanged;
* a pass-1 removal holds again when some pass-1 reason is still in the kept set: a
  later result of the same call, a later change of a file it read, or its TTL.

A rule that declares nothing makes ``settled`` say no, and ``prune`` runs the passes
again on the kept set (the incremental pruner prunes in full).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..analysis.index import SessionIndex
from ..model import Message
from ..rules import RULES, Rule, rules_for


def family_of(rule_name: str) -> Rule | None:
    """The registered family that writes ``rule_name`` into its decisions."""
    for family in RULES.values():
        if rule_name == family.name or rule_name in family.emits:
            return family
    return None


def settled(index: SessionIndex, restored: Iterable[int], *, kept: Callable[[int], int],
            removed_by: Callable[[int], "Rule | None"], witness: dict[int, int] | None = None) -> bool:
    """True when a second round of the passes over the kept messages changes nothing.

    ``removed_by(r)``: the rule family that removed restored message ``r`` (for a pass-1
    removal any pass-1 family will do: every pass-1 reason is checked). ``witness``
    (optional, kept by the caller between calls) remembers, for each restored message,
    the kept message that showed a pass-1 reason to remove it still holds; it is checked
    first, so a caller asking after every turn does not search again while the witness
    stays kept.
    """
    msgs: Sequence[Message] = index.messages
    last = len(msgs) - 1
    while last >= 0 and not kept(last):
        last -= 1
    if (msgs[last].turn if last >= 0 else 0) != index.last_turn:
        return False  # the kept set ends at an earlier turn: TTLs would read differently
    expired = None
    for r in restored:
        if witness is not None:
            w = witness.get(r)
            if w is not None and kept(w):
                continue  # a kept message still shows a pass-1 reason to remove it
        family = removed_by(r)
        if family is None:
            return False
        if family.stage != "expired":
            if family.removes_again is None or not family.removes_again(index, r, kept):
                return False
            continue
        if expired is None:
            expired = [f.removes_again for f in rules_for("expired") if f.removes_again is not None]
        for again in expired:  # any pass-1 reason removes it again
            found = again(index, r, kept)
            if found:
                break
        else:
            return False
        if witness is not None and found is not True:
            witness[r] = found
    return True
