"""Context recall: the share of what the recorded replies used that a strategy's context still holds.

**Definition.** At request k the model wrote a reply (the recorded assistant
message: its text and its tool calls' argument values). Its *distinctive terms*
are paths, identifiers, numbers and quoted literals (``pruner.replay.terms``
says exactly which, and why). The *used terms* of request k are those that also
occur in the context ``as_recorded`` sent at k (what the model really saw). A
strategy's context at k *holds* a term when one of the messages it sends there
holds it (placeholders and summaries count: they are sent). Its **context
recall** is::

    sum over k of |used(k) held by the strategy's context at k|  /  sum over k of |used(k)|

so ``as_recorded`` has recall 1.0 by construction, and a strategy whose context
is a superset of another's at every request never has less. A term the strategy
lacks is a *loss*: it names the newest message of the recorded context that held
it (the *source*) and the request at which the strategy's context stopped holding
that message (``left_at``; None when it never sent it), so a person can check the
measure one example at a time. Terms are not weighted by rarity: a term common in
the session is rarely lost (some copy is still in the context), so it adds to the
denominator and not to the losses; weighting would make the figure harder to check
by hand without changing which strategy loses what.

**Compaction quality.** For every compaction (a summary entering a context), the
*candidates* of each later request until the next compaction are the reply's
distinctive terms that the replaced history held (the messages that left the
context then, and the previous summary) and that nothing else in the context
holds; the summary's recall is the share of candidates the summary holds. The
agent's own recorded summaries are scored the same way in the recording's
context, beside the offline summariser's summary of the same history cut to the
same number of tokens.

**Limits.** It is a proxy: a term can reach a reply from elsewhere (the model's
knowledge, the system prompt or tool definitions the transcript does not hold),
and a model that lost a term may fetch it again. A loss means the strategy took
away something the model went on to use, not that the reply would have failed.

**Cost.** Each message's term set is computed once, content-addressed; each
strategy's context is followed from what changed since its previous request;
per request only the reply's used terms are looked up, through the postings of
each term. ``replay`` computes it as it runs (``Replay.recall``);
``context_recall(replay)`` works from the runs' snapshots otherwise.

>>> from pruner.model import Message, Session
>>> from pruner.replay import replay
>>> s = Session.of([Message(id="u", role="user", content="Fix src/app.py: it raises KeyError_42"),
...                 Message(id="a", role="assistant", content="Opening src/app.py for KeyError_42")])
>>> r = replay(s, ["as_recorded", "full"])
>>> r.runs["full"].totals["context_recall"], r.runs["full"].totals["used_terms"]
(1.0, 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from ..compaction.cut import context_window
from ..model import Message, Session
from .facts import CopyBook, FactBook, squash
from .recall_context import SummaryRecall, _ChainIndex, _Holder, is_summary

__all__ = ["Loss", "RecallCollector", "RecallReport", "StrategyRecall", "SummaryRecall", "context_recall",
           "is_summary", "measures"]

if TYPE_CHECKING:  # pragma: no cover
    from .requests import Request
    from .rows import StrategyRun
    from .wire import Wire


class ReplayedContexts(Protocol):
    """What ``context_recall`` reads of a ``Replay``: named by shape, because ``pruner.replay.engine``
    imports this module to measure recall as it runs."""

    @property
    def session(self) -> Session: ...

    @property
    def requests(self) -> tuple[Request, ...]: ...

    @property
    def runs(self) -> Mapping[str, StrategyRun]: ...

    def context(self, strategy: str, request: int) -> list[Message]: ...

#: Losses kept per request and strategy (the counts are always exact).
LOSSES_PER_REQUEST = 50


@dataclass(frozen=True)
class Loss:
    """A used term a strategy's context lacked at one request, and where it was lost from."""

    request: int
    term: str
    source: int | None  # position (in its chain's messages) of the newest recorded-context message holding it
    source_id: str
    left_at: int | None  # request at which the strategy stopped sending the source (None: never sent it)
    placeholder: str | None = None  # what the strategy sent in the source's place (a tool result's placeholder)
    chain: str = "main"  # whose messages ``source`` indexes (the main conversation or a subagent's)


