"""OpenCode's records (its database rows, or the JSON files before it) read into a Session, in full or
for the bill only.

A record is ``(table, message id of a part, id, data)``: the session's own fields, then each message
and each part, ``data`` the JSON OpenCode stored (without its ids in the database; with them in the
older files). ``read_rows`` hashes every record (the session's digest: ``pruner.logs`` reads it again
only when it changes) and builds the session with ``pruner.formats.opencode.build``, the reader of an
``opencode export`` document, so a database session and its export give one Session.

``bill_only``: each record is decoded by msgspec into only the fields the bill, the cache ledger and
the row read (role, times, model, provider, tokens, cost; of a part its type, tool call id and name,
tool status and end time, and whether its text is empty), text and tool output become ``"x"`` or
``""`` and tool input ``{}``, and the same ``build`` runs on that skeleton. Anything msgspec refuses
(a value of a shape the fields do not declare, a tool input that is not an object, JSON the strict
reader would judge) returns None and the full reading decides, with its error naming the record.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

import msgspec

from ..errors import FormatError
from ..jsonio import JsonProblem, loads_json
from ..model import Session
from .common import TOO_DEEP, RecordBudget
from .opencode import Conversation, Record, build

#: One stored record: (table, the message id a part belongs to ("" otherwise), id, JSON data).
Row = tuple[str, str, str, bytes]


class _State(msgspec.Struct):
    status: Any = None
    input: msgspec.Raw = msgspec.Raw(b"{}")
    output: Any = None
    error: Any = None
    time: Any = None


class _Part(msgspec.Struct):
    id: Any = None
    type: Any = None
    text: Any = None
    ignored: Any = None
    filename: Any = None
    mime: Any = None
    callID: Any = None
    tool: Any = None
    state: _State | None = None
    tokens: Any = None
    cost: Any = None


class _Message(msgspec.Struct):
    id: Any = None
    role: Any = None
    time: Any = None
    modelID: Any = None
    providerID: Any = None
    model: Any = None
    path: Any = None  # the working folder (``cwd``), where the row looks when the session records none
    tokens: Any = None
    cost: Any = None


_PART = msgspec.json.Decoder(_Part)
_MESSAGE = msgspec.json.Decoder(_Message)
_SESSION = msgspec.json.Decoder(dict[str, Any])


class _Unsure(Exception):
    """A record only the full reading reads (or refuses) as it should."""


def _mark(value: Any) -> Any:
    """Text as the skeleton keeps it: whether it is empty (a value that is not text stays, for the
    same error)."""
    return ("x" if value else "") if isinstance(value, str) else value


def _slim(table: str, data: bytes) -> dict[str, Any]:
    if table == "session":
        out = _SESSION.decode(data)
        return {k: out[k] for k in ("id", "title", "directory", "parentID") if k in out}
    if table == "message":
        m = _MESSAGE.decode(data)
        return {k: v for k, v in ((f, getattr(m, f)) for f in _Message.__struct_fields__) if v is not None}
    p = _PART.decode(data)
    part = {k: v for k, v in ((f, getattr(p, f)) for f in _Part.__struct_fields__ if f != "state") if v is not None}
    for key in ("text", "filename", "mime"):
        if key in part:
            part[key] = _mark(part[key])
    if p.state is not None:
        raw = bytes(p.state.input).lstrip()
        if not raw.startswith(b"{"):
            raise _Unsure()
        state = {k: v for k, v in (("status", p.state.status), ("output", _mark(p.state.output)),
                                   ("error", _mark(p.state.error)), ("time", p.state.time)) if v is not None}
        part["state"] = {**state, "input": {}}
    return part


def _full(table: str, rid: str, data: bytes, file: str) -> dict[str, Any]:
    try:
        value = loads_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FormatError(f"the data is not UTF-8 (byte {exc.start})", file=file, path=f"{table} {rid}") from None
    except JsonProblem as exc:
        raise FormatError(f"the data is not JSON: {exc}", file=file, path=f"{table} {rid}") from None
    except RecursionError:
        raise FormatError(f"the data is not a record: {TOO_DEEP}", file=file, path=f"{table} {rid}") from None
    if not isinstance(value, dict):
        raise FormatError(f"the data must be a JSON object, got {type(value).__name__}", file=file,
                          path=f"{table} {rid}")
    return value


def read_rows(rows: Iterable[Row], *, file: str, bill_only: bool = False) -> tuple[Session, str] | None:
    """``(session, digest of its records)`` (see the module); None when ``bill_only`` is unsure."""
    h = hashlib.sha256()
    info: Record | None = None
    messages: dict[str, tuple[Record, list[Record]]] = {}
    budget = RecordBudget(file=file)
    for table, owner, rid, data in rows:
        h.update(f"{table}\0{owner}\0{rid}\0{len(data)}\0".encode("utf-8"))
        h.update(data)
        budget.add(data, f"{table} {rid}")  # the limits of a file, before the record is parsed
        if bill_only:
            try:
                value = _slim(table, data)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, _Unsure):
                return None
        else:
            value = _full(table, rid, data, file)
        value.setdefault("id", rid)  # the database keeps ids in columns, the older files in the data too
        record = Record(f"{table} {rid}", value)
        if table == "session":
            info = record
        elif table == "message":
            messages[rid] = (record, [])
        elif owner in messages:
            messages[owner][1].append(record)
        else:
            raise FormatError(f"part {rid!r} belongs to message {owner!r}, which this session does not hold",
                              file=file, path=f"part {rid}")
    if info is None:
        raise FormatError("no session record", file=file)
    return build(Conversation(info, list(messages.values())), file=file), h.hexdigest()


__all__ = ["Row", "read_rows"]
