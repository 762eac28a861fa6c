"""Helpers every importer shares: JSON parsing with located errors, content and usage fields,
detection's first look at a file. Building a session is ``builder.SessionBuilder``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import FormatError
from ..jsonio import JsonProblem, loads_json
from . import _limits as limits
from .builder import RETRIEVAL_TOOLS  # the builder applies it; exported here, where importers look
from .repairing import Repairs

if TYPE_CHECKING:
    from .builder import SessionBuilder

#: The largest cost one request may record as the agent's own (USD: Pi's ``cost.total``, OpenCode's ``cost``,
#: Amp's ``credits``): a million-token request at the dearest price there is costs a few hundred dollars,
#: so a recorded cost above this is damage, not a bill.
MAX_REQUEST_COST = 100_000.0


def jpath(*parts: Any) -> str:
    """A JSON path for error messages: ``jpath("$", 3, "content")`` -> ``$[3].content``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif not out:
            out = str(p)
        else:
            out += f".{p}"
    return out


def type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def parse_json_document(text: str, *, file: str) -> Any:
    """The JSON document ``text``; a ``FormatError`` names the line and column and says what to fix."""
    try:
        return loads_json(text)
    except RecursionError:
        raise FormatError("JSON is nested too deeply to read (more than about 1,000 levels); "
                          "this is not a transcript", file=file) from None
    except JsonProblem as exc:
        end = len(text.rstrip())
        pos = _offset(text, exc.lineno, exc.colno)
        # An error at the very end, or a string still open on the last line, means the text stops early.
        truncated = pos >= end or (exc.msg.startswith("Unterminated string") and "\n" not in text[pos:end])
        hint = (f"the JSON ends early (column {exc.colno}): the file looks truncated" if truncated
                else f"invalid JSON: {exc.msg} (column {exc.colno})")
        raise FormatError(hint, file=file, line=exc.lineno) from None


def _offset(text: str, lineno: int, colno: int) -> int:
    start = 0
    for _ in range(lineno - 1):
        start = text.index("\n", start) + 1
    return start + colno - 1


#: A JSON object as parsed from an untrusted file: its values stay unchecked (Any) until a reader narrows
#: each one it uses (isinstance, or the helpers below), which is where a bad value becomes a FormatError.
JsonObject = dict[str, Any]


@dataclass(frozen=True)
class JsonlRecords:
    records: tuple[tuple[int, Any], ...]  # (line number, parsed value)
    skipped: int
    repairs: Repairs = field(default_factory=Repairs)


def parse_jsonl(text: str, *, file: str, skip_bad_lines: bool = False, require_objects: bool = True,
                identity: Callable[[JsonObject], Any] | None = None) -> JsonlRecords:
    """Parse JSON Lines, one record per non-blank line; a bad line is an error naming it.

    Records are separated by ``\\n`` only, as JSON Lines says (``str.splitlines``
    would also split on U+2028 and others inside a string). With
    ``skip_bad_lines`` unreadable lines are skipped and counted instead.

    ``identity`` makes this an agent log's reader (see ``repairing``): a line that
    is not a JSON object is skipped, and a line that repeats an earlier line
    exactly is dropped when ``identity(record)`` gives it an id (lines without
    one, such as two identical user messages in an old log, are all kept); both
    are recorded in ``repairs``.
    """
    out: list[tuple[int, Any]] = []
    skipped = 0
    repairs = Repairs()
    seen: set[tuple[Any, str]] = set()  # (identity, line) of every line with an identity so far
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw)
        except RecursionError:
            problem = "JSON nested too deeply to read"
        except JsonProblem as exc:
            problem = f"invalid JSON: {exc.msg} (column {exc.colno})"
        else:
            if not require_objects or isinstance(obj, dict):
                key = identity(obj) if identity is not None and isinstance(obj, dict) else None
                if key is not None:
                    # The line's own text is part of the key, so many lines sharing an id (or a
                    # timestamp) cost one look-up each; the set holds the lines, not copies.
                    entry = (key, raw.strip())
                    if entry in seen:
                        repairs.add("repeated_lines", lineno)
                        continue
                    seen.add(entry)
                out.append((lineno, obj))
                continue
            problem = f"expected a JSON object on each line, got {type_name(obj)}"
        if skip_bad_lines or identity is not None:
            skipped += 1
            repairs.add("skipped_lines", lineno)
            continue
        raise FormatError(f"{problem}; fix or delete this line (or skip such lines)", file=file, line=lineno,
                          setting="skip_bad_lines")
    return JsonlRecords(tuple(out), skipped, repairs)


def identity_by(*keys: str, inner: str | None = None) -> Callable[[JsonObject], Any]:
    """An ``identity`` for ``parse_jsonl``: the first of ``keys`` holding a string or number,
    looked up in the record and then in its ``inner`` object."""
    def first(scope: JsonObject) -> Any:
        for key in keys:
            value = scope.get(key)
            if (type(value) is str and value) or type(value) is int:
                return (key, value)
        return None

    def identity(record: JsonObject) -> Any:
        found = first(record)
        if found is None and inner is not None and type(record.get(inner)) is dict:
            found = first(record[inner])
        return found
    return identity