@dataclass(frozen=True)
class StrategyRecall:
    name: str
    used: int
    missing: int
    per_request: tuple[int, ...]  # terms missing at each request
    losses: tuple[Loss, ...]
    compactions: tuple[SummaryRecall, ...] = ()
    # Generated workloads: (request, fact key, missing from the context, recall < 1 at that request) for
    # every fact a reply refers to with a REF: tag (the ground truth recall is validated against).
    fact_checks: tuple[tuple[int, str, bool, bool, str], ...] = ()  # + what still held the key
    by_chain: tuple[tuple[str, int, int], ...] = ()  # (chain, used terms, terms missing), main first
    # Generated workloads: (request, item, missing from the context, recall < 1 at that request, the copied
    # text holds a distinctive term) for every item a tool call copies (``pruner.replay.facts.CopyBook``):
    # what the reply reuses beyond facts.
    copy_checks: tuple[tuple[int, str, bool, bool, bool], ...] = ()

    def chain_recall(self) -> dict[str, float]:
        return {c: round(1 - m / u, 6) if u else 1.0 for c, u, m in self.by_chain}

    @property
    def recall(self) -> float:
        return round(1 - self.missing / self.used, 6) if self.used else 1.0


@dataclass(frozen=True)
class RecallReport:
    used_per_request: tuple[int, ...]
    strategies: dict[str, StrategyRecall]
    recorded_compactions: tuple[SummaryRecall, ...] = ()

    def request_recall(self, strategy: str, request: int) -> float:
        used = self.used_per_request[request]
        return round(1 - self.strategies[strategy].per_request[request] / used, 4) if used else 1.0


# -- the collector: fed by the replay as it runs, or from snapshots afterwards ----------------------------


