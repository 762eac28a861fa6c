"""The search behind the hindsight bound: a forward dynamic programme over replay states.

At each request every state branches into the actions its family allows there (``none`` always);
each branch is stepped through the replay's own machinery (the ``Scheduled`` strategy on a
``Lane``: the cache model's quote and commit, the request's price, window and scale), so the
dollars of a path are exactly what ``replay_plan`` bills for its schedule. Two branches whose
futures cannot differ are merged: same context sent on every chain (message by message, with
placeholders and the compaction in force) and same cache state (every entry's position, tokens and
expiry, the system entry). What the future costs depends on nothing else, so keeping the cheaper of
the two loses no schedule that could be cheaper later.

The recall bar is a constraint on the whole session (terms missing summed over every request), so
a state keeps a *Pareto front*: for each distinct (context, cache) the non-dominated pairs (terms
missing so far, dollars so far); a pair whose missing count already exceeds what the bar allows is
dropped. At the end the cheapest pair that meets the bar wins. This is exact: every schedule's
path is either kept or dominated by a kept one with the same future.

Exact has a price: the number of distinct states can grow with every request. When it passes
``max_states`` the search keeps the ``beam`` cheapest states (and the states following each
*anchor*, the schedules of the family's own strategies, so the bound is never above them) and says
so (``exact`` false, ``approximation`` naming the beam): the schedule found is still a real one,
priced by the replay, so the figure is achievable; the optimum may be lower.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Any, Callable, Mapping, Sequence, cast

from ..cache import CacheState
from ..lanes import Lane, Lens
from ..recall import RecallCollector
from ..recall_context import _Holder
from ..requests import Request
from ..rows import StrategyRun
from ..wire import Wire
from .schedule import NAME, SUMMARY, Scheduled, plan_lane

#: Distinct states kept before the search stops being exhaustive, and how many it keeps after that.
MAX_STATES = 64
BEAM = 4
#: Once the search is a beam, a compaction is tried only where the context (main chain) has passed this
#: share of window minus reserve: earlier, the summary call costs more than the little it would remove.
BEAM_COMPACT_FROM = 0.5
#: ... and only by the cheapest ``BEAM_COMPACTORS`` free states: the summary is most of the search's time
#: (0.05 to 0.2 s a compaction on a long context), and the schedules left untried count in the lower bound.
BEAM_COMPACTORS = 1

#: Only the modelled bill decides the dollars: the other lenses share it (no work, no state).
MODELLED_ONLY = (Lens("modelled", True, True), Lens("not_inherited", True, False, "modelled"),
                 Lens("unscaled", False, True, "modelled"))


class Choice:
    """The plan every forked strategy reads: the action chosen for the request being stepped."""

    def __init__(self) -> None:
        self.value = "none"

    def get(self, index: int, default: str = "none") -> str:
        return self.value


@dataclass(frozen=True)
class Outcome:
    """The cheapest schedule that meets the bar, with what the search knows about it."""

    plan: tuple[tuple[int, str], ...] | None  # None: no schedule is feasible and meets the bar
    dollars: float | None
    missing: int | None
    exact: bool
    states_peak: int
    #: A proven lower bound on the family's optimum (branch and bound over what the beam cut): ``dollars``
    #: when the search is exact; ``None`` when no schedule is feasible and none was cut (proven infeasible).
    lower_bound: float | None = None


class _Path:
    """A persistent list of (request, action): a branch shares its parent's past."""

    __slots__ = ("parent", "request", "action")

    def __init__(self, parent: "_Path | None", request: int, action: str):
        self.parent, self.request, self.action = parent, request, action

    def plan(self) -> tuple[tuple[int, str], ...]:
        out: list[tuple[int, str]] = []
        node: _Path | None = self
        while node is not None and node.request >= 0:
            out.append((node.request, node.action))
            node = node.parent
        return tuple(reversed(out))


_ROOT = _Path(None, -1, "none")


def _copy_wire(w: Wire) -> Wire:
    n = copy.copy(w)
    n.messages = list(w.messages)
    n.substitutes = dict(w.substitutes)
    n._incoming = dict(w._incoming)
    n.ids = set(w.ids)
    n.entered, n.left = list(w.entered), list(w.left)
    n._lookback = None
    return n


