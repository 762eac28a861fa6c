"""What fills the context: at each request, its tokens split by the kind of message that holds them.

Kinds, in the order they are listed (``KINDS``, then one ``tool: NAME`` per tool in first-use order):

* ``system``, ``user``, ``assistant`` (its text and its tool calls' arguments);
* ``file reads``: results of a call that reads a file (``pruner.analysis.fileops``: Read, read_file,
  ``str_replace_editor view``…), whatever the tool's name;
* ``tool: NAME``: every other tool result, per tool (the name of the call it answers);
* ``retrieved documents`` (role ``retrieved_doc``), ``summaries`` (a compaction's summary, recorded
  or a strategy's);
* ``placeholders``: what a strategy sent in place of a result it left out.

Tokens are pruner's own count (``TokenBook``: the message's text plus its calls' names and arguments),
so at every request the kinds add up to the strategy's ``RequestRow.tokens``. Two readings:

* ``recorded_composition(session, chain)``: the context the recording sent at each request of a chain
  (everything before the reply, following the compactions it records), without any replay: the
  Explorer's view;
* ``strategy_compositions(replay, names, chain)``: each strategy's context at each request of a chain,
  from the replay's snapshots, else by replaying those strategies once more.

>>> from pruner.model import Message, Session, ToolCall
>>> s = Session.of([Message(id="u", role="user", content="read it"),
...                 Message(id="a", role="assistant", content="", tool_calls=(ToolCall("c", "Read",
...                         {"file_path": "x.py"}),)),
...                 Message(id="t", role="tool", content="print(1)", tool_call_id="c"),
...                 Message(id="b", role="assistant", content="done")])
>>> c = recorded_composition(s)
>>> c.kinds, c.requests
(('user', 'assistant', 'file reads'), (0, 1))
>>> c.tokens[0][2], c.tokens[1][2] > 0
(0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from ..compaction.cut import context_window
from ..analysis.fileops import READ, file_operations
from ..model import MAIN_CHAIN, Message, Session, ToolCall
from ..tokens import DEFAULT_ENCODING
from .recall_context import is_summary
from .requests import Request, chain_requests
from .wire import TokenBook, Wire

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

SYSTEM, USER, ASSISTANT = "system", "user", "assistant"
FILE_READS, DOCUMENTS, SUMMARIES, PLACEHOLDERS = "file reads", "retrieved documents", "summaries", "placeholders"
TOOL_PREFIX = "tool: "
#: The kinds every context is split into, in display order (each tool's results go between
#: ``file reads`` and ``retrieved documents``, one ``tool: NAME`` per tool).
KINDS = (SYSTEM, USER, ASSISTANT, FILE_READS, DOCUMENTS, SUMMARIES, PLACEHOLDERS)


def call_index(messages: Iterable[Message]) -> dict[str, ToolCall]:
    """Call id -> the call, over a chain's messages (to name what each result answers)."""
    return {c.id: c for m in messages for c in m.tool_calls}


def kind_of(m: Message, calls: Mapping[str, ToolCall]) -> str:
    """The kind of context ``m`` is (see the module)."""
    md = m.metadata if isinstance(m.metadata, Mapping) else {}
    if md.get("kind") == "placeholder":
        return PLACEHOLDERS
    if is_summary(m):
        return SUMMARIES
    if m.role == "retrieved_doc":
        return DOCUMENTS
    if m.is_tool_result:
        call = calls.get(m.tool_call_id or "")
        if call is not None and any(op == READ for op, _ in file_operations(call)):
            return FILE_READS
        name = call.name if call is not None else (m.tool_name or "unknown")
        return TOOL_PREFIX + name
    return m.role if m.role in (SYSTEM, USER, ASSISTANT) else USER


@dataclass(frozen=True)
class Composition:
    """One context followed over a chain's requests: tokens per kind at each request."""

    strategy: str  # the strategy, or "recorded" for the recording read without a replay
    chain: str
    requests: tuple[int, ...]  # the request numbers (across the session: ``Request.index``)
    turns: tuple[int, ...]
    kinds: tuple[str, ...]  # the kinds that ever held a token, in display order
    tokens: tuple[tuple[int, ...], ...]  # per request, per kind

    def totals(self) -> tuple[int, ...]:
        return tuple(sum(row) for row in self.tokens)

    def at(self, i: int) -> dict[str, int]:
        """Tokens per kind at the ``i``-th request of this composition."""
        return dict(zip(self.kinds, self.tokens[i]))

    def final_shares(self) -> dict[str, float]:
        """The share of the context each kind holds at the last request (0.0 each when it is empty)."""
        if not self.tokens:
            return {}
        last = self.tokens[-1]
        total = sum(last)
        return {k: (n / total if total else 0.0) for k, n in zip(self.kinds, last)}

    def sent(self) -> dict[str, int]:
        """Tokens of each kind sent over every request (what the input is paid for)."""
        return {k: sum(row[i] for row in self.tokens) for i, k in enumerate(self.kinds)}


def _order(kinds: Iterable[str]) -> tuple[str, ...]:
    seen = list(dict.fromkeys(kinds))
    tools = [k for k in seen if k.startswith(TOOL_PREFIX)]
    head = [k for k in KINDS[:4] if k in seen]
    tail = [k for k in KINDS[4:] if k in seen]
    return tuple(head + tools + tail)