class RecallCollector:
    """Follows the recording's context and each strategy's, request by request."""

    def __init__(self, session: Session, requests: Sequence["Request"], *,
                 offline_budget: Callable[[Sequence[Message], Message], tuple[str, int, int]] | None = None,
                 facts: bool = True):
        self.session = session
        self.requests = requests
        self._indices: dict[str, _ChainIndex] = {}
        # chain -> (holder, [context list, next position])
        self._recorded: dict[str, tuple[_Holder, list[Any]]] = {}
        self._used: list[tuple[str, ...] | None] = [None] * len(requests)
        self._holders: dict[tuple[str, str], _Holder] = {}
        self._missing: dict[str, list[int]] = {}
        self._losses: dict[str, list[Loss]] = {}
        self._offline = offline_budget
        self._facts = _reply_facts(session) if facts else None
        self._fact_checks: dict[str, list[tuple[int, str, bool, bool, str]]] = {}
        self._copies = CopyBook.of(session) if facts else None
        self._copy_checks: dict[str, list[tuple[int, str, bool, bool, bool]]] = {}
        self._by_chain: dict[str, dict[str, list[int]]] = {}

    # -- chains (requests of subagents live in their own chain's messages) -----------------------------

    def _chain(self, req: "Request") -> str:
        return getattr(req, "chain", None) or "main"

    def _session_of(self, chain: str) -> Session:
        if chain != "main":
            for cid, sub in self.session.chains:
                if cid == chain:
                    return sub
        return self.session

    def index(self, chain: str) -> _ChainIndex:
        ix = self._indices.get(chain)
        if ix is None:
            ix = self._indices[chain] = _ChainIndex(self._session_of(chain).messages)
        return ix

    # -- the recording ----------------------------------------------------------------------------------

    def _recorded_at(self, req: "Request") -> _Holder:
        """The recording's context at ``req`` (``as_recorded``: the conversation, following recorded
        compactions), advanced from the previous request of the same chain."""
        chain = self._chain(req)
        entry = self._recorded.get(chain)
        if entry is None:
            entry = self._recorded[chain] = (_Holder(self.index(chain)), [[], 0])
        holder, state = entry
        context, done = state
        msgs = holder.index.messages
        if req.position > done:
            new = msgs[done:req.position]
            summaries = [m for m in new if is_summary(m)]
            if summaries:
                prefix = self._session_of(chain).with_messages(msgs[:req.position])
                context = state[0] = [msgs[i] for i in context_window(prefix).context()]
                holder.update(req.index, context, {})
                if self._offline is not None:
                    self._add_offline(holder, msgs, summaries[-1])
            else:
                was = len(context)
                context.extend(new)
                holder.update(req.index, context, {}, was)
            state[1] = req.position
        return holder

    def _add_offline(self, holder: _Holder, msgs: Sequence[Message], summary: Message) -> None:
        c, offline = holder.open, self._offline
        if c is None or offline is None or c.summary_key != id(summary):
            return
        replaced = [msgs[p] for p in sorted(c.replaced) if not is_summary(msgs[p])]
        text, offline_tokens, summary_tokens = offline(replaced, summary)
        c.offline_terms = holder.index.text_terms(text)
        c.offline_tokens, c.summary_tokens = offline_tokens, summary_tokens

    def used(self, req: "Request") -> tuple[str, ...]:
        terms = self._used[req.index]
        if terms is None:
            holder = self._recorded_at(req)
            reply = holder.index.replies.get(req.position, ())
            terms = self._used[req.index] = tuple(t for t in reply if holder.held(t, req.position))
            holder.score_summary(reply, req.position)
        return terms

    # -- strategies -------------------------------------------------------------------------------------

    def observe(self, name: str, req: "Request", messages: Sequence[Message] | None,
                substitutes: Mapping[str, str], changed_at: int | None = None, *,
                changes: tuple[Sequence[Message], Sequence[Message]] | None = None) -> None:
        """Strategy ``name``'s context at ``req``: ``messages`` as sent (``substitutes`` beside them), or
        how it changed since its previous request (``changes``: the messages that left, that entered)."""
        used = self.used(req)
        chain = self._chain(req)
        key = (name, chain)
        holder = self._holders.get(key)
        if holder is None:
            holder = self._holders[key] = _Holder(self.index(chain))
        if changes is not None:
            holder.apply(req.index, changes[0], changes[1], substitutes)
        elif messages is not None:
            holder.update(req.index, messages, substitutes, changed_at)
        else:
            raise TypeError("observe() needs the messages sent or the changes")
        missing = self._missing.setdefault(name, [])
        position = req.position
        lost = [t for t in used if not holder.held(t, position)]
        missing.append(len(lost))
        counts = self._by_chain.setdefault(name, {}).setdefault(chain, [0, 0])
        counts[0] += len(used)
        counts[1] += len(lost)
        if lost:
            recorded = self._recorded_at(req)
            ix = holder.index
            losses = self._losses.setdefault(name, [])
            for t in lost[:LOSSES_PER_REQUEST]:
                src = recorded.source(t, position)
                placeholder = None
                if src is not None:
                    m = ix.messages[src]
                    if m.tool_call_id is not None:
                        placeholder = holder.subs.get(m.tool_call_id)
                losses.append(Loss(req.index, t, src, ix.messages[src].id if src is not None else "",
                                   holder.left.get(src) if src is not None else None, placeholder, chain))
        if holder.open is not None:
            holder.score_summary(holder.index.replies.get(position, ()), position)
        if self._facts is not None and chain == "main":
            self._check_facts(name, req, holder, bool(lost))
        if self._copies is not None and chain == "main":
            self._check_copies(name, req, holder, bool(lost))

    def _check_copies(self, name: str, req: "Request", holder: _Holder, lost: bool) -> None:
        """Whether the context still shows what the reply's calls copy: a message that shows it, sent (a
        result left out for a placeholder is not sent), or a compaction summary quoting the copied text."""
        if self._copies is None:
            return
        needs = self._copies.needs.get(req.position)
        if not needs:
            return
        sent = holder.sent
        checks = self._copy_checks.setdefault(name, [])
        summaries: list[str] | None = None
        for item, shown_at, text, visible in needs:
            kept = any(sent[q] for q in shown_at)
            if not kept and text:
                if summaries is None:
                    summaries = [squash(e[0].content) for e in holder.extras.values() if is_summary(e[0])]
                kept = any(text in s for s in summaries)
            checks.append((req.index, item, not kept, lost, visible))

    def _check_facts(self, name: str, req: "Request", holder: _Holder, lost: bool) -> None:
        if self._facts is None:  # the caller checks: no fact book, no facts to check
            return
        book, ids = self._facts
        keys = ids.get(req.position)
        if not keys:
            return
        index = holder.index
        for key in keys:
            carriers = book.current_carriers(key, req.position)
            if carriers is None:
                continue
            pos = index.pos_of_id
            kept = any(holder.sent[pos[c]] for c in carriers if c in pos)
            if not kept:
                sentences = [book.statements.get((c, key)) for c in carriers]
                summaries = [squash(e[0].content) for e in holder.extras.values() if is_summary(e[0])]
                kept = any(s and s in text for s in sentences for text in summaries)
            why = "" if kept or lost else self._still_held_by(holder, key, self.used(req), req.position)
            self._fact_checks.setdefault(name, []).append((req.index, key, not kept, lost, why))

    @staticmethod
    def _still_held_by(holder: _Holder, key: str, used: Sequence[str], before: int) -> str:
        """Why a missing fact showed no loss: what in the context still holds the reply's terms (its value
        first): an older version's carrier, a summary, another fact's message spelling the same value, a
        message referring to the fact; or "value not a term" when the reply's value is no distinctive term."""
        values = [t for t in used if t != key]
        if not values:
            return "value not a term"
        kinds = set()
        for term in values:
            if holder.extra_terms.get(term):
                kinds.add("summary")
            for p in holder.index.holders(term, before):
                if holder.sent[p]:
                    m = holder.index.messages[p]
                    carries = [str(c) for c in (m.metadata or {}).get("carries", ())]
                    kinds.add("older version" if any(c.startswith(f"fact:{key}@") for c in carries)
                              else "summary" if is_summary(m)
                              else "another fact" if any(c.startswith("fact:") for c in carries) else "other message")
        return next((k for k in ("older version", "summary", "another fact", "other message") if k in kinds),
                    "other message")

    def observer(self, name: str) -> Callable[[Any, Any], None]:
        """What the replay calls after each strategy step: ``observer(request, wire)``."""
        def observe(req: Request, wire: Wire) -> None:
            if not wire.track_ids:
                self.observe(name, req, wire.messages, wire.substitutes, wire.changed_at)
                return
            # The wire lists what left and entered since its last mark() (after every request).
            self.observe(name, req, None, wire.substitutes, changes=(wire.left, wire.entered))
        return observe

    def report(self, names: Sequence[str]) -> RecallReport:
        used = tuple(len(u) if u is not None else 0 for u in self._used)
        total = sum(used)
        strategies = {}
        for name in names:
            per = tuple(self._missing.get(name, ()))
            comps = tuple(c for (n, _), h in sorted(self._holders.items()) if n == name for c in h.compactions())
            chains = self._by_chain.get(name, {})
            strategies[name] = StrategyRecall(name, total, sum(per), per, tuple(self._losses.get(name, ())), comps,
                                              tuple(self._fact_checks.get(name, ())),
                                              tuple((c, u, m) for c, (u, m) in chains.items()),
                                              tuple(self._copy_checks.get(name, ())))
        recorded = tuple(c for _, (h, _) in sorted(self._recorded.items()) for c in h.compactions())
        return RecallReport(used, strategies, recorded)