def _copy_state(s: CacheState) -> CacheState:
    # The cache models replace an entry, never change one (pruner.replay.cache), so states share them.
    return CacheState(list(s.entries), s.system, s.requests)


_ENTRY = attrgetter("position", "tokens", "expires")


def _copy_holder(h: _Holder) -> _Holder:
    n = copy.copy(h)
    n.sent, n.mirror = list(h.sent), list(h.mirror)
    n.extras = {k: list(v) for k, v in h.extras.items()}
    n.extra_terms = dict(h.extra_terms)
    n.subs = dict(h.subs)
    n.sub_terms = {t: set(c) for t, c in h.sub_terms.items()}
    n.left, n.closed = dict(h.left), list(h.closed)
    return n


class Fork:
    """One state of the search: a lane (every chain's strategy, wire and cache), the recall holders
    following its contexts, its dollars and terms missing so far, its anchors, its path."""

    __slots__ = ("lane", "holders", "dollars", "missing", "anchors", "path", "collector", "last_lost", "free",
                 "rank")

    def __init__(self, lane: Lane, collector: RecallCollector):
        self.lane, self.collector = lane, collector
        self.holders: dict[str, _Holder] = {}
        self.dollars, self.missing, self.last_lost = 0.0, 0, 0
        self.anchors: frozenset[str] = frozenset()
        self.path = _ROOT
        self.free = True  # False: kept past the beam only because it follows an anchor
        self.rank = 0  # its place by dollars in the last beam (0: the cheapest)
        lane.observer = self.observe

    def clone(self) -> "Fork":
        lane = copy.copy(self.lane)
        lane.run = StrategyRun(NAME, SUMMARY)
        chains = {}
        for chain, cl in self.lane.chains.items():
            n = copy.copy(cl)
            strategy = cast(Scheduled, copy.copy(cl.strategy))
            strategy.wire = _copy_wire(cl.strategy.wire)
            strategy.compactor = copy.copy(cast(Scheduled, cl.strategy).compactor)
            n.strategy = strategy
            n.states = {k: _copy_state(v) for k, v in cl.states.items()}
            chains[chain] = n
        lane.chains = chains
        f = Fork(lane, self.collector)
        f.holders = {c: _copy_holder(h) for c, h in self.holders.items()}
        f.dollars, f.missing, f.anchors, f.path, f.free = self.dollars, self.missing, self.anchors, self.path, self.free
        return f

    def observe(self, req: Request, wire: Wire) -> None:
        """What the recall collector does for a strategy at ``req``: follow its context, count the
        used terms it lacks (``RecallCollector.observe``, with the same holder)."""
        collector = self.collector
        chain = req.chain or "main"
        holder = self.holders.get(chain)
        if holder is None:
            holder = self.holders[chain] = _Holder(collector.index(chain))
        holder.apply(req.index, wire.left, wire.entered, wire.substitutes)
        position = req.position
        self.last_lost = sum(1 for t in collector.used(req) if not holder.held(t, position))

    def key(self) -> "_Key":
        parts, caches = [], []
        for chain in sorted(self.lane.chains):
            cl = self.lane.chains[chain]
            s = cast(Scheduled, cl.strategy)
            w = s.wire
            done = s.compactor.current
            parts.append((chain, tuple(map(id, w.messages)), tuple(sorted(w.substitutes.items())),
                          None if done is None else (id(done.summary), done.first_kept, len(done.head))))
            caches.append(tuple(_Cache(st) for _, st in sorted(cl.states.items())))
        return _Key(tuple(parts), tuple(caches))


class _Cache:
    """One cache state as a state key holds it: a copy of its entry list (the entries themselves are
    replaced, never changed, so the copy is a snapshot), compared entry by entry only when asked."""

    __slots__ = ("entries", "system", "used", "summary")

    def __init__(self, s: CacheState):
        self.entries = list(s.entries)
        self.system = None if s.system is None else _ENTRY(s.system)
        self.used = s.requests > 0
        last = _ENTRY(self.entries[-1]) if self.entries else None
        self.summary = (len(self.entries), last, self.system, self.used)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Cache):
            return NotImplemented
        # Mostly the same entry objects (states share them): the list comparison's identity check is C speed,
        # and two different entries compare as dataclasses do, field by field (position, tokens, expires).
        return self.summary == other.summary and self.entries == other.entries

    __hash__ = None  # type: ignore[assignment]


