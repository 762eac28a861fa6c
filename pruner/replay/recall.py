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

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import compress, count
from operator import is_not
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..compaction.cut import SUMMARY_KINDS, context_window
from ..model import Message, Session
from .terms import context_terms, message_text, reply_terms

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay
    from .requests import Request

#: Losses kept per request and strategy (the counts are always exact).
LOSSES_PER_REQUEST = 50


def is_summary(m: Message) -> bool:
    if m.role == "summary":
        return True
    md = m.metadata
    return bool(md) and isinstance(md, Mapping) and md.get("kind") in SUMMARY_KINDS


@dataclass(frozen=True)
class Loss:
    """A used term a strategy's context lacked at one request, and where it was lost from."""

    request: int
    term: str
    source: int | None  # position (in its chain's messages) of the newest recorded-context message holding it
    source_id: str
    left_at: int | None  # request at which the strategy stopped sending the source (None: never sent it)
    placeholder: str | None = None  # what the strategy sent in the source's place (a tool result's placeholder)


@dataclass(frozen=True)
class SummaryRecall:
    """One compaction's summary, scored on the replies after it (until the next compaction)."""

    request: int  # the first request whose context held the summary
    summary_id: str
    candidates: int  # reply terms only the replaced history held
    held: int  # of them, held by the summary
    summary_tokens: int | None = None
    offline_held: int | None = None  # recorded compactions: the offline summary of the same history, same length
    offline_tokens: int | None = None
    examples: tuple[str, ...] = ()  # candidate terms the summary lacks (first few)

    @property
    def recall(self) -> float | None:
        return round(self.held / self.candidates, 4) if self.candidates else None

    @property
    def offline_recall(self) -> float | None:
        if self.offline_held is None or not self.candidates:
            return None
        return round(self.offline_held / self.candidates, 4)

    def as_dict(self) -> dict[str, Any]:
        d = {"request": self.request, "summary_id": self.summary_id, "candidates": self.candidates,
             "held": self.held, "recall": self.recall, "summary_tokens": self.summary_tokens,
             "missing_examples": list(self.examples)}
        if self.offline_held is not None:
            d.update(offline_held=self.offline_held, offline_recall=self.offline_recall,
                     offline_tokens=self.offline_tokens)
        return d


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


# -- the index: term sets per message, postings per term -----------------------------------------


class _ChainIndex:
    """One chain's messages: each reply's distinctive terms, each message's terms, postings per term."""

    def __init__(self, messages: Sequence[Message]):
        self.messages = messages
        replies: dict[int, tuple[str, ...]] = {}
        vocabulary: set[str] = set()
        for p, m in enumerate(messages):
            if m.role == "assistant":
                terms = reply_terms(message_text(m))
                replies[p] = tuple(sorted(terms))
                vocabulary |= terms
        self.replies = replies
        self.vocabulary = frozenset(vocabulary)
        self._by_text: dict[str, frozenset[str]] = {}
        self.pos_of = {id(m): p for p, m in enumerate(messages)}
        self.summaries = frozenset(p for p, m in enumerate(messages) if is_summary(m))
        self.pos_of_id = {m.id: p for p, m in enumerate(messages)}
        self.call_owner = {c.id: p for p, m in enumerate(messages) for c in m.tool_calls}
        self.terms = [self.text_terms(message_text(m)) for m in messages]
        postings: dict[str, list[int]] = {}
        for p, terms in enumerate(self.terms):
            for t in terms:
                postings.setdefault(t, []).append(p)
        self.postings = postings

    def text_terms(self, text: str) -> frozenset[str]:
        terms = self._by_text.get(text)
        if terms is None:
            terms = self._by_text[text] = frozenset(context_terms(text, self.vocabulary))
        return terms

    def holders(self, term: str, before: int) -> list[int]:
        """Positions before ``before`` whose message holds ``term``, oldest first."""
        rows = self.postings.get(term)
        if not rows:
            return []
        return rows[:bisect_left(rows, before)]


