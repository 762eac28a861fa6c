"""A deterministic summariser that needs no key and no network.

It fills every section from the history itself: the first user request is the
goal; user sentences that state a rule or preference are constraints; finished
tool work and changed files are done; failing results not retried successfully
are blocked; the last assistant plan gives the next steps; defined facts,
paths, identifiers and error lines are critical context. The same input always
gives the same summary, byte for byte. Every item is one line, so text from the
transcript can never start a heading of its own.

>>> from pruner.model import Message
>>> from pruner.compaction.base import SummaryTask
>>> from pruner.compaction.prompts import history_request
>>> msgs = (Message(id="u", role="user", content="Add CSV export. Never touch setup.py."),)
>>> text = OfflineSummarizer().summarize(SummaryTask("history", msgs, history_request(msgs)))
>>> text.splitlines()[:2]
['## Goal', '- Add CSV export. Never touch setup.py.']
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from ..analysis.index import markers
from ..analysis.fileops import file_operations
from ..model import Message
from ..terms import reply_terms
from .base import SummaryTask
from .flatten import one_line
from .key_lines import key_lines
from .sections import (PREFIX_SECTIONS, PROGRESS_SUBSECTIONS, SUMMARY_SECTIONS, parse_sections, parse_subsections,
                       strip_file_lists)

NONE = "(none)"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CONSTRAINT = re.compile(r"\b(prefer\w*|must|mustn't|don't|do not|never|always|avoid|make sure|only use|"
                         r"no need|instead of|should(?:n't)?|required?|please use|keep)\b", re.IGNORECASE)
_DECISION = re.compile(r"\b(decided?|decision|I'll use|we'll use|let's use|going with|chose|choose|"
                       r"switch(?:ed)? to|rather than|instead of|because)\b", re.IGNORECASE)
_PLAN = re.compile(r"\b(next|then|will|I'll|let me|todo|need to|remaining|plan)\b", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")
_ERROR_LINE = re.compile(r"Traceback \(most recent call last\)|^\s*(?:error|fatal)\b|\b[A-Z]\w*(?:Error|Exception)\b:?"
                         r"|\b(?:exit(?:ed)?(?: with)? (?:code|status)) *[1-9]\d*|command failed", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/.~-])((?:~/|\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}|[\w-]+\.(?:py|ts|tsx|js|json|md|"
                   r"toml|yaml|yml|rs|go|java|c|h|cpp|sh|txt|csv|jsonl))(?![\w/])")
_IDENTIFIER = re.compile(r"`([A-Za-z_][\w.:]{2,60}(?:\(\))?)`")
CAP = {"Goal": 6, "Constraints & Preferences": 20, "Done": 30, "In Progress": 10, "Blocked": 15,
       "Key Decisions": 20, "Next Steps": 10, "Critical Context": 40, "Original Request": 3,
       "Early Progress": 20, "Context for Suffix": 30}


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else text


def _unique(items: Iterable[str]) -> list[str]:
    return [x for x in dict.fromkeys(i for i in items if i)]


def _newest(items: Sequence[str], cap: int) -> list[str]:
    return list(items[-cap:]) if len(items) > cap else list(items)


def _sentences(text: str) -> list[str]:
    """Sentences and lines of ``text``, list markers removed."""
    out = []
    for s in _SENTENCE.split(text):
        item = _LIST_ITEM.match(s)
        s = (item.group(1) if item else s).strip()
        if s:
            out.append(s)
    return out


# Narration: the agent announcing its next tool call ("Now let me update ...") says nothing a later
# request can use; a plan item keeps what follows it, a decision is dropped.
_NARRATION = re.compile(r"^(?:(?:now|next|first|ok(?:ay)?|great|perfect|good)[,!.]?\s+)*(?:let me|let's|i'll|i will|"
                        r"i'm going to|i need to|i am going to)\s+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]{3}")  # an item must say something: three letters or digits in a row


def _is_request(text: str) -> bool:
    """A user message that asks for something: not a bare slash command ("/mode" switches a setting),
    not an agent's notice in the user role ("[Request interrupted by user]", Claude Code's "Caveat: ..."
    before local-command output, command tags), not a trivial one- or two-word command ("ls")."""
    stripped = text.strip()
    if not stripped or (stripped.startswith("/") and len(stripped.split()) == 1):
        return False
    if (stripped.startswith("[") and stripped.endswith("]")) or stripped.startswith(("Caveat:", "<command-",
                                                                                     "<local-command-")):
        return False
    return len(stripped.split()) >= 3 or not stripped.isalpha()


def _plan_item(text: str) -> str | None:
    """A plan item without its narration ("Let me check X first:" -> "Check X first"), or None when
    nothing is left (an emoji, a lead-in to a list)."""
    stripped = _NARRATION.sub("", text)
    rest = stripped.strip().rstrip(":").strip()
    if not _WORD.search(rest):
        return None
    return rest[0].upper() + rest[1:] if stripped != text else rest


def _without_shorter_paths(paths: Sequence[str]) -> list[str]:
    """Paths, each once: a path that is the tail of a longer one listed too (``types.ts`` beside
    ``src/core/types.ts``) is the same file, so only the longer is kept."""
    out = []
    for p in paths:
        bare = p.lstrip("~./")
        if any(q != p and (q.endswith("/" + bare) or q.lstrip("~./").endswith("/" + bare)) for q in paths):
            continue
        out.append(p)
    return out


def _is_error(result: Message) -> bool:
    if isinstance(result.metadata, Mapping) and result.metadata.get("is_error") is True:
        return True
    return _reads_as_error(result.content)


@lru_cache(maxsize=1 << 16)
def _reads_as_error(text: str) -> bool:
    """Whether the first lines of ``text`` read as an error (once per distinct text: see ``_PER_TEXT``)."""
    head = "\n".join(text.splitlines()[:3])
    return bool(_ERROR_LINE.search(head))


def _error_line(text: str) -> str:
    for line in text.splitlines():
        if _ERROR_LINE.search(line):
            return one_line(line, 200)
    return one_line(text, 200)


def _call_text(name: str, arguments: Any) -> str:
    from .serialize import format_arguments
    return one_line(f"{name}({format_arguments(arguments)})", 160)


# What one message's text gives the facts, computed once per distinct text: a summary reads the whole
# history, and the next compaction of the same session (or the hindsight bound's next state) reads most
# of it again. Pure functions of the text, so the cache changes no summary.
_PER_TEXT = 1 << 16


@lru_cache(maxsize=_PER_TEXT)
def _constraints(text: str) -> tuple[str, ...]:
    # Questions ask rather than constrain, so they are left out.
    return tuple(one_line(s, 200) for s in _sentences(text) if _CONSTRAINT.search(s) and not s.endswith("?"))


@lru_cache(maxsize=_PER_TEXT)
def _decisions(text: str) -> tuple[str, ...]:
    return tuple(one_line(s, 200) for s in _sentences(text)
                 if _DECISION.search(s) and not _NARRATION.match(s) and not s.endswith(":") and len(s.split()) >= 4)


@lru_cache(maxsize=_PER_TEXT)
def _paths(text: str) -> tuple[str, ...]:
    return tuple(_PATH.findall(text))


@lru_cache(maxsize=_PER_TEXT)
def _identifiers(text: str) -> tuple[str, ...]:
    return tuple(_IDENTIFIER.findall(text))


class _Facts:
    """Everything the offline summariser reads out of a run of messages, once."""

    def __init__(self, messages: Sequence[Message]):
        self.requests = [m.content for m in messages if m.role == "user" and _is_request(m.content)]
        self.constraints = _unique(s for m in messages if m.role == "user" for s in _constraints(m.content))
        self.decisions = _unique(s for m in messages if m.role == "assistant" for s in _decisions(m.content))
        results = {m.tool_call_id: m for m in messages if m.tool_call_id is not None}
        changed: dict[str, list[str]] = {}
        read: list[str] = []
        tool_counts: dict[str, int] = {}
        failures: list[tuple[str, int, str, str]] = []  # (call key, call number, bullet, error line)
        last_success: dict[str, int] = {}
        order = 0
        for m in messages:
            for c in m.tool_calls:
                order += 1
                tool_counts[c.name] = tool_counts.get(c.name, 0) + 1
                ops = file_operations(c)
                for op, path in ops:
                    if op == "read":
                        read.append(path)
                    else:
                        changed.setdefault(path, []).append(op)
                result = results.get(c.id)
                key = c.call_key()
                if result is not None and _is_error(result):
                    line = _error_line(result.content)
                    failures.append((key, order, f"{_call_text(c.name, c.arguments)} failed: {line}", line))
                elif result is not None:
                    last_success[key] = order
        self.tool_counts = tool_counts
        self.changed = changed
        self.read = _unique(read)
        self.error_lines = _unique(line for _, _, _, line in failures)
        # An error still blocks unless the same call (name and arguments) later succeeded.
        self.blocked = _unique(b for key, n, b, _ in failures if last_success.get(key, -1) < n)
        self.last_plan = self._plan(messages)
        self.unfinished = bool(messages) and (messages[-1].is_tool_result or bool(messages[-1].tool_calls)
                                              or messages[-1].role == "user")
        self.defined = []
        texts = []
        for m in messages:
            defines, _ = markers(m.content)
            for key in _unique(list(m.defines) + list(defines)):
                line = next((ln for ln in m.content.splitlines() if f"DEFINE:{key}" in ln), m.content)
                self.defined.append(f"DEFINE:{key}: {one_line(line, 200)}")
            if m.role in ("user", "assistant"):
                texts.append(m.content)
        self.paths = _without_shorter_paths(_unique(list(changed) + read + [p for t in texts
                                                                            for p in _paths(t)]))
        self.messages = messages
        self.identifiers = _unique(i for t in texts for i in _identifiers(t) if i not in self.paths)

    @staticmethod
    def _plan(messages: Sequence[Message]) -> list[str]:
        # The newest assistant text that states a plan once narration and emoji are taken out.
        for last in [m for m in reversed(messages) if m.role == "assistant" and m.content.strip()][:3]:
            items = [one_line(mt.group(1), 200) for mt in map(_LIST_ITEM.match, last.content.splitlines()) if mt]
            items = [x for x in map(_plan_item, items) if x]
            if items:
                return _unique(items)[:CAP["Next Steps"]]
            sentences = _sentences(last.content)
            plan = [x for x in (_plan_item(one_line(s, 200)) for s in sentences if _PLAN.search(s)) if x]
            if not plan and sentences:
                plan = [x for x in [_plan_item(one_line(sentences[-1], 200))] if x]
            if plan:
                return _unique(plan)[:5]
        return []

    def done(self) -> list[str]:
        out = []
        for path, ops in self.changed.items():
            verb = "Created" if ops[0] == "write" else "Edited"
            out.append(f"{verb} {_code(path)}" + (f" ({len(ops)} changes)" if len(ops) > 1 else ""))
        if self.tool_counts:
            out.append("Tool calls made: " + ", ".join(f"{name} ×{n}" for name, n in self.tool_counts.items()))
        return out

    def critical(self) -> list[str]:
        return (self.defined + [f"file {_code(p)}" for p in _newest(self.paths, 15)]
                + [f"name {_code(i)}" for i in _newest(self.identifiers, 15)]
                + [f"error: {e}" for e in _newest(self.error_lines, 8)])


def render(sections: Mapping[str, Sequence[str]], order: Sequence[str]) -> str:
    """Markdown for ``{section: bullets}``; ``Progress`` takes its three subsections from the same map."""
    lines: list[str] = []
    for name in order:
        lines.append(f"## {name}")
        if name == "Progress":
            for sub in PROGRESS_SUBSECTIONS:
                lines.append(f"### {sub}")
                lines.extend(f"- {b}" for b in (sections.get(sub) or [NONE]))
        else:
            lines.extend(f"- {b}" for b in (sections.get(name) or [NONE]))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _fresh(facts: _Facts, *, later_only: bool) -> dict[str, list[str]]:
    requests = [one_line(r, 400) for r in facts.requests]
    goal = [f"Later request: {r}" for r in requests] if later_only else (
        requests[:1] + [f"Later request: {r}" for r in _newest(requests[1:], CAP["Goal"] - 1)])
    return {
        "Goal": goal,
        "Constraints & Preferences": _newest(facts.constraints, CAP["Constraints & Preferences"]),
        "Done": facts.done(),
        "In Progress": [f"Latest request: {requests[-1]}"] if facts.unfinished and requests else [],
        "Blocked": _newest(facts.blocked, CAP["Blocked"]),
        "Key Decisions": _newest(facts.decisions, CAP["Key Decisions"]),
        "Next Steps": facts.last_plan,
        "Critical Context": facts.critical(),
    }


def _items(body: str) -> list[str]:
    """One item per non-empty line: list markers dropped, sub-headings skipped."""
    out = []
    for line in body.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _LIST_ITEM.match(line)
        out.append(one_line(item.group(1) if item else line, 240))
    return [x for x in out if x and x != NONE]


def _previous(summary: str) -> dict[str, list[str]]:
    """The earlier summary's items by section; tolerant of summaries written by other tools.

    Known sections map to themselves (a top-level ``## Done`` to Progress/Done);
    unknown sections, and a summary with no headings at all, go to Critical Context.
    """
    out: dict[str, list[str]] = {name: [] for name in CAP}
    sections = parse_sections(summary)
    if not sections:
        out["Critical Context"] = [f"Earlier summary: {x}" for x in _items(strip_file_lists(summary))]
        return out
    for name, body in sections.items():
        if name == "Progress":
            subs = parse_subsections(body)
            for sub in PROGRESS_SUBSECTIONS:
                out[sub] += _items(subs.get(sub, ""))
            loose = body.split("### ", 1)[0]
            out["Done"] += _items(loose)
        elif name in out:
            out[name] += _items(body)
        else:
            out["Critical Context"] += [f"{one_line(name, 60)}: {x}" for x in _items(body)]
    return out


def merge(previous: Mapping[str, Sequence[str]], new: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Preserve what the earlier summary says, add what is new, move In Progress to Done."""
    merged: dict[str, list[str]] = {}
    for name in ("Goal", "Constraints & Preferences", "Blocked", "Key Decisions", "Critical Context"):
        merged[name] = _unique(list(previous.get(name, ())) + list(new.get(name, ())))
    goal = merged["Goal"]
    merged["Goal"] = goal[:1] + _newest(goal[1:], CAP["Goal"] - 1)
    moved = [b if b.startswith("Finished: ") else f"Finished: {b}" for b in previous.get("In Progress", ())]
    merged["Done"] = _unique(list(previous.get("Done", ())) + moved + list(new.get("Done", ())))
    merged["In Progress"] = list(new.get("In Progress", ()))
    merged["Next Steps"] = list(new.get("Next Steps", ())) or list(previous.get("Next Steps", ()))
    return {k: _newest(v, CAP[k]) if k != "Goal" else v for k, v in merged.items()}


#: Key lines quoted without a budget (with one, as many as fit).
KEY_LINES = 30


class OfflineSummarizer:
    """Deterministic summaries built from the history alone (no key, no network).

    ``budget_tokens``: fill the summary up to this many tokens with the lines that hold the history's
    key terms (``pruner.compaction.key_lines``; the sections first); without it, ``KEY_LINES`` of them."""

    name = "offline"

    def __init__(self, budget_tokens: int | None = None):
        self.budget_tokens = budget_tokens

    def _with_lines(self, sections: dict[str, list[str]], messages: Sequence[Message], order: Sequence[str]) -> str:
        plain = render(sections, order)
        present = frozenset(_IDENTIFIER.findall(plain)) | frozenset(_PATH.findall(plain)) | reply_terms(plain)
        lines = [_code(x) for x in key_lines(messages, skip=present) if x not in plain]
        key = "Critical Context" if "Critical Context" in order else "Context for Suffix"
        if self.budget_tokens is None:
            sections[key] = list(sections.get(key, [])) + lines[:KEY_LINES]
            return render(sections, order)
        from ..tokens import get_counter

        counter = get_counter()
        if counter.count(plain) >= self.budget_tokens:
            return plain
        lo, hi = 0, len(lines)  # the most key lines that fit the budget
        while lo < hi:
            mid = (lo + hi + 1) // 2
            trial = dict(sections)
            trial[key] = list(sections.get(key, [])) + lines[:mid]
            if counter.count(render(trial, order)) <= self.budget_tokens:
                lo = mid
            else:
                hi = mid - 1
        sections[key] = list(sections.get(key, [])) + lines[:lo]
        return render(sections, order)

    def summarize(self, task: SummaryTask) -> str:
        facts = _Facts(task.messages)
        if task.kind == "turn_prefix":
            request = [one_line(facts.requests[0], 600)] if facts.requests else []
            progress = facts.done() + [f"Failed: {b}" for b in facts.blocked] + [
                f"Last said: {p}" for p in facts.last_plan[:3]]
            return self._with_lines({"Original Request": request,
                                     "Early Progress": _newest(progress, CAP["Early Progress"]),
                                     "Context for Suffix": _newest(facts.critical(), CAP["Context for Suffix"])},
                                    task.messages, PREFIX_SECTIONS)
        if task.kind == "update" and task.previous_summary:
            sections = merge(_previous(task.previous_summary), _fresh(facts, later_only=True))
        else:
            sections = _fresh(facts, later_only=False)
        return self._with_lines(sections, task.messages, SUMMARY_SECTIONS)
