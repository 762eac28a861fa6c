"""Turn-by-turn generation of a synthetic session, recording the world model as it goes.

Each turn: a user message (sometimes stating a fact, sometimes referring back
to one), the turn's retrieved documents, tool calls with their results, and the
assistant's reply (which, when it applies a fact stated earlier, quotes the fact's
value, as a real reply would). Generation never looks ahead, so the first N turns of a
longer session with the same seed are the N-turn session (only the ``required``
labels, which depend on the future, can differ).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence, TypeVar

from ...model import Message, Session, ToolCall, canonical_json
from . import text as T
from .params import WorkloadParams
from .values import USER_FACT_SLOTS, ValuePool
from .world import World

T_item = TypeVar("T_item")

GENERATOR_VERSION = "pruner.workloads/3"  # 3: unique fact values; a call records what it copies (``copies``)
# 2: a reply using a fact quotes its value and holds it

RECENT_WINDOW = 30  # re-retrievals and re-runs favour the recent past, like real sessions


class _Generator:
    def __init__(self, params: WorkloadParams, seed: int):
        self.p = params
        # A string seed is hashed with SHA-512 by random.Random: stable across runs,
        # machines and PYTHONHASHSEED values.
        self.rng = random.Random(f"pruner.workloads:{params.name}:{seed}")
        self.world = World()
        self.values = ValuePool()
        self.messages: list[Message] = []
        self.calls = 0
        self.fact_count = 0
        self.open_facts: list[str] = []
        self.opened: list[str] = []  # facts defined this turn: open from the next turn on
        self.fact_info: dict[str, dict[str, Any]] = {}  # key -> label, paraphrase, value, slot
        self.chunks: list[str] = []  # chunk ids in order of first retrieval
        self.chunk_text: dict[str, tuple[str, str]] = {}  # id -> (title, body)
        self.history: list[tuple[str, Any]] = []  # re-runnable calls in order: (tool, args)
        self.results: dict[str, dict[str, Any]] = {}  # call key -> last result state
        self.seen_args: dict[str, None] = {}  # "tool(args)" already used: new calls must differ
        self.files: dict[str, dict[str, Any]] = {}
        self.file_order: list[str] = []

    # ----- emitting -------------------------------------------------------------------
    def emit(self, role: str, content: str, *, tool_calls: Iterable[ToolCall] = (), tool_call_id: str | None = None,
             tool_name: str | None = None, **truth: Any) -> None:
        t = self.world.add(role, **truth)
        self.messages.append(Message(id=f"m{len(self.messages)}", role=role, content=content,
                                     tool_calls=tuple(tool_calls), tool_call_id=tool_call_id,
                                     tool_name=tool_name, metadata=t.as_metadata()))

    def pick(self, seq: Sequence[T_item]) -> T_item:
        """An element of ``seq``, usually one of the most recent."""
        if len(seq) > RECENT_WINDOW and self.rng.random() < 0.7:
            return seq[len(seq) - RECENT_WINDOW + self.rng.randrange(RECENT_WINDOW)]
        return seq[self.rng.randrange(len(seq))]

    # ----- facts ----------------------------------------------------------------------
    def new_fact_key(self, slot: str) -> str:
        self.fact_count += 1
        key = f"{slot}_{self.fact_count}"
        self.opened.append(key)
        return key

    def user_fact(self) -> tuple[str, tuple[str, int], str | None] | None:
        """A statement: a change of plan for an open user fact, or a new fact; each takes a value no
        statement of its slot used (``values``). None when no slot has a value left."""
        rng, values = self.rng, self.values
        user_open = [k for k in self.open_facts if self.fact_info[k]["source"] == "user"]
        if user_open and rng.random() < self.p.fact_update_rate:
            key = user_open[rng.randrange(len(user_open))]
            info = self.fact_info[key]
            value = values.take(rng, info["slot"])
            if value is not None:
                info["value"] = value
                statement = "Change of plan: " + info["template"].format(v=value)
                return f"{statement}. DEFINE:{key}", (f"fact:{key}", self.world.bump(f"fact:{key}")), None
        slots = [s for s in USER_FACT_SLOTS if values.left(s[0])]
        if not slots:
            return None
        slot, label, template, _, paraphrase = slots[rng.randrange(len(slots))]
        key = self.new_fact_key(slot)
        value = values.take(rng, slot)
        self.fact_info[key] = {"source": "user", "label": label, "paraphrase": paraphrase,
                               "template": template, "slot": slot, "value": value}
        return (f"{template.format(v=value)}. DEFINE:{key}",
                (f"fact:{key}", self.world.bump(f"fact:{key}")), key)

    def tool_fact(self, tool: str) -> tuple[str, str]:
        """A fact a new tool result defines: (line for the result, key)."""
        metric = f"{T.word(self.rng, T.ADJECTIVES)} {T.word(self.rng, T.NOUNS)} total"
        key = self.new_fact_key(tool)
        self.fact_info[key] = {"source": "tool", "label": f"{metric} figure",
                               "paraphrase": f"What was that {metric} figure from earlier? Reuse it.",
                               "metric": metric}
        return key, metric

    # ----- retrieval ------------------------------------------------------------------
    def new_chunk(self) -> str:
        rng = self.rng
        cid = f"kb/{T.word(rng, T.NOUNS)}-{T.word(rng, T.ADJECTIVES)}-{len(self.chunks) + 1}.md#{rng.randint(1, 9)}"
        title = cid.split("#")[0]
        self.chunk_text[cid] = (title, T.paragraph(rng, rng.randint(5, 7)))
        self.chunks.append(cid)
        self.world.bump(f"chunk:{cid}")
        return cid

    def retrieve(self) -> None:
        rng = self.rng
        variant = None
        if self.chunks and rng.random() < self.p.overlap_rate:
            cid = self.pick(self.chunks)
            variant = "exact"
            if rng.random() < self.p.near_duplicate_rate:
                variant = ("header", "whitespace", "changed_word", "subchunk")[rng.randrange(4)]
        else:
            cid = self.new_chunk()
        title, body = self.chunk_text[cid]
        header = f"[{title} · section {cid.split('#')[1]}]"
        item = (f"chunk:{cid}", 1)
        if variant == "header":
            content = f"Source: {title} (part {cid.split('#')[1]}, retrieved again)\n{body}"
        elif variant == "whitespace":
            content = f"{header}\n{T.variant_whitespace(rng, body)}"
        elif variant == "changed_word":
            content = f"{header}\n{T.variant_changed_word(rng, body)}"
        elif variant == "subchunk":
            content = f"{header}\n{T.variant_subchunk(rng, body)}"
            self.emit("retrieved_doc", content, partial=[item], variant=variant)
            return
        else:
            content = f"{header}\n{body}"
        self.emit("retrieved_doc", content, carries=[item], variant=variant)

    # ----- tools ----------------------------------------------------------------------
    def fresh(self, tool: str, make: Callable[[], Any]) -> Any:
        """Arguments for ``tool`` that no earlier call of it used."""
        while True:
            args = make()
            key = f"{tool}({canonical_json(args)})"
            if key not in self.seen_args:
                self.seen_args[key] = None
                return args

    def new_call(self) -> tuple[str, Any]:
        rng = self.rng
        family = self.p.tools[rng.randrange(len(self.p.tools))]
        if family == "filesystem":
            r = rng.random()
            if self.file_order and r < 0.45:
                return "edit_file", {"path": self.pick(self.file_order)}  # old/new filled in when run
            if self.file_order and r < 0.55:
                return "write_file", {"path": self.pick(self.file_order)}
            return "read_file", self.fresh("read_file", lambda: {
                "path": f"{('src', 'config', 'jobs', 'docs')[rng.randrange(4)]}/{T.word(rng, T.NOUNS)}_"
                        f"{rng.randint(1, 999)}.{('py', 'yaml', 'toml', 'md')[rng.randrange(4)]}"})
        if family == "fetch_source":
            unfetched = [c for c in self.chunks if f"fetch_source({canonical_json({'doc': c})})" not in self.seen_args]
            cid = self.pick(unfetched) if unfetched and rng.random() < 0.7 else self.new_chunk()
            args = {"doc": cid}
            self.seen_args[f"fetch_source({canonical_json(args)})"] = None
            return family, args
        makers = {
            "faq_lookup": lambda: {"topic": T.phrase(rng, 3)},
            "document_search": lambda: {"query": T.phrase(rng, 4)},
            "search": lambda: {"query": T.phrase(rng, 4), "top_k": rng.choice((3, 5))},
            "sql": lambda: {"query": f"SELECT {T.word(rng, T.NOUNS)}, SUM({T.word(rng, T.NOUNS)}) FROM "
                                     f"{T.word(rng, T.NOUNS)}s WHERE {T.word(rng, T.ADJECTIVES)} = "
                                     f"{rng.randint(1, 99)} GROUP BY 1"},
            "calculator": lambda: {"expression": f"{rng.randint(2, 9999)} * {rng.randint(2, 99)} + "
                                                 f"{rng.randint(1, 999)}"},
            "web_fetch": lambda: {"url": f"https://{T.word(rng, T.NOUNS)}.example.com/"
                                         f"{T.word(rng, T.ADJECTIVES)}/{rng.randint(1, 9999)}"},
        }
        return family, self.fresh(family, makers[family])

    def file_text(self, path: str) -> str:
        f = self.files[path]
        return f"# {path}\n" + "\n".join(f["lines"])

    def new_file(self, path: str) -> None:
        rng = self.rng
        lines = [f"{T.word(rng, T.NOUNS)}_{T.word(rng, T.ADJECTIVES)} = {rng.randint(0, 9999)}"
                 for _ in range(rng.randint(8, 16))]
        fact = None
        if rng.random() < self.p.file_fact_rate:
            key, metric = self.tool_fact("config")
            value = T.number(rng)
            self.fact_info[key]["label"] = f"{metric} setting"
            at = rng.randrange(len(lines))
            lines[at] = f"{metric.replace(' ', '_')} = {value}  # DEFINE:{key}"
            self.fact_info[key]["value"] = value
            fact = (key, at)
            self.world.bump(f"fact:{key}")
        version = self.world.bump(f"file:{path}")
        # since: the file version from which each line reads as it does now (what an edit copies)
        self.files[path] = {"lines": lines, "fact": fact, "since": [version] * len(lines)}
        self.file_order.append(path)

    def file_carries(self, path: str) -> list[tuple[str, int]]:
        f = self.files[path]
        out = [(f"file:{path}", self.world.current(f"file:{path}"))]
        if f["fact"]:
            out.append((f"fact:{f['fact'][0]}", 1))
        return out

    def change_file_line(self, path: str) -> tuple[int, str, str, int]:
        """Change one line that is not the fact line; return (its index, old, new, the version from which
        the old line read so)."""
        rng = self.rng
        f = self.files[path]
        choices = [i for i in range(len(f["lines"])) if not f["fact"] or i != f["fact"][1]]
        i = choices[rng.randrange(len(choices))]
        old = f["lines"][i]
        new = f"{old.split(' = ')[0]} = {rng.randint(10_000, 99_999)}"
        since = f["since"][i]
        f["lines"][i] = new
        f["since"][i] = self.world.bump(f"file:{path}")
        return i, old, new, since

    def prepare(self, tool: str, args: Any) -> tuple[Any, dict[str, list[Any]]]:
        """Final arguments of a call about to be made, and its truth: what the call message carries (a
        write shows the whole file), the file lines it copies and the line an edit writes."""
        if tool not in ("edit_file", "write_file"):
            return args, {}
        path: str = args["path"]
        if tool == "edit_file":
            i, old, new, since = self.change_file_line(path)
            line = f"line:{path}:{i}"
            return {"path": path, "old": old, "new": new}, {
                "copies": [(line, since, old)], "sets": [(line, self.files[path]["since"][i])]}
        kept = list(zip(self.files[path]["since"], self.files[path]["lines"]))  # a write keeps all lines but one
        i, _, _, _ = self.change_file_line(path)
        copies = [(f"line:{path}:{j}", v, text) for j, (v, text) in enumerate(kept) if j != i]
        truth: dict[str, list[Any]] = {"carries": self.file_carries(path), "copies": copies}
        return {"path": path, "content": self.file_text(path)}, truth

    def reused(self, tool: str, args: Any, known_chunks: int) -> list[tuple[str, int, str]]:
        """What a call's arguments copy from the context (``args:<item>``: shown by any message carrying
        the item and by the calls that made one): a re-run repeats an earlier call's arguments; a read of
        a file read before, its path; a fetch of a document shown before (retrieved or fetched), its id."""
        if tool == "read_file":
            return [(f"args:file:{args['path']}", 1, args["path"])] if args["path"] in self.files else []
        if tool == "fetch_source":
            return [(f"args:chunk:{args['doc']}", 1, args["doc"])] if args["doc"] in self.chunks[:known_chunks] else []
        key = f"call:{tool}({canonical_json(args)})"
        first = next(v for v in args.values() if isinstance(v, str))  # the query, URL, topic or expression
        return [(f"args:{key}", 1, first)] if key in self.world.version else []

    def run(self, tool: str, args: Any, call_id: str) -> tuple[str, dict[str, Any]]:
        """The result text of a call and what it carries (re-runs repeat or update the old result)."""
        rng = self.rng
        if tool == "read_file":
            if args["path"] not in self.files:
                self.new_file(args["path"])
            return self.file_text(args["path"]), {"carries": self.file_carries(args["path"])}
        if tool == "edit_file":
            return (f"Edited {args['path']}: {args['old']!r} is now {args['new']!r}.",
                    {"carries": [(f"ack:{call_id}", 1)]})
        if tool == "write_file":
            return (f"Wrote {len(args['content'].encode())} bytes to {args['path']}.",
                    {"carries": [(f"ack:{call_id}", 1)]})
        if tool == "fetch_source":
            title, body = self.chunk_text[args["doc"]]
            return f"Fetched {title} (part {args['doc'].split('#')[1]}):\n{body}", {
                "carries": [(f"chunk:{args['doc']}", 1)]}
        key = f"{tool}({canonical_json(args)})"
        state = self.results.get(key)
        if state is not None:
            if tool in ("sql", "web_fetch") and rng.random() < self.p.data_change_rate:
                state["body"] = self.body(tool, args)  # the data changed since the last run
                state["version"] = self.world.bump(f"call:{key}")
                if state["fact"]:
                    state["fact_value"] = T.number(rng)
                    state["fact_version"] = self.world.bump(f"fact:{state['fact']}")
        else:
            state = {"body": self.body(tool, args), "version": self.world.bump(f"call:{key}"), "fact": None}
            if rng.random() < self.p.tool_fact_rate:
                fkey, metric = self.tool_fact(tool)
                state.update(fact=fkey, metric=metric, fact_value=T.number(rng),
                             fact_version=self.world.bump(f"fact:{fkey}"))
            self.results[key] = state
        if state["fact"]:
            self.fact_info[state["fact"]]["value"] = state["fact_value"]  # what a reply using it quotes
        content = state["body"]
        carries = [(f"call:{key}", state["version"])]
        if state["fact"]:
            content += f"\nKey figure: {state['metric']} = {state['fact_value']}. DEFINE:{state['fact']}"
            carries.append((f"fact:{state['fact']}", state["fact_version"]))
        return content, {"carries": carries}

    def body(self, tool: str, args: Any) -> str:
        rng = self.rng
        if tool == "faq_lookup":
            return f"FAQ: {args['topic']}\nQ: {T.sentence(rng)}\nA: {T.paragraph(rng, 3)}"
        if tool in ("document_search", "search"):
            hits = [f"{i}. {T.phrase(rng, 3).title()} - {T.sentence(rng)}" for i in range(1, 4)]
            return f"Results for {args['query']!r}:\n" + "\n".join(hits)
        if tool == "sql":
            rows = [f"| {T.word(rng, T.NOUNS)} | {T.number(rng)} |" for _ in range(rng.randint(3, 8))]
            return "| key | total |\n|---|---|\n" + "\n".join(rows) + f"\n({len(rows)} rows)"
        if tool == "calculator":
            a, _, b, _, c = args["expression"].split()
            return f"{args['expression']} = {int(a) * int(b) + int(c)}"
        return f"{T.phrase(rng, 4).title()}\n{T.paragraph(rng, rng.randint(3, 5))}"  # web_fetch

    def tool_step(self) -> None:
        rng = self.rng
        n = 1 + (rng.random() < 0.35) + (rng.random() < 0.15)
        for _ in range(min(n, self.p.max_calls_per_turn)):
            known_chunks = len(self.chunks)  # a fetch may invent a document: it copies no id
            if self.history and rng.random() < self.p.repeat_call_rate:
                tool, args = self.pick(self.history)  # a real re-run: the very same arguments
            else:
                tool, args = self.new_call()
                if tool not in ("edit_file", "write_file"):
                    self.history.append((tool, args))
            copied = self.reused(tool, args, known_chunks)
            args, call_truth = self.prepare(tool, args)
            copies = 2 if rng.random() < self.p.same_turn_pair_rate and tool not in ("edit_file", "write_file") else 1
            ids = []
            for _ in range(copies):
                self.calls += 1
                ids.append(f"call{self.calls}")
            # A same-message pair gets its ids in reverse order, so sorting by id (as text
            # or as number) disagrees with position: only position may decide which is newer.
            ids.reverse()
            note = "" if rng.random() < 0.5 else f"Let me run {tool} for that."
            truth: dict[str, Any] = {**call_truth, "copies": copied + call_truth.get("copies", [])}  # MessageTruth's
            self.emit("assistant", note, tool_calls=[ToolCall(id=i, name=tool, arguments=args) for i in ids], **truth)
            for cid in ids:
                content, truth = self.run(tool, args, cid)
                self.emit("tool", content, tool_call_id=cid, tool_name=tool, **truth)

    # ----- turns ----------------------------------------------------------------------
    def turn(self) -> None:
        rng, p = self.rng, self.p
        parts = [f"{T.sentence(rng)} How should I handle the {T.phrase(rng, 2)}?"]
        truth: dict[str, Any] = {"carries": [], "uses": [], "untagged_uses": []}
        statement_made = self.user_fact() if rng.random() < p.fact_rate else None
        if statement_made is not None:
            statement, item, _ = statement_made
            parts.append(statement)
            truth["carries"].append(item)
        assistant_ref = None
        stated = [item[5:] for item, _ in truth["carries"]]
        candidates = [k for k in self.open_facts if k not in stated]  # not the fact just restated
        if candidates and rng.random() < p.back_ref_rate:
            key = candidates[rng.randrange(len(candidates))]
            info = self.fact_info[key]
            tagged = rng.random() >= p.paraphrase_rate
            by_assistant = rng.random() < p.assistant_ref_rate
            # A reply that uses a fact writes what it learned, the value (as real replies do), not only
            # the fact's name; a user referring back names it and leaves the value to the assistant.
            if tagged:
                ref = (f"Applying the {info['label']} you gave earlier, `{info['value']}` (REF:{key})."
                       if by_assistant else f"Keep using the {info['label']} from before (REF:{key}).")
            else:
                ref = (f"Applying the {info['label']} from earlier, `{info['value']}`, as agreed." if by_assistant
                       else info["paraphrase"])
            if by_assistant:
                assistant_ref = (ref, key, tagged)
            else:
                parts.append(ref)
                truth["uses" if tagged else "untagged_uses"].append(key)
            if rng.random() < p.close_after_ref_rate:
                self.open_facts.remove(key)
        self.emit("user", " ".join(parts), **truth)
        for _ in range(p.docs_per_turn):
            self.retrieve()
        if rng.random() < p.tool_call_rate:
            self.tool_step()
        reply = T.paragraph(rng, rng.randint(2, 3))
        atruth: dict[str, Any] = {}
        if assistant_ref:
            ref, key, tagged = assistant_ref
            reply = f"{reply} {ref}"
            atruth["uses" if tagged else "untagged_uses"] = [key]
            # Having written the value, the reply holds it too: a copy of the fact's current version.
            atruth["carries"] = [(f"fact:{key}", self.world.current(f"fact:{key}"))]
        self.emit("assistant", reply, **atruth)
        self.open_facts += self.opened  # open from the next turn on: a reference always comes later
        self.opened = []

    def session(self, turns: int, seed: int) -> Session:
        self.emit("system", f"You are {self.p.description}. Answer precisely, cite the documents and tool "
                            "results you use, and keep to every constraint the user has stated.")
        for _ in range(turns):
            self.turn()
        labels, live = self.world.ground_truth()
        msgs = [replace(m, required=r, metadata={**m.metadata, "live": [f"{item}@{v}" for item, v in copies]})
                if copies else replace(m, required=r) for m, r, copies in zip(self.messages, labels, live)]
        facts = self.world.fact_summary()
        metadata = {
            "generator": GENERATOR_VERSION, "workload": self.p.name, "turns": turns, "seed": seed,
            "params": self.p.as_dict(),
            "ground_truth": {
                "required": sum(labels), "redundant": len(labels) - sum(labels),
                "facts": len(facts),
                "tagged_facts": sum(1 for f in facts.values() if f["tagged_refs"]),
                "untagged_only_facts": sum(1 for f in facts.values() if f["untagged_refs"] and not f["tagged_refs"]),
            },
        }
        return Session.of(msgs, name=f"workload-{self.p.name}-{turns}", source_format="native",
                          metadata=metadata)