@dataclass
class _Open:
    """A compaction whose summary is in the context: what it replaced, and its score so far."""

    request: int
    summary_key: int
    summary_id: str
    summary_terms: frozenset[str]
    replaced: set[int]
    replaced_terms: set[str]  # terms of replaced messages that are not session messages (an earlier summary)
    summary_tokens: int | None = None
    offline_terms: frozenset[str] | None = None
    offline_tokens: int | None = None
    candidates: int = 0
    held: int = 0
    offline_held: int = 0
    examples: list[str] = field(default_factory=list)

    def close(self) -> SummaryRecall:
        return SummaryRecall(self.request, self.summary_id, self.candidates, self.held, self.summary_tokens,
                             self.offline_held if self.offline_terms is not None else None, self.offline_tokens,
                             tuple(self.examples))


class _Holder:
    """One context (a strategy's, or the recording's) followed request by request from what changed."""

    def __init__(self, index: _ChainIndex):
        self.index = index
        self.sent = [0] * len(index.messages)  # copies of each session message in the context
        self.mirror: list[Message] = []
        self.extras: dict[int, list] = {}  # id(message) -> [message, terms, copies] (not session messages)
        self.extra_terms: dict[str, int] = {}
        self.subs: dict[str, str] = {}
        self.sub_terms: dict[str, set[str]] = {}  # term -> call ids whose placeholder holds it
        self.left: dict[int, int] = {}  # position -> request at which it last left
        self.open: _Open | None = None
        self.closed: list[SummaryRecall] = []

    # -- following the context --------------------------------------------------------------------

    def _extra(self, m: Message, sign: int) -> None:
        key = id(m)
        entry = self.extras.get(key)
        if entry is None:
            if sign < 0:
                return
            entry = self.extras[key] = [m, self.index.text_terms(message_text(m)), 0]
        entry[2] += sign
        if (sign > 0 and entry[2] == 1) or (sign < 0 and entry[2] == 0):
            counts = self.extra_terms
            for t in entry[1]:
                n = counts.get(t, 0) + sign
                if n:
                    counts[t] = n
                else:
                    counts.pop(t, None)
        if entry[2] <= 0:
            del self.extras[key]

    def update(self, request: int, messages: Sequence[Message], substitutes: Mapping[str, str],
               changed_at: int | None = None) -> None:
        mirror = self.mirror
        c = min(len(mirror), len(messages)) if changed_at is None else min(changed_at, len(mirror), len(messages))
        if c and mirror[c - 1] is not messages[c - 1]:
            c = 0  # the hint does not hold: find the first difference
        if changed_at is None or c == 0:
            c = next(compress(count(), map(is_not, mirror, messages)), min(len(mirror), len(messages)))
        gone, came = self._tails(mirror[c:], messages[c:])
        del mirror[c:]
        mirror.extend(messages[c:])
        self.apply(request, gone, came, substitutes)

    def apply(self, request: int, gone: Sequence[Message], came: Sequence[Message],
              substitutes: Mapping[str, str]) -> None:
        """The context changed: ``gone`` left it, ``came`` entered it (in that order), and it sends
        ``substitutes`` (call id -> placeholder text)."""
        sent, pos_of, messages = self.sent, self.index.pos_of, self.index.messages
        summaries = self.index.summaries
        left, entered_summary = [], None
        for m in gone:
            p = pos_of.get(id(m))
            if p is None or messages[p] is not m:
                self._extra(m, -1)
            else:
                sent[p] -= 1
                if not sent[p]:
                    left.append(p)
        for m in came:
            p = pos_of.get(id(m))
            if p is None or messages[p] is not m:
                new = id(m) not in self.extras
                self._extra(m, 1)
                if new and is_summary(m):
                    entered_summary = m
            else:
                if summaries and p in summaries and not sent[p] and entered_summary is None:
                    entered_summary = m
                sent[p] += 1
        gone_for_good = [p for p in left if not sent[p]]
        for p in gone_for_good:
            self.left[p] = request
        if substitutes != self.subs:
            self._update_subs(substitutes)
        if entered_summary is not None and (gone_for_good or gone):
            self._compaction(request, entered_summary, gone_for_good, gone)  # a summary replaced something

    def _tails(self, old: list[Message], new: Sequence[Message]) -> tuple[list[Message], list[Message]]:
        """What left and what came between two context tails: the messages both still send form one
        block ending at the old tail's last message (contexts keep session order), found at C speed;
        only the parts outside it are walked."""
        if not old:
            return [], list(new)
        last = old[-1]
        pos_of = self.index.pos_of
        p = pos_of.get(id(last))
        if p is not None and new:
            j = bisect_left(new, p, key=lambda m: pos_of.get(id(m), -1))
            if j < len(new) and new[j] is last:
                head = new[:j + 1]
                common = next(compress(count(), map(is_not, reversed(old), reversed(head))), min(len(old), j + 1))
                return old[:len(old) - common], [*head[:j + 1 - common], *new[j + 1:]]
        return old, list(new)

    def _update_subs(self, substitutes: Mapping[str, str]) -> None:
        old = self.subs
        index, sub_terms = self.index, self.sub_terms
        changed = {cid for cid, _ in old.items() ^ substitutes.items()}  # C speed: set ops on the items
        for cid in changed:
            text = old.get(cid)
            if text is not None:
                for t in index.text_terms(text):
                    holders = sub_terms.get(t)
                    if holders is not None:
                        holders.discard(cid)
                        if not holders:
                            del sub_terms[t]
        for cid in changed:
            text = substitutes.get(cid)
            if text is not None:
                old[cid] = text
                for t in index.text_terms(text):
                    sub_terms.setdefault(t, set()).add(cid)
            else:
                old.pop(cid, None)

    def _compaction(self, request: int, summary: Message, left: list[int], gone: list[Message]) -> None:
        if self.open is not None:
            self.closed.append(self.open.close())
        replaced_terms: set[str] = set()
        pos_of = self.index.pos_of
        for m in gone:
            if pos_of.get(id(m)) is None and m is not summary:
                replaced_terms |= self.index.text_terms(message_text(m))
        if self.open is not None and self.open.summary_key not in self.extras and \
                not self._session_sent(self.open.summary_key):
            replaced_terms |= self.open.summary_terms  # a merged summary replaces the previous one
        self.open = _Open(request, id(summary), summary.id, self.index.text_terms(message_text(summary)),
                          set(left), replaced_terms)

    def _session_sent(self, key: int) -> bool:
        p = self.index.pos_of.get(key)
        return p is not None and self.sent[p] > 0

    # -- reading --------------------------------------------------------------------------------------

    def held(self, term: str, before: int, *, exclude: int | None = None) -> bool:
        """Whether the context holds ``term`` (``exclude``: leaving one message out, by identity)."""
        n = self.extra_terms.get(term, 0)
        if n and exclude is not None:
            entry = self.extras.get(exclude)
            if entry is not None and term in entry[1]:
                n -= 1
        if n > 0:
            return True
        sent = self.sent
        skip = self.index.pos_of.get(exclude) if exclude is not None else None
        for p in reversed(self.index.holders(term, before)):
            if sent[p] and p != skip:
                return True
        cids = self.sub_terms.get(term)
        if cids:
            owner = self.index.call_owner
            return any(cid not in owner or sent[owner[cid]] for cid in cids)
        return False

    def source(self, term: str, before: int) -> int | None:
        """The newest message of this context holding ``term`` (None: only a message outside the session)."""
        sent = self.sent
        for p in reversed(self.index.holders(term, before)):
            if sent[p]:
                return p
        return None

    def score_summary(self, terms: Sequence[str], before: int) -> None:
        """Count the candidates of one request for the open compaction."""
        c = self.open
        if c is None:
            return
        index = self.index
        for t in terms:
            if not (t in c.replaced_terms or any(p in c.replaced for p in index.holders(t, before))):
                continue
            if self.held(t, before, exclude=c.summary_key):
                continue  # something else in the context holds it: not the summary's job
            c.candidates += 1
            if t in c.summary_terms:
                c.held += 1
            elif len(c.examples) < 10:
                c.examples.append(t)
            if c.offline_terms is not None and t in c.offline_terms:
                c.offline_held += 1

    def compactions(self) -> tuple[SummaryRecall, ...]:
        out = list(self.closed)
        if self.open is not None:
            out.append(self.open.close())
        return tuple(out)