def _reply_facts(session: Session) -> tuple[FactBook, dict[int, tuple[str, ...]]] | None:
    """Generated workloads: the fact book and, per reply position, the facts it refers to with a tag."""
    book = FactBook.of(session)
    if book is None:
        return None
    ids = {p: tuple(str(k) for k in (m.metadata or {}).get("uses", ()))
           for p, m in enumerate(session.messages) if m.role == "assistant" and (m.metadata or {}).get("uses")}
    return (book, ids) if ids else None


def measures(s: StrategyRecall) -> dict[str, Any]:
    """What ``StrategyRun.totals`` carries about recall."""
    return {"context_recall": s.recall, "used_terms": s.used, "terms_missing": s.missing,
            "context_recall_by_chain": {c: {"used_terms": u, "terms_missing": m, "context_recall": r}
                                        for (c, u, m), r in zip(s.by_chain, s.chain_recall().values())},
            "summary_recall": [c.as_dict() for c in s.compactions]}


def context_recall(replay: ReplayedContexts) -> RecallReport:
    """The replay's recall report: the one computed while it ran, else from its snapshots (or its contexts)."""
    recorded: RecallReport | None = getattr(replay, "recall", None)
    if recorded is not None:
        return recorded
    collector = RecallCollector(replay.session, replay.requests)
    for req in replay.requests:
        for name, run in replay.runs.items():
            messages: Sequence[Message]
            if run.snapshots is not None:
                messages, subs = run.snapshots[req.index]
            else:
                messages, subs = replay.context(name, req.index), {}
            collector.observe(name, req, messages, subs)
    return collector.report(list(replay.runs))