class _Key:
    """What decides a state's future (see the module docstring), as exactly as the tuple of every entry's
    (position, tokens, expiry) was, without building that tuple for every state: the hash reads each
    cache's length, newest entry and system entry, and the entries are compared only on a match."""

    __slots__ = ("parts", "caches", "_hash")

    def __init__(self, parts: tuple[Any, ...], caches: tuple[tuple[_Cache, ...], ...]):
        self.parts, self.caches = parts, caches
        self._hash = hash((parts, tuple(tuple(c.summary for c in chain) for chain in caches)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key):
            return NotImplemented
        return self._hash == other._hash and self.parts == other.parts and self.caches == other.caches


def _insert(front: list[Fork], f: Fork) -> None:
    """Keep ``front`` the non-dominated (missing, dollars) pairs of one state key."""
    for g in front:
        if g.missing <= f.missing and g.dollars <= f.dollars:
            g.anchors = g.anchors | f.anchors  # the survivor does at least as well on the anchor's future
            g.free = g.free or f.free
            return
    keep = []
    for g in front:
        if f.missing <= g.missing and f.dollars <= g.dollars:
            f.anchors = f.anchors | g.anchors
            f.free = f.free or g.free
        else:
            keep.append(g)
    keep.append(f)
    front[:] = keep


def search(runner: Any, requests: Sequence[Request], options: Callable[[Request], Sequence[str]],
           anchors: Mapping[str, Mapping[int, str]], max_missing: int, *, max_states: int = MAX_STATES,
           beam: int = BEAM, input_floor: Callable[[], Sequence[float]] | None = None) -> Outcome:
    """The cheapest schedule of the family ``options`` describes (actions per request, ``none`` first)
    whose every request fits its window and whose terms missing stay within ``max_missing``.
    ``input_floor``: the least input dollars any schedule of the family pays at each request (the lower
    bound's floor beside the output; ``pruner.replay.limit.floor``), asked for only if the beam cut."""
    choice = Choice()
    collector = RecallCollector(runner.session, requests, facts=False)
    root = Fork(plan_lane(runner, choice, MODELLED_ONLY), collector)
    root.anchors = frozenset(anchors)
    fronts: dict[Any, list[Fork]] = {(): [root]}
    exact, peak = True, 1
    # Branch and bound: every schedule the beam leaves unexplored passed through a cut, at request ``k``
    # with ``d`` dollars paid before it; it costs at least d plus the floor of requests k onwards.
    cuts: dict[int, float] = {}  # request from which the floor is owed -> the least dollars cut there
    floors = [0.0] * len(requests)  # the least any schedule pays at each request (its reply's output)
    for n, req in enumerate(requests):
        acts = list(dict.fromkeys(["none", *options(req)]))
        nxt: dict[_Key, list[Fork]] = {}
        seen_floor: float | None = None
        for front in fronts.values():
            for fork in front:
                mine = acts if exact else _actions_past_beam(fork, req, acts, anchors)
                if len(mine) < len(acts):
                    _cut(cuts, n, fork.dollars)
                branches = [fork] + [fork.clone() for _ in mine[1:]]  # cloned before any is stepped
                for action, f in zip(mine, branches):  # "none" first: a no-op action merges into it
                    choice.value = action
                    f.lane.request(req)
                    row = f.lane.run.rows.pop()
                    floor = _floor(req, row)
                    seen_floor = floor if seen_floor is None else min(seen_floor, floor)
                    if row.rejected and not row.aborted:
                        continue  # the API refuses it: this schedule is infeasible
                    f.missing += f.last_lost
                    if f.missing > max_missing:
                        continue
                    f.dollars += row.dollars
                    f.anchors = frozenset(a for a in f.anchors if anchors[a].get(req.index, "none") == action)
                    if action != "none":
                        f.path = _Path(f.path, req.index, action)
                    _insert(nxt.setdefault(f.key(), []), f)
        floors[n] = seen_floor or 0.0
        count = sum(len(v) for v in nxt.values())
        peak = max(peak, count)
        if count > max_states or (not exact and count > beam):
            exact = False  # once a beam, a beam at every request: letting it grow back costs steps, not quality
            nxt = _beam(nxt, beam, partial(_cut, cuts, n + 1))
        fronts = nxt
    if cuts and input_floor is not None:  # the family's floor under each request's input (measured only if needed)
        floors = [f + i for f, i in zip(floors, input_floor())]
    owed = [0.0] * (len(requests) + 1)  # owed[k]: the floor of requests k onwards
    for k in range(len(requests) - 1, -1, -1):
        owed[k] = owed[k + 1] + floors[k]
    cut_bound = min((d + owed[k] for k, d in cuts.items()), default=None)
    finals = [f for front in fronts.values() for f in front]
    if not finals:
        return Outcome(None, None, None, exact, peak, cut_bound)
    best = min(finals, key=lambda f: (f.dollars, f.missing, len(f.path.plan()), f.path.plan()))
    lower = best.dollars if cut_bound is None else min(best.dollars, cut_bound)
    return Outcome(best.path.plan(), best.dollars, best.missing, exact, peak, lower)


def _cut(cuts: dict[int, float], k: int, dollars: float) -> None:
    cuts[k] = min(cuts.get(k, dollars), dollars)


def _floor(req: Request, row: Any) -> float:
    """What every schedule pays at ``req`` at least: its reply's output (the recorded reply, the same on
    every schedule), none of its input (an input price is never negative). An aborted request bills nothing."""
    if row.aborted:
        return 0.0
    price = req.price
    return 0.0 if price is None else float(price.dollars(input=0, cached=0, written=0, output=row.output))


def _actions_past_beam(fork: Fork, req: Request, acts: list[str],
                       anchors: Mapping[str, Mapping[int, str]]) -> list[str]:
    """What a state tries once the search is a beam. A state kept only because it follows an anchor
    takes only its anchors' actions (what keeps the bound at most theirs; its other branches would be
    cut by the next beam unless cheaper than the beam's own, which the free states explore). A free
    state tries every action, compactions only near the window, and always its anchors' actions."""
    followed = {anchors[a].get(req.index, "none") for a in fork.anchors}
    if fork.free:
        compacts = fork.rank < BEAM_COMPACTORS and _near_window(fork, req)
        return [a for a in acts if a in followed or "compact" not in a or compacts]
    return [a for a in acts if a in followed] or ["none"]


def _near_window(fork: Fork, req: Request) -> bool:
    lane = fork.lane.chains.get(req.chain)
    if lane is None or req.scale is None or req.window is None:
        return True
    threshold = req.window - lane.env.settings.reserve_tokens
    return req.scale.provider(lane.strategy.wire.tokens) > BEAM_COMPACT_FROM * threshold


def _beam(fronts: dict[_Key, list[Fork]], beam: int,
          cut: Callable[[float], None]) -> dict[_Key, list[Fork]]:
    """The ``beam`` cheapest states, and every state that still follows an anchor's schedule; ``cut`` is
    told the dollars of every state left out (for the lower bound)."""
    flat = [(f.dollars, f.missing, n, key, f) for n, (key, front) in enumerate(fronts.items()) for f in front]
    flat.sort(key=lambda x: (x[0], x[1], x[2]))
    out: dict[_Key, list[Fork]] = {}
    for rank, (_, _, _, key, f) in enumerate(flat):
        if rank < beam or f.anchors:
            f.free, f.rank = rank < beam, rank
            out.setdefault(key, []).append(f)
        else:
            cut(f.dollars)
    return out


def used_counts(runner: Any, requests: Sequence[Request]) -> tuple[int, ...]:
    """Terms each recorded reply used (the recall measure's denominator, per request)."""
    collector = RecallCollector(runner.session, requests, facts=False)
    return tuple(len(collector.used(r)) for r in requests)


def max_missing(used_total: int, min_recall: float) -> int:
    """The most terms a schedule may lack and still meet ``min_recall`` as the verdict reads it
    (the recall rounded to 6 decimals, as ``StrategyRecall.recall`` rounds it)."""
    if not used_total:
        return 0
    m = max(0, int((1 - min_recall) * used_total) + 2)
    while m >= 0 and round(1 - m / used_total, 6) < min_recall:
        m -= 1
    return m


def plan_dict(plan: Sequence[tuple[int, str]]) -> dict[int, str]:
    return dict(plan)


__all__ = ["Choice", "Fork", "Outcome", "search", "used_counts", "max_missing", "plan_dict", "Any"]
