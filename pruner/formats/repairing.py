"""What an importer changed to read a file, recorded so every front end can say so.

Agent logs (Claude Code, Pi, Codex) are written line by line by programs that
crash, retry and repeat themselves, so their importers repair what they safely
can instead of refusing the file: an exact repeat of a line is dropped, a line
that is not a JSON object is skipped, a line that reuses an id with different
content is kept under a new id. Every importer also gives a tool call that
reuses another call's id its own id, so each result stays with its own call.
Nothing is repaired silently: each repair is one entry of
``Session.metadata["repairs"]``, ``{"kind", "count", "message", "lines"}``,
whose ``message`` is a sentence for a person (it names no command-line flag or
dashboard control, so any front end can show it as it is).

>>> r = Repairs()
>>> r.add("repeated_lines", 7)
>>> r.add("repeated_lines", 9)
>>> r.as_metadata()[0]["message"]
'dropped 2 exact repeats of an earlier line (lines 7, 9)'
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import fields, replace
from typing import Any, Mapping

from ..errors import FormatError, InvalidSessionError
from ..model import Message, Session, ToolCall, validate_session

#: Where a session keeps the repairs made when it was read.
REPAIRS_KEY = "repairs"
_MAX_LISTED = 20  # lines and examples kept per repair: enough to find them, bounded for huge files


def _lines(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:_MAX_LISTED])
    more = len(lines) - _MAX_LISTED
    return f"line{'s' if len(lines) > 1 else ''} {shown}" + (f" and {more:,} more" if more > 0 else "")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _sentence(kind: str, count: int, lines: list[int], examples: list[str], types: Counter[str]) -> str:
    where = f" ({_lines(lines)})" if lines else ""
    shown = "; ".join(examples[:_MAX_LISTED]) + ("; …" if len(examples) > _MAX_LISTED else "")
    if kind == "skipped_lines":
        return f"skipped {_plural(count, 'line that is', 'lines that are')} not a JSON object{where}"
    if kind == "repeated_lines":
        return f"dropped {_plural(count, 'exact repeat', 'exact repeats')} of an earlier line{where}"
    if kind == "renamed_ids":
        return (f"{_plural(count, 'line reuses', 'lines reuse')} an earlier line's id with different content; "
                f"kept under a new id: {shown}")
    if kind == "unknown_entries":
        kinds = ", ".join(f"{name} {n:,}" for name, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"skipped {_plural(count, 'entry', 'entries')} of a type this reader does not know: {kinds}{where}"
    if kind == "renamed_call_ids":
        return (f"{_plural(count, 'tool call reuses', 'tool calls reuse')} the id of an earlier call; each was "
                f"given its own id so every result stays with its call: {shown}")
    if kind == "unlinked_results":
        return (f"{_plural(count, 'tool result answers', 'tool results answer')} a call that already has a "
                f"result; kept as separate tool output{where}")
    if kind == "invalid_usage":
        return (f"dropped the usage of {_plural(count, 'message', 'messages')} whose token counts are not whole "
                f"numbers in range (so no bill is made from them): {shown}")
    if kind == "usage_without_reply":
        return (f"{_plural(count, 'token count follows', 'token counts follow')} a reply that already has one; "
                f"no message holds that request, so it is not billed{where}")
    if kind == "timestamps_out_of_order":
        return (f"{_plural(count, 'line is', 'lines are')} timed more than a second before the line "
                f"before it in its conversation; each takes that line's time (the recorded one is kept){where}")
    if kind == "invalid_time":
        return (f"{_plural(count, 'message records a time', 'messages record times')} outside the years 1000 to "
                f"9999 (damaged; no date is taken from {'it' if count == 1 else 'them'}): {shown}")
    if kind == "replaced_surrogates":
        return (f"replaced {_plural(count, 'lone surrogate', 'lone surrogates')} (half of a character pair, "
                f"not text) with U+FFFD: {shown}")
    if kind == "overlapping_shutdowns":
        return (f"{_plural(count, 'session.shutdown follows', 'session.shutdowns follow')} an earlier one with no "
                f"session.resume between them: each run's totals are summed, so if one repeats the other's "
                f"requests they are counted twice{where}")
    return f"{kind}: {count:,}{where}"  # pragma: no cover - every kind above has its sentence


class Repairs:
    """Collects repairs while a file is read; ``as_metadata()`` gives the recorded entries."""

    def __init__(self) -> None:
        self._order: list[str] = []
        self._count: Counter[str] = Counter()
        self._lines: dict[str, list[int]] = {}
        self._examples: dict[str, list[str]] = {}
        self._types: dict[str, Counter[str]] = {}

    def add(self, kind: str, line: int | None = None, *, example: str | None = None, type: str | None = None,
            count: int = 1) -> None:
        if kind not in self._count:
            self._order.append(kind)
            self._lines[kind], self._examples[kind], self._types[kind] = [], [], Counter()
        self._count[kind] += count
        if line is not None and len(self._lines[kind]) <= _MAX_LISTED:
            self._lines[kind].append(line)
        if example is not None and len(self._examples[kind]) <= _MAX_LISTED:
            self._examples[kind].append(example)
        if type is not None:
            self._types[kind][type] += count

    def absorb(self, other: "Repairs") -> None:
        """Add ``other``'s repairs to these (a file read as several conversations reports once)."""
        for kind in other._order:
            self.add(kind, count=0)
            self._count[kind] += other._count[kind]
            self._lines[kind] = sorted({*self._lines[kind], *other._lines[kind]})[:_MAX_LISTED + 1]
            self._examples[kind] = (self._examples[kind] + other._examples[kind])[:_MAX_LISTED + 1]
            self._types[kind].update(other._types[kind])

    def __bool__(self) -> bool:
        return bool(self._order)

    def as_metadata(self) -> list[dict[str, Any]]:
        out = []
        for kind in self._order:
            lines, examples, types = self._lines[kind], self._examples[kind], self._types[kind]
            entry: dict[str, Any] = {"kind": kind, "count": self._count[kind],
                                     "message": _sentence(kind, self._count[kind], lines, examples, types)}
            if lines:
                entry["lines"] = lines[:_MAX_LISTED]
            if types:
                entry["types"] = dict(sorted(types.items()))
            out.append(entry)
        return out

    def merge_into(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` with these repairs appended to any already recorded."""
        if self:
            metadata[REPAIRS_KEY] = [*metadata.get(REPAIRS_KEY, ()), *self.as_metadata()]
        return metadata


def repairs_of(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The repairs recorded in a session's metadata (``[]`` when none)."""
    value = metadata.get(REPAIRS_KEY) if isinstance(metadata, Mapping) else None
    return [r for r in value if isinstance(r, Mapping)] if isinstance(value, list) else []


# In JSON text: an escaped backslash (consumed first, so "\\\\ud800" is not an escape), a
# surrogate pair, or a lone surrogate escape.
_ESCAPE_SCAN = re.compile(r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                          r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# A surrogate escape behind an escaped backslash: JSON held as a string inside the JSON (an OpenAI tool
# call's "arguments"), decoded later. Whether it is lone is not known here, so such a text is walked.
_NESTED_SURROGATE_ESCAPE = re.compile(r"\\\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """Whether JSON ``text`` holds a lone surrogate, escaped or raw (raw ones only come from a
    caller's string, never from a UTF-8 file). Quick when there is none: most files have no
    ``\\u`` escape at all."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
    if "\\u" not in text or not _SURROGATE_ESCAPE.search(text):  # no surrogate escape at all, paired or not
        return False
    return any(m.group(1) for m in _ESCAPE_SCAN.finditer(text)) or bool(_NESTED_SURROGATE_ESCAPE.search(text))


def _fixed(value: Any, counter: list[int]) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            fixed, n = _SURROGATE.subn("\ufffd", value)
            counter[0] += n
            return fixed
        return value
    if isinstance(value, dict):
        return {_fixed(k, counter): _fixed(v, counter) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_fixed(v, counter) for v in value)
    if isinstance(value, ToolCall):
        return replace(value, **{f.name: _fixed(getattr(value, f.name), counter) for f in fields(ToolCall)})
    return value


def replace_lone_surrogates(session: Session, text: str | None, *, file: str) -> Session:
    """``session`` with every lone surrogate replaced by U+FFFD, and the replacement recorded.

    A lone surrogate (a JSON escape such as ``"\\ud800"`` without its pair, left
    when a program cut a string in the middle of an emoji) is not a character:
    UTF-8 cannot encode it and no API accepts it. ``text`` is the file the
    session was read from; the session is walked only when it holds one (``None``: the caller
    has already found one, so walk it).
    """
    if text is not None and not has_lone_surrogate(text):
        return session
    if session.subagents:  # each conversation on its own; what was replaced is reported with the file's
        subs, replaced = [], 0
        for sub in session.subagents:
            fixed_sub = replace_lone_surrogates(sub, None, file=file)
            if fixed_sub is not sub:
                new = repairs_of(fixed_sub.metadata)[len(repairs_of(sub.metadata)):]
                replaced += sum(int(r.get("count", 0)) for r in new)
                kept = {k: v for k, v in fixed_sub.metadata.items() if k != REPAIRS_KEY}
                if REPAIRS_KEY in sub.metadata:
                    kept[REPAIRS_KEY] = sub.metadata[REPAIRS_KEY]
                fixed_sub = replace(fixed_sub, metadata=kept)
            subs.append(fixed_sub)
        main = replace_lone_surrogates(replace(session, subagents=()), None, file=file)
        if replaced:
            extra = Repairs()
            extra.add("replaced_surrogates", count=replaced, example="the subagents' messages")
            main = replace(main, metadata=extra.merge_into(dict(main.metadata)))
        fixed = replace(main, subagents=tuple(subs))
        try:
            validate_session(fixed)
        except InvalidSessionError as exc:
            raise FormatError(f"after replacing lone surrogates with U+FFFD: {exc}", file=file) from None
        return fixed
    repairs = Repairs()
    try:
        messages = []
        for m in session.messages:
            counter = [0]
            changed = {f.name: _fixed(getattr(m, f.name), counter) for f in fields(Message)}
            if counter[0]:
                repairs.add("replaced_surrogates", count=counter[0], example=f"message {changed['id']!r}")
                m = Message(**changed)
            messages.append(m)
        counter = [0]
        head = {"name": _fixed(session.name, counter), "source_format": _fixed(session.source_format, counter),
                "metadata": _fixed(dict(session.metadata), counter)}
    except RecursionError:
        raise FormatError("JSON is nested too deeply to read; this is not a transcript", file=file) from None
    if counter[0]:
        repairs.add("replaced_surrogates", count=counter[0], example="the session's own fields")
    if not repairs:
        return session
    fixed = Session(messages=tuple(messages), name=head["name"], source_format=head["source_format"],
                    metadata=repairs.merge_into(head["metadata"]))
    try:
        validate_session(fixed)  # a replaced id may now equal another one
    except InvalidSessionError as exc:
        raise FormatError(f"after replacing lone surrogates with U+FFFD: {exc}", file=file) from None
    return fixed


__all__ = ["REPAIRS_KEY", "Repairs", "has_lone_surrogate", "repairs_of", "replace_lone_surrogates"]