def flatten_content(value: Any, *, file: str, where: str, line: int | None = None,
                    allow_none: bool = True) -> tuple[str, list[Any]]:
    """Text of a content field (a string or a list of parts) and the parts that are not text.

    Text parts (``text``, ``input_text``, ``output_text``, ``refusal``) are joined
    with newlines; any other part shows as ``[type]`` and is returned so the
    importer can keep it in metadata.
    """
    if value is None and allow_none:
        return "", []
    if isinstance(value, str):
        return value, []
    if not isinstance(value, list):
        raise FormatError(f"field 'content' must be a string or a list of parts, got {type_name(value)}",
                          file=file, line=line, path=where)
    texts: list[str] = []
    others: list[Any] = []
    for k, part in enumerate(value):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise FormatError(f"content part must be an object, got {type_name(part)}",
                              file=file, line=line, path=f"{where}[{k}]")
        kind = part.get("type")
        text = part.get("text", part.get("refusal"))
        if kind in (None, "text", "input_text", "output_text", "refusal") and isinstance(text, str):
            texts.append(text)
        else:
            others.append(part)
            texts.append(f"[{kind or 'part'}]")
    return "\n".join(texts), others


def usage(*, input: Any = 0, output: Any = 0, cache_read: Any = 0, cache_write: Any = 0) -> dict[str, int]:
    """The shared ``metadata["usage"]`` shape; missing or odd values count as 0.

    Unchecked: importers use ``checked_usage``, which bounds every count and
    names the field of a bad one (issue 23, defect 5)."""
    def num(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
    return {"input": num(input), "output": num(output), "cache_read": num(cache_read),
            "cache_write": num(cache_write)}


#: The largest token count a usage field may hold (issue 23, defect 5): a thousand times any
#: context window or output limit there is, and far below 2**53, where float sums stop counting whole
#: tokens; a value above it is damage, not usage.
MAX_USAGE_TOKENS = 10**12
#: The usage fields every format fills (the first four always, the rest when recorded).
USAGE_FIELDS = ("input", "output", "cache_read", "cache_write")


def token_count(value: Any) -> int | None:
    """``value`` as a token count, or None when it is not a whole number in 0..MAX_USAGE_TOKENS."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    if not 0 <= value <= MAX_USAGE_TOKENS:
        return None
    return int(value)


def checked_usage(b: "SessionBuilder", where: str, fields: dict[str, tuple[str, Any]]) -> dict[str, int] | None:
    """The ``metadata["usage"]`` dict from ``{our name: (the file's field name, value)}``.

    A missing (None) value of the four main fields counts as 0; an optional one
    (``cache_write_1h``, ``reasoning``) is left out. Any other value that is not a
    whole number from 0 to ``MAX_USAGE_TOKENS`` is damage: an API trace is
    refused with the file, line and field named; an agent log (a lenient
    builder) keeps the message without its usage and reports the repair.
    """
    out: dict[str, int] = {}
    for name, (raw_name, value) in fields.items():
        if value is None:
            if name in USAGE_FIELDS:
                out[name] = 0
            continue
        count = token_count(value)
        if count is None:
            shown = repr(value)[:40]
            if b.lenient:
                b.repairs.add("invalid_usage", b.line, example=f"{jpath(where, raw_name)} = {shown}")
                return None
            raise b.error(f"usage field '{raw_name}' is {shown}; a token count must be a whole number from 0 to "
                          f"{MAX_USAGE_TOKENS:,}", jpath(where, raw_name))
        out[name] = count
    for name in USAGE_FIELDS:
        out.setdefault(name, 0)
    if out.get("cache_write_1h", 0) > out["cache_write"]:
        if b.lenient:
            b.repairs.add("invalid_usage", b.line, example=f"{where}: 1-hour cache write above the whole cache write")
            return None
        raise b.error("usage says more tokens were written to the 1-hour cache than to the cache", where)
    return out


def stamp_model(b: "SessionBuilder", default: Any = None) -> None:
    """Give every assistant draft ``metadata["model"]``: the model its message recorded (kept in
    ``source.model``), else ``default`` (the request's), when either is a non-empty string."""
    for d in b.drafts:
        if d.role != "assistant" or "model" in d.metadata:
            continue
        own = (d.metadata.get("source") or {}).get("model")
        model = own if isinstance(own, str) and own else default
        if isinstance(model, str) and model:
            d.metadata["model"] = model


def unmapped(obj: dict[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The fields of ``obj`` an importer did not map (kept in ``metadata["source"]``)."""
    skip = set(known)
    return {k: v for k, v in obj.items() if k not in skip}


def with_source(metadata: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    if extra:
        metadata.setdefault("source", {}).update(extra)
    return metadata


_LAST_DOCUMENT: tuple[str, Any] | None = None  # (text, parsed): detection and loading share one parse


def document(text: str, *, file: str) -> Any:
    """The parsed JSON document ``text`` (parsed once even when detection already did)."""
    global _LAST_DOCUMENT
    last = _LAST_DOCUMENT
    if last is not None and last[0] is text:
        return last[1]
    value = parse_json_document(text, file=file)
    _LAST_DOCUMENT = (text, value)
    return value


@dataclass(frozen=True)
class Probe:
    """What detection sees of a file: the parsed JSON document, or the first JSONL records."""

    document: Any = None
    is_document: bool = False
    lines: tuple[Any, ...] = ()  # first parsed JSONL records (bad lines left out)

    @property
    def records(self) -> tuple[Any, ...]:
        """JSONL records to look at; a one-line file counts as a one-record JSONL file."""
        if self.lines:
            return self.lines
        return (self.document,) if isinstance(self.document, dict) else ()


def probe(text: str, *, file: str, max_lines: int = 50) -> Probe:
    """Look at ``text`` once: a single JSON document, or JSON Lines?

    A file that starts with ``{`` may be either; it is JSONL when its first
    line is a whole object and more lines follow. A broken single document
    raises the located ``FormatError`` (e.g. a truncated file).
    """
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return Probe()
    first_line = stripped.split("\n", 1)[0]
    multi_line = stripped.count("\n", 0, len(stripped.rstrip())) > 0
    if stripped[0] == "{" and multi_line:
        try:
            head = loads_json(first_line)
        except (ValueError, RecursionError):
            head = None
        if isinstance(head, dict):  # one object per line: JSONL (possibly with bad lines later)
            recs = []
            for raw in stripped.split("\n", max_lines)[:max_lines]:
                try:
                    obj = loads_json(raw)
                except (ValueError, RecursionError):
                    continue
                recs.append(obj)
            return Probe(lines=tuple(recs))
    return Probe(document=document(text, file=file), is_document=True)


def chat_message_fields(b: "SessionBuilder", m: Any, where: str, *, roles: Iterable[str],
                        known: Iterable[str]) -> tuple[str, str, dict[str, Any]]:
    """Check an OpenAI-style message object: ``(role, flattened content, unmapped fields)``.

    Shared by the Chat Completions and SWE-agent importers, whose messages have
    the same shape; errors name the JSON path and say what to add.
    """
    roles = tuple(roles)
    if not isinstance(m, dict):
        raise b.error(f"a message must be an object, got {type_name(m)}", where)
    if "role" not in m:
        raise b.error("message has no 'role'; add one of " + ", ".join(roles), where)
    role = m["role"]
    if role not in roles:
        raise b.error(f"unknown role {role!r}; expected one of {', '.join(roles)}", jpath(where, "role"))
    content, parts = flatten_content(m.get("content"), file=b.file, where=jpath(where, "content"))
    extra = unmapped(m, known)
    if parts:
        extra["content_parts"] = parts
    return role, content, extra


__all__ = ["JsonObject", "JsonlRecords", "MAX_USAGE_TOKENS", "Probe", "RETRIEVAL_TOOLS", "USAGE_FIELDS",
           "chat_message_fields", "checked_usage", "document", "flatten_content", "identity_by", "jpath",
           "parse_json_document", "parse_jsonl", "probe", "stamp_model", "token_count", "type_name", "unmapped",
           "usage", "with_source"]


class RecordBudget:
    """The limits a file is held to (``pruner.formats.load_session``'s ``max_bytes``: its length, and
    ``CONTAINER_BYTES`` per array and object, ``charged_size``), held over the records of one session
    that are not a file (an agent's database rows), so a session costs no more memory from a database
    than from a file. ``add`` each record's bytes before parsing it: a ``FormatError`` once they pass it."""

    def __init__(self, *, file: str, what: str = "the session's records", max_bytes: int | None = None):
        self.file, self.what = file, what
        self.limit = limits.DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        self.size = self.charged = 0

    def add(self, data: bytes | str, where: str) -> None:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        self.size += len(raw)
        self.charged += max(len(raw), limits.CONTAINER_BYTES * (raw.count(b"[") + raw.count(b"{")))
        if self.size > self.limit:
            raise FormatError(f"{self.what} are {self.size:,} bytes so far, over the {self.limit:,}-byte limit a "
                              "file is held to; the session is not read", file=self.file, path=where,
                              setting="max_bytes")
        if self.charged > self.limit:
            raise FormatError(f"{self.what} are {self.size:,} bytes so far, but their JSON nests so many arrays "
                              f"and objects that reading them costs as much memory as {self.charged:,} bytes of "
                              f"text, over the {self.limit:,}-byte limit a file is held to; the session is not read",
                              file=self.file, path=where, setting="max_bytes")


#: What a row says of JSON nested too deeply for the readers (the same words for a file and a row).
TOO_DEEP = "JSON is nested too deeply to read (more than about 1,000 levels of arrays and objects)"