class _Counter:
    """Tokens per kind of one context, followed from what changed since its previous request."""

    def __init__(self, book: TokenBook, calls: Mapping[str, ToolCall]):
        self.book, self.calls = book, calls
        self.by_kind: dict[str, int] = {}
        self.first_seen: list[str] = []
        self.messages: Sequence[Message] = ()
        self.subs: dict[str, str] = {}
        self._kinds: dict[int, str] = {}

    def _add(self, kind: str, n: int) -> None:
        if kind not in self.by_kind:
            self.by_kind[kind] = 0
            self.first_seen.append(kind)
        self.by_kind[kind] += n

    def _kind(self, m: Message) -> str:
        k = self._kinds.get(id(m))
        if k is None:
            k = self._kinds[id(m)] = kind_of(m, self.calls)
        return k

    def follow(self, messages: Sequence[Message], subs: Mapping[str, str]) -> dict[str, int]:
        old = self.messages
        c = next(compress(count(), map(is_not, old, messages)), min(len(old), len(messages)))
        book = self.book
        for m in old[c:]:
            self._add(self._kind(m), -book.tokens(m))
        for m in messages[c:]:
            self._add(self._kind(m), book.tokens(m))
        self.messages = tuple(messages)
        if subs != self.subs:
            for cid, text in self.subs.items() ^ subs.items():  # C speed: what changed
                sign = 1 if subs.get(cid) == text else -1
                self._add(PLACEHOLDERS, sign * book.text(text))
            self.subs = dict(subs)
        return dict(self.by_kind)


def _composition(strategy: str, chain: str, steps: list[tuple[int, int, dict[str, int]]]) -> Composition:
    kinds = _order(k for _, _, row in steps for k, n in row.items() if n)
    return Composition(strategy, chain, tuple(s[0] for s in steps), tuple(s[1] for s in steps), kinds,
                       tuple(tuple(row.get(k, 0) for k in kinds) for _, _, row in steps))


def _chain_session(session: Session, chain: str) -> Session:
    for cid, s in session.chains:
        if cid == chain:
            return s
    raise KeyError(f"the session has no chain {chain!r}; its chains: {', '.join(c for c, _ in session.chains)}")


def recorded_composition(session: Session, chain: str = MAIN_CHAIN, *, encoding: str = DEFAULT_ENCODING,
                         book: TokenBook | None = None) -> Composition:
    """The recording's context at each request of ``chain``: every message before the reply, following
    the compactions the chain records (a summary replaces what it summarised, as ``as_recorded`` sends).
    Request numbers are the chain's own (``chain_requests``)."""
    conversation = _chain_session(session, chain)
    msgs = conversation.messages
    counter = _Counter(book or TokenBook(encoding), call_index(msgs))
    context: list[Message] = []
    done = 0
    steps = []
    for req in chain_requests(chain, conversation):
        new = msgs[done:req.position]
        if any(is_summary(m) for m in new):
            prefix = conversation.with_messages(msgs[:req.position])
            context = [msgs[i] for i in context_window(prefix).context()]
        else:
            context.extend(new)
        done = req.position
        steps.append((req.index, req.turn, counter.follow(context, {})))
    return _composition("recorded", chain, steps)


def strategy_compositions(replay: "Replay", names: Sequence[str] | None = None,
                          chain: str = MAIN_CHAIN) -> dict[str, Composition]:
    """Each strategy's context at each request of ``chain`` (default: every strategy replayed). From the
    replay's snapshots when it kept them, else by replaying those strategies once more (causal: each
    request's context is what the strategy sent there)."""
    names = list(replay.runs) if names is None else [n for n in names if n in replay.runs]
    conversation = _chain_session(replay.session, chain)
    book = TokenBook(replay.settings.prune.encoding)
    calls = call_index(conversation.messages)
    counters = {n: _Counter(book, calls) for n in names}
    steps: dict[str, list[tuple[int, int, dict[str, int]]]] = {n: [] for n in names}
    snapshotted = [n for n in names if replay.runs[n].snapshots is not None]
    for req in replay.requests:
        if req.chain != chain:
            continue
        for name in snapshotted:
            messages, subs = replay.runs[name].snapshots[req.index]  # type: ignore[index]
            steps[name].append((req.index, req.turn, counters[name].follow(messages, subs)))
    rest = [n for n in names if n not in snapshotted]
    if rest:
        from .engine import _Runner  # the replay's own runner: the same strategies, requests and views

        def observer(name: str) -> Callable[[Request, Wire], None]:
            def observe(req: Request, wire: Wire) -> None:
                if req.chain == chain:
                    steps[name].append((req.index, req.turn, counters[name].follow(wire.messages,
                                                                                    wire.substitutes)))
            return observe

        runner = _Runner(replay.session, replay.settings, replay.requests, replay.views,
                         summarizer=replay.summarizer)
        runner.run_all(rest, None, False, observe=observer)
    return {n: _composition(n, chain, steps[n]) for n in names}


def removed_by_kind(compositions: Mapping[str, Composition], reference: str) -> dict[str, dict[str, float | None]]:
    """strategy -> kind -> the share of ``reference``'s tokens of that kind, summed over the requests,
    that the strategy did not send (1.0: it removed all of them; negative: it sent more, a summary
    say); None where the reference sent none of that kind."""
    ref = compositions[reference].sent()
    out: dict[str, dict[str, float | None]] = {}
    for name, comp in compositions.items():
        if name == reference:
            continue
        sent = comp.sent()
        kinds = _order([*ref, *sent])
        out[name] = {k: (1 - sent.get(k, 0) / ref[k]) if ref.get(k) else None for k in kinds}
    return out
