"""Hypothesis strategies: sessions built to hit every rule and their edge cases.

Small pools of tool names, arguments, documents and keys make repeats,
duplicates, near-duplicates, same-turn re-runs and dependency chains common.
Ids are drawn in shuffled order so they sort differently from their position
(``call9`` before ``call10`` and the like).
"""

from __future__ import annotations

from hypothesis import strategies as st

from pruner.model import Message, Session, ToolCall

TOOLS = ("search", "sql", "read_file", "write_file", "edit", "calculator")
PATHS = ("a.py", "b.md", "src/c.py")
QUERIES = ("refund policy", "shipping", "returns", "SELECT 1")
KEYS = ("fmt", "user.name", "order-7", "k:1")
DOCS = (
    "Refunds are accepted within thirty days of delivery when the item is unworn and the tags are attached.",
    "Shipping inside the country takes five business days and costs six dollars for non members only.",
    "Our warehouse in Leeds dispatches parcels twice a day, at ten in the morning and four in the afternoon.",
    "short text",
)
VARIANTS = ("", "## Cached copy\n", "  ", "PREFIX ")


@st.composite
def doc_text(draw) -> str:
    base = draw(st.sampled_from(DOCS))
    how = draw(st.integers(0, 4))
    if how == 1:
        base = draw(st.sampled_from(VARIANTS)) + base
    elif how == 2:
        words = base.split()
        words[draw(st.integers(0, len(words) - 1))] = "changed"
        base = " ".join(words)
    elif how == 3:
        words = base.split()
        base = " ".join(words[: max(1, len(words) * 3 // 4)])
    if draw(st.integers(0, 5)) == 0:
        base += f" DEFINE:{draw(st.sampled_from(KEYS))}"
    if draw(st.integers(0, 7)) == 0:
        base += f" REF:{draw(st.sampled_from(KEYS))}"
    return base


def _args(draw, tool: str):
    if tool in ("read_file", "write_file", "edit"):
        args = {"path": draw(st.sampled_from(PATHS))}
        if tool == "read_file" and draw(st.booleans()) and draw(st.booleans()):
            args["offset"] = draw(st.integers(1, 3))
        return args
    if tool == "calculator":
        return {"expr": draw(st.sampled_from(("1+1", "2*3")))}
    return {"q": draw(st.sampled_from(QUERIES))}


@st.composite
def sessions(draw, max_turns: int = 8, min_turns: int = 1) -> Session:
    """A valid session with tool calls, results, docs, TTLs and dependency keys."""
    events: list[tuple] = []
    if draw(st.booleans()):
        events.append(("system", "You are a careful assistant.", {}))
    for _ in range(draw(st.integers(min_turns, max_turns))):
        text = draw(st.sampled_from(("hello", "please check again", "what did I say?")))
        kw: dict = {}
        marker = draw(st.integers(0, 5))
        if marker == 0:
            text += f" DEFINE:{draw(st.sampled_from(KEYS))}"
        elif marker == 1:
            text += f" REF:{draw(st.sampled_from(KEYS))}"
        elif marker == 2:
            kw["refs"] = (draw(st.sampled_from(KEYS)),)
        events.append(("user", text, kw))
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(("calls", "doc", "assistant")))
            if kind == "calls":
                n_calls = draw(st.integers(1, 2))
                calls = []
                for _ in range(n_calls):
                    tool = draw(st.sampled_from(TOOLS))
                    calls.append((tool, _args(draw, tool)))
                # sometimes the same call twice in one turn (a same-turn re-run)
                if draw(st.integers(0, 4)) == 0:
                    calls.append(calls[0])
                events.append(("calls", calls, {}))
                for _ in calls:
                    rkw: dict = {}
                    if draw(st.integers(0, 6)) == 0:
                        rkw["expires_after_turn"] = draw(st.integers(0, max_turns))
                    if draw(st.integers(0, 6)) == 0:
                        rkw["defines"] = (draw(st.sampled_from(KEYS)),)
                    events.append(("result", draw(doc_text()), rkw))
            elif kind == "doc":
                dkw: dict = {}
                if draw(st.integers(0, 6)) == 0:
                    dkw["expires_after_turn"] = draw(st.integers(0, max_turns))
                events.append(("retrieved_doc", draw(doc_text()), dkw))
            else:
                events.append(("assistant", draw(st.sampled_from(("ok", "done REF:fmt", "noted"))), {}))

    n_ids = len(events) + sum(len(e[1]) for e in events if e[0] == "calls")
    ids = draw(st.permutations(range(n_ids)))
    id_iter = iter(ids)
    messages: list[Message] = []
    pending: list[tuple[str, str]] = []  # (call id, tool) awaiting results, in order
    for kind, payload, kw in events:
        if kind == "calls":
            calls = tuple(ToolCall(id=f"call{next(id_iter)}", name=t, arguments=a) for t, a in payload)
            messages.append(Message(id=f"m{next(id_iter)}", role="assistant", content="", tool_calls=calls))
            pending.extend((c.id, c.name) for c in calls)
        elif kind == "result":
            cid, tool = pending.pop(0)
            messages.append(Message(id=f"m{next(id_iter)}", role="tool", content=payload,
                                    tool_call_id=cid, tool_name=tool, **kw))
        else:
            messages.append(Message(id=f"m{next(id_iter)}", role=kind, content=payload, **kw))
    return Session.of(messages, name="hypothesis")