# -- the collector: fed by the replay as it runs, or from snapshots afterwards ----------------------------


class RecallCollector:
    """Follows the recording's context and each strategy's, request by request."""

    def __init__(self, session: Session, requests: Sequence["Request"], *,
                 offline_budget: Callable[[Sequence[Message], Message], tuple[str, int, int]] | None = None,
                 facts: bool = True):
        self.session = session
        self.requests = requests
        self._indices: dict[str, _ChainIndex] = {}
        self._recorded: dict[str, tuple[_Holder, list]] = {}  # chain -> (holder, [context list, next position])
        self._used: list[tuple[str, ...] | None] = [None] * len(requests)
        self._holders: dict[tuple[str, str], _Holder] = {}
        self._missing: dict[str, list[int]] = {}
        self._losses: dict[str, list[Loss]] = {}
        self._offline = offline_budget
        self._facts = _reply_facts(session) if facts else None
        self._fact_checks: dict[str, list[tuple[int, str, bool, bool, str]]] = {}
        self._by_chain: dict[str, dict[str, list[int]]] = {}

    # -- chains (requests of subagents live in their own chain's messages) -----------------------------

    def _chain(self, req: "Request") -> str:
        return getattr(req, "chain", None) or "main"

    def _session_of(self, chain: str) -> Session:
        if chain != "main":
            for cid, sub in getattr(self.session, "chains", ()):
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
        c = holder.open
        if c is None or c.summary_key != id(summary):
            return
        replaced = [msgs[p] for p in sorted(c.replaced) if not is_summary(msgs[p])]
        text, offline_tokens, summary_tokens = self._offline(replaced, summary)
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
        else:
            holder.update(req.index, messages, substitutes, changed_at)
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
                                   holder.left.get(src) if src is not None else None, placeholder))
        if holder.open is not None:
            holder.score_summary(holder.index.replies.get(position, ()), position)
        if self._facts is not None and chain == "main":
            self._check_facts(name, req, holder, bool(lost))

    def _check_facts(self, name: str, req: "Request", holder: _Holder, lost: bool) -> None:
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
                summaries = [e[0].content for e in holder.extras.values() if is_summary(e[0])]
                kept = any(s and s in text for s in sentences for text in summaries)
            why = "" if kept or lost else self._still_held_by(holder, key, req.position)
            self._fact_checks.setdefault(name, []).append((req.index, key, not kept, lost, why))

    @staticmethod
    def _still_held_by(holder: _Holder, key: str, before: int) -> str:
        """Why a missing fact showed no loss: what in the context still holds its key (the reply writes
        the key, not the value): an older version's carrier, a summary, or a message referring to it."""
        if holder.extra_terms.get(key):
            return "summary"
        kinds = set()
        for p in holder.index.holders(key, before):
            if holder.sent[p]:
                m = holder.index.messages[p]
                carries = (m.metadata or {}).get("carries", ())
                kinds.add("older version" if any(str(c).startswith(f"fact:{key}@") for c in carries)
                          else "summary" if is_summary(m) else "reference")
        return next((k for k in ("older version", "summary", "reference") if k in kinds), "reference")

    def observer(self, name: str) -> Callable[[Any, Any], None]:
        """What the replay calls after each strategy step: ``observer(request, wire)``."""
        def observe(req, wire) -> None:
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
                                              tuple((c, u, m) for c, (u, m) in chains.items()))
        recorded = tuple(c for _, (h, _) in sorted(self._recorded.items()) for c in h.compactions())
        return RecallReport(used, strategies, recorded)


def _reply_facts(session: Session):
    """Generated workloads: the fact book and, per reply position, the facts it refers to with a tag."""
    from .facts import FactBook

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


def context_recall(replay: "Replay") -> RecallReport:
    """The replay's recall report: the one computed while it ran, else from its snapshots (or its contexts)."""
    if getattr(replay, "recall", None) is not None:
        return replay.recall
    collector = RecallCollector(replay.session, replay.requests)
    for req in replay.requests:
        for name, run in replay.runs.items():
            if run.snapshots is not None:
                messages, subs = run.snapshots[req.index]
            else:
                messages, subs = replay.context(name, req.index), {}
            collector.observe(name, req, messages, subs)
    return collector.report(list(replay.runs))
