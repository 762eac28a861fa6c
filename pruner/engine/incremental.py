"""Prune a growing conversation turn by turn, the way an agent loop runs it.

An agent re-prunes after every turn. Pruning the whole history each time costs
time proportional to its length, every turn. ``IncrementalPruner`` carries the
passes' state from turn to turn in trackers that mirror the rules (each rule
declares its tracker where it registers, ``pruner.rules``): pass 1's trackers add
what newer messages make stale, pass 2's tracker keeps the duplicate walk, pass 3's
the needs of kept messages. An append costs about what the new messages and the
decisions they change cost, and ``context()`` (what the model receives) is kept up
to date from exactly those changes (``pruner.engine.context``). After every append,
``result()`` equals ``prune()`` of everything appended so far (the tests check this
on generated sessions, decision by decision).

>>> from pruner import Message
>>> p = IncrementalPruner()
>>> p.append([Message(id="u1", role="user", content="hello")]).messages
1
>>> p.result().stats.messages_after
1

When restorations would make a second round of the passes change something, or a
registered rule has no tracker, it prunes everything again, so the result is always
exact; ``full_recomputes`` counts how often.
"""

from __future__ import annotations

import time
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any, Iterable

from .context import Context, ContextChange, ContextTracker, change_between
from ..analysis.index import SessionIndex
from .payoff import pays
from .prune import PruneConfig, PruneResult, collector_paused, prune
from .result import finish
from .rounds import settled
from .trackers import duplicate_tracker, expiry_tracker, restoration_tracker
from ..model import Message, Session, validate_messages
from ..rules import RULES, Removal, rules_for
from ..tokens import get_counter


@dataclass(frozen=True)
class TurnUpdate:
    """What one ``append`` did (cheap to build, unlike a full ``PruneResult``)."""

    messages: int  # messages in the conversation now
    recomputed: bool  # True when the append fell back to pruning everything again
    change: ContextChange = field(default_factory=ContextChange)  # how the context changed


class _SetOverlay:
    """A set seen through: reads the base, writes to ``added``."""

    def __init__(self, base: set[str]):
        self.base: set[str] = base
        self.added: set[str] = set()

    def __contains__(self, item: object) -> bool:
        return item in self.added or item in self.base

    def add(self, item: str) -> None:
        self.added.add(item)


def carries(config: PruneConfig) -> bool:
    """Whether the registered rules and ``config`` let the incremental pruner carry state:
    every pass on, no rule switched off, every rule with a tracker, one duplicate and one
    restoration family (the built-ins)."""
    return (config.expire and config.deduplicate and config.restore and not config.disabled_rules
            and all(f.tracker is not None for f in RULES.values())
            and len(rules_for("duplicate")) == 1 and len(rules_for("restored")) == 1)


