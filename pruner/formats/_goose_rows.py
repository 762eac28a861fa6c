"""Goose's database rows read into a Session, in full or for the bill only.

A row is ``(table, id, columns)``: the ``sessions`` row first (its columns, ``model_config_json``
parsed), then the session's ``messages`` rows in Goose's order (``id``, ``message_id``, ``role``,
``content_json``, ``created_timestamp``, ``metadata_json``). ``read_rows`` hashes every column of
every row (the session's digest) and builds the session with ``pruner.formats.goose.build``, the
reader of a ``goose session export`` document, so a database session and its export give one Session.

``bill_only``: ``content_json`` is decoded by msgspec into only what the bill, the cache ledger and
the row read (each item's type; whether its text is empty; a tool call's id and name, and whether its
arguments are an object; a tool result's status, whether its content is empty, and ``isError``), and
the same ``build`` runs on that skeleton. Anything msgspec refuses returns None and the full reading
decides, with its error naming the row and the column.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

import msgspec

from ..errors import FormatError
from ..jsonio import JsonProblem, loads_json
from ..model import Session
from .common import TOO_DEEP, RecordBudget
from .goose import Conversation, Record, build

#: One stored row: (table, id, {column: value}).
Row = tuple[str, str, dict[str, Any]]
#: The JSON columns of a row, parsed.
JSON_COLUMNS = ("content_json", "metadata_json", "model_config_json", "extension_data")


class _Call(msgspec.Struct):
    name: Any = None
    arguments: msgspec.Raw = msgspec.Raw(b"{}")


class _CallResult(msgspec.Struct):
    status: Any = None
    value: _Call | None = None
    error: Any = None


class _Item(msgspec.Struct):
    type: Any = None
    text: Any = None
    thinking: Any = None
    mimeType: Any = None
    id: Any = None
    toolCall: _CallResult | None = None
    toolResult: Any = None


_ITEMS = msgspec.json.Decoder(list[_Item])


class _Unsure(Exception):
    """A row only the full reading reads (or refuses) as it should."""


def _mark(value: Any) -> Any:
    return ("x" if value else "") if isinstance(value, str) else value


def _slim_result(result: Any) -> Any:
    """A tool result with its content reduced to one empty or non-empty text (``isError`` kept)."""
    if not isinstance(result, dict):
        return result
    value = result.get("value")
    items = value.get("content") if isinstance(value, dict) else value
    if result.get("status") != "success" or not isinstance(items, list):
        return {k: _mark(v) if k == "error" else v for k, v in result.items() if k in ("status", "error", "value")}
    # the full reading joins one line per item: empty only for no item, or one item of empty text
    empty = not items or (len(items) == 1 and isinstance(items[0], dict) and items[0].get("text") == "")
    slim: dict[str, Any] = {"content": [{"type": "text", "text": "" if empty else "x"}]}
    if isinstance(value, dict) and "isError" in value:
        slim["isError"] = value["isError"]
    return {"status": "success", "value": slim}


def _slim_content(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for item in _ITEMS.decode(raw):
        d: dict[str, Any] = {k: v for k, v in (("type", item.type), ("id", item.id), ("mimeType", item.mimeType))
                             if v is not None}
        for key in ("text", "thinking"):
            value = getattr(item, key)
            if value is not None:
                d[key] = _mark(value)
        if item.toolCall is not None:
            call: dict[str, Any] = {"status": item.toolCall.status}
            if item.toolCall.value is not None:
                if not bytes(item.toolCall.value.arguments).lstrip().startswith((b"{", b"null")):
                    raise _Unsure()
                call["value"] = {"name": item.toolCall.value.name, "arguments": {}}
            if item.toolCall.error is not None:
                call["error"] = _mark(item.toolCall.error)
            d["toolCall"] = call
        if item.toolResult is not None:
            d["toolResult"] = _slim_result(item.toolResult)
        out.append(d)
    return out


def _json(value: Any, file: str, where: str) -> Any:
    if value is None:
        return None
    text = value if isinstance(value, str) else bytes(value)
    try:
        return loads_json(text if isinstance(text, str) else text.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FormatError(f"the column is not UTF-8 (byte {exc.start})", file=file, path=where) from None
    except JsonProblem as exc:
        raise FormatError(f"the column is not JSON: {exc}", file=file, path=where) from None
    except RecursionError:
        raise FormatError(f"the column is not a record: {TOO_DEEP}", file=file, path=where) from None


def _text(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _digest(h: Any, table: str, rid: str, columns: dict[str, Any]) -> None:
    h.update(f"{table}\0{rid}\0".encode("utf-8"))
    for key in sorted(columns):
        value = columns[key]
        data = value if isinstance(value, bytes) else repr(value).encode("utf-8")
        h.update(f"{key}\0{len(data)}\0".encode("utf-8"))
        h.update(data)


def read_rows(rows: Iterable[Row], *, file: str, bill_only: bool = False) -> tuple[Session, str] | None:
    """``(session, digest of its rows)`` (see the module); None when ``bill_only`` is unsure."""
    h = hashlib.sha256()
    info: Record | None = None
    messages: list[Record] = []
    budget = RecordBudget(file=file)
    for table, rid, columns in rows:
        _digest(h, table, rid, columns)
        where = f"{table} row {rid}"
        for key in JSON_COLUMNS:  # the limits of a file, before the row's JSON is parsed
            value = columns.get(key)
            if isinstance(value, (bytes, str)):
                budget.add(value, f"{where} {key}")
        if table == "sessions":
            data = {k: _text(v) for k, v in columns.items() if k not in JSON_COLUMNS}
            config = _json(columns.get("model_config_json"), file, f"{where} model_config_json")
            if config is not None:
                data["model_config"] = config
            info = Record(where, data)
            continue
        message: dict[str, Any] = {"role": _text(columns.get("role")), "created": columns.get("created_timestamp")}
        if columns.get("message_id") is not None:
            message["id"] = _text(columns["message_id"])
        raw = columns.get("content_json")
        if bill_only:
            try:
                message["content"] = _slim_content(raw if isinstance(raw, bytes) else str(raw).encode("utf-8"))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, _Unsure):
                return None
        else:
            message["content"] = _json(raw, file, f"{where} content_json")
            meta = _json(columns.get("metadata_json"), file, f"{where} metadata_json")
            if meta is not None:
                message["metadata"] = meta
        messages.append(Record(where, message))
    if info is None:
        raise FormatError("no session row", file=file)
    return build(Conversation(info, messages), file=file), h.hexdigest()


__all__ = ["Row", "read_rows"]