class IncrementalPruner:
    """Keeps the pruning of a growing conversation up to date, one append at a time."""

    def __init__(self, config: PruneConfig | None = None, *, name: str = "", source_format: str = "native",
                 metadata: dict[str, Any] | None = None):
        self.config = config or PruneConfig()
        self._name, self._source_format, self._metadata = name, source_format, dict(metadata or {})
        self._seen: dict[str, int] = {}
        self._call_ids: set[str] = set()
        self.full_recomputes = 0
        self.appends = 0
        self._multi_round: PruneResult | None = None  # set when the carried round does not settle it
        self._carry = carries(self.config)
        self._index = SessionIndex(self.config.file_tools)
        self._messages = self._index.messages
        self._counter = get_counter(self.config.encoding)
        if self._carry:
            self._gone = bytearray()  # 1 where pass 1 removes the message
            self._expiry = [expiry_tracker(f, self._index, self.config) for f in rules_for("expired")]
            self._duplicate_family = rules_for("duplicate")[0]
            self._expired_family = next(iter(rules_for("expired")), None)
            self._dups = duplicate_tracker(self._duplicate_family, self._index, self.config, self._gone)
            self._deps = restoration_tracker(rules_for("restored")[0], self._index, self.config, self._kept12)
            self._context = ContextTracker(self._index, self._counter, self.config.orphan_policy)
            self._k12 = bytearray()  # 1 where passes 1-2 keep the message (as of the last append)
            self._paid: dict[int, tuple[Removal, bool]] = {}  # message -> (its removal, whether it pays)
            self._witness: dict[int, int] = {}  # restored -> a kept message showing why pass 1 removed it
            self._was_settled = False
            self._kept_changed = True

    # -- public -----------------------------------------------------------------------------

    def append(self, messages: Iterable[Message]) -> TurnUpdate:
        """Add messages (in order) and bring the pruning up to date."""
        new = list(messages)
        start = len(self._messages)
        # Validated into overlays on the known ids, so a refused batch changes nothing
        # and an accepted one costs only its own size.
        seen = ChainMap({}, self._seen)
        calls = _SetOverlay(self._call_ids)
        validate_messages(new, seen=seen, call_ids=calls, start=start)
        self._seen.update(seen.maps[0])
        self._call_ids |= calls.added
        # No collector pause here (unlike prune()): an append allocates little, and
        # re-enabling the collector after every turn would set off a collection each time.
        return self._append(new, start)

    def context(self) -> Context:
        """What the model receives now (kept messages and placeholders): what an agent
        loop sends after each turn. It costs a copy of the kept list, not a rebuild of
        the decisions; ``result()`` gives the full explanation."""
        if self._multi_round is not None:
            return _result_context(self._multi_round)
        return self._context.context()

    def result(self) -> PruneResult:
        """The full result for everything appended so far; equals ``prune()`` of it."""
        if self._multi_round is not None:
            return self._multi_round
        with collector_paused():
            return self._result()

    # -- an append ------------------------------------------------------------------------------

    def _append(self, new: list[Message], start: int) -> TurnUpdate:
        self.appends += 1
        before = self._multi_round
        if not self._carry:  # (or no longer: an outcome the trackers cannot carry was met)
            self._index.extend(new)
            self._multi_round = prune(self._session(), self.config, validate=False)
            recomputed = True
        else:
            changed = self._advance(new, start)
            self._context.grow()
            change = self._context.refresh(changed, self._kept, self._removal_rule)
            recomputed = not self._carry or not self._settled_now()
            self._multi_round = prune(self._session(), self.config, validate=False) if recomputed else None
        if recomputed or before is not None:
            # The context comes from (or returns from) a full prune: compare the two whole.
            previous = (_result_context(before) if before is not None
                        else self._context.previous_context() if hasattr(self, "_context") else None)
            change = change_between(previous, self.context())
        self.full_recomputes += recomputed
        return TurnUpdate(messages=len(self._messages), recomputed=recomputed, change=change)

    def _advance(self, new: list[Message], start: int) -> set[int]:
        """Every tracker takes in the new messages; returns the messages whose outcome may have changed."""
        index = self._index
        index.extend(new)
        n = len(self._messages)
        gone = self._gone
        gone.extend(bytes(n - start))
        changed = set(range(start, n))
        left: list[int] = []  # earlier messages pass 1 removes from now on
        touched: set[int] = set()
        for tracker in self._expiry:
            touched.update(tracker.advance(start))
        changed |= touched
        for i in sorted(touched):
            # Removed when one of pass 1's removals pays for its placeholder (pruner.engine.payoff).
            removed = self._pass1_removal(i) is not None
            if removed and not gone[i]:
                gone[i] = 1
                if i < start:
                    left.append(i)
            elif gone[i] and not removed:  # pass 1 only ever removes more; this cannot be carried
                self._carry = False
        self._dups.advance(start, left, changed)
        # Which earlier messages passes 1-2 stopped or started keeping: pass 1's, the walk's verdicts,
        # and the copies a placeholder longer than themselves keeps (their original can move).
        k12 = self._k12
        k12.extend(bytes(n - start))
        died: list[int] = []
        revived: list[int] = []
        for i in sorted(changed):
            now = self._kept12(i)
            if i < start and now != bool(k12[i]):
                (revived if now else died).append(i)
            k12[i] = now
        restored_changed = self._deps.advance(start, died, revived, changed)
        # What the settled check read can only change when an earlier message's status did.
        self._kept_changed = bool(left or died or revived or restored_changed)
        return changed

    # -- what the trackers say about a message ----------------------------------------------------

    def _kept12(self, i: int) -> bool:
        if self._gone[i] or not self._dups.is_copy(i):
            return not self._gone[i]
        return not self._pays(_named(self._dups.removal(i), i))

    def _pays(self, r: Removal) -> bool:
        """``pruner.engine.payoff.pays``, remembered per message while its removal stays the same."""
        hit = self._paid.get(r.index)
        if hit is None or hit[0] != r:
            hit = self._paid[r.index] = (r, pays(self._index, r, self.config))
        return hit[1]

    def _held(self, i: int) -> Removal | None:
        """The first removal of kept message ``i`` that would not have paid for its placeholder."""
        for tracker in self._expiry:
            r = tracker.removal(i)
            if r is not None:
                return r  # kept: so none of pass 1's pays
        if self._dups.is_copy(i):
            return self._dups.removal(i)
        return None

    def _kept(self, i: int) -> bool:
        return self._kept12(i) or i in self._deps.restored

    def _pass1_removal(self, i: int) -> Removal | None:
        for tracker in self._expiry:  # in rule order: the first rule whose removal pays names it
            r = tracker.removal(i)
            if r is not None and self._pays(r):
                return r
        return None

    def _removal(self, i: int) -> tuple[str, Removal]:
        if self._gone[i]:
            return "expired", _named(self._pass1_removal(i), i)
        return "duplicate", _named(self._dups.removal(i), i)

    def _removal_rule(self, i: int) -> tuple[str, int | None, tuple[Any, ...]]:
        r = self._removal(i)[1]
        return r.rule, r.related, r.detail

    # -- is the first round the whole story? -----------------------------------------------------

    def _settled_now(self) -> bool:
        """``settled()``, skipped when nothing it reads changed since it last said yes.

        Its verdict can only turn from yes to no when an earlier message's status
        or the restored set changes; new messages at the end (checked by the
        last-kept-turn test) and a later last turn (TTLs only expire more) cannot.
        """
        if self._was_settled and not self._kept_changed and self._last_kept_turn_matches():
            return True
        restored = self._deps.restored
        gone, expired, duplicate = self._gone, self._expired_family, self._duplicate_family
        self._was_settled = not restored or settled(
            self._index, restored, kept=self._kept, removed_by=lambda i: expired if gone[i] else duplicate,
            witness=self._witness)
        return self._was_settled

    def _last_kept_turn_matches(self) -> bool:
        msgs = self._messages
        last = len(msgs) - 1
        while last >= 0 and not self._kept(last):
            last -= 1
        return (msgs[last].turn if last >= 0 else 0) == self._index.last_turn

    # -- the full explanation ---------------------------------------------------------------------

    def _session(self) -> Session:
        s = Session(messages=tuple(self._messages), name=self._name, source_format=self._source_format,
                    metadata=self._metadata)
        s.__dict__["_validated"] = True  # every message was validated as it was appended
        return s

    def _result(self) -> PruneResult:
        started = time.perf_counter()
        final: dict[int, tuple[str, Removal]] = {}
        first_removal: dict[int, str] = {}
        restored = self._deps.restored
        alive = bytearray(len(self._messages))
        held: dict[int, Removal] = {}
        for i in range(len(self._messages)):
            if self._kept12(i):
                alive[i] = 1
                if (r := self._held(i)) is not None:
                    held[i] = r
                continue
            status, r = self._removal(i)
            first_removal[i] = r.rule
            if i in restored:
                alive[i] = 1
            else:
                final[i] = (status, r)
        ever_restored = {j: _named(self._deps.restoration(j), j) for j in restored}
        # settled: a second round would change nothing, so prune() skips it too
        return finish(self._session(), self._index, alive, final, ever_restored, first_removal, self.config,
                      self._counter, 1, started, held=held)


def _named(r: Removal | None, i: int) -> Removal:
    """The removal (or restoration) of message ``i``, which a tracker names: it is asked only about
    messages that passes 1-2 removed (or pass 3 restored)."""
    if r is None:
        raise AssertionError(f"message {i}: no tracker names why it was removed or restored")
    return r


def _result_context(r: PruneResult) -> Context:
    return Context(messages=r.kept.messages, placeholders=dict(r.placeholders), tokens=r.stats.tokens_after)
