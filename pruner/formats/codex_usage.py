"""Codex, read for the bill and the cache ledger only: the rollout's skeleton, streamed, not its text.

``pruner logs`` without strategies needs, per request, its usage, model and
time, and of the messages between requests only what the cache ledger looks at
(role, whether an assistant message has text and how many calls it makes,
whether a tool result is linked to a call, the time, recorded compactions).
``read_usage`` reads exactly that from a Codex rollout, line by line
(``usage_lines.Stream``: flat memory), each line decoded by msgspec into
Structs that declare only the fields ``codex.loads`` reads; tool outputs,
reasoning and arguments are skipped, never decoded.

It follows ``pruner.formats.codex.loads`` and its ``openai_responses.ItemReader``
(this repository, the same commit) step by step: the same messages at the same
positions (an assistant message opened by a call, calls joining it until a
message or an output closes it, a result linked to the first unanswered call
with its id, or kept unlinked), each ``token_count`` event billed to the latest
assistant message with ``codex.token_count_usage`` itself (an event repeating
the previous totals is not a request; a second one with no reply of its own is
the ``usage_without_reply`` repair), the model of the latest ``turn_context``
(else ``session_meta``), ``compacted`` lines as a summary and a recorded
compaction. ``tests/unit/logs/test_logs_fast_readers.py`` checks that the row is the full
reader's on every shared real rollout, the sample, and generated files.

Where the full reader would do something this one does not model, it returns
None and the caller reads the file in full: a file ``detect_format`` does not
call Codex, a line msgspec refuses or whose fields have other types than
declared, a line that is not an object or has no ``payload`` (an older rollout
of bare items), a message the full reader refuses (no role, a content that is
not text or parts, a call without id or name, a result answering no call), a
session that records no ``cwd`` in its ``session_meta``, and what
``usage_lines`` leaves to the full reader.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..model import Message, Session, ToolCall
from .usage_lines import Repeats, Stream, Unsure, detected, identity
from .usage_skeleton import Skeleton
from .builder import SessionBuilder
from .codex import NAME, token_count_usage
from .openai_responses import MESSAGE_ROLES
from .repairing import Repairs

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
_KEYS = ("timestamp", "id", "call_id")  # codex._identity
_TEXT_PARTS = (None, "text", "input_text", "output_text", "refusal")


class _Part(msgspec.Struct):
    type: Any = None
    text: Any = UNSET
    refusal: Any = None


_Content = Union[str, None, list[Union[str, _Part]]]


class _Payload(msgspec.Struct):
    type: Any = UNSET
    role: Any = UNSET
    id: Any = None
    call_id: Any = None
    timestamp: Any = None
    name: Any = UNSET
    content: Union[Raw, UnsetType] = UNSET  # decoded (``_content``) for a message only
    output: Union[Raw, UnsetType] = UNSET
    model: Any = UNSET
    provider: Any = UNSET
    info: Any = None
    cwd: Any = None
    instructions: Any = None


class _Line(msgspec.Struct):
    type: Any = None
    timestamp: Any = None
    id: Any = None
    call_id: Any = None
    payload: Union[_Payload, None, UnsetType] = UNSET


_decode = msgspec.json.Decoder(_Line).decode
_content = msgspec.json.Decoder(_Content).decode
_list = msgspec.json.Decoder(list[Union[str, dict[str, Any]]]).decode


class _Reply:
    """An assistant message being assembled (usage and calls arrive on later lines)."""

    __slots__ = ("text", "calls", "meta")

    def __init__(self, text: bool, meta: dict[str, Any]):
        self.text, self.calls, self.meta = text, 0, meta


def _text(content: Any) -> bool:
    """Whether ``flatten_content`` gives text (a ``FormatError`` there is ``Unsure`` here)."""
    if content is None:
        return False
    if isinstance(content, str):
        return bool(content)
    if len(content) != 1:
        return len(content) > 1  # joined with newlines
    part = content[0]
    if isinstance(part, str):
        return bool(part)
    text = part.text if part.text is not UNSET else part.refusal
    return not (part.type in _TEXT_PARTS and isinstance(text, str)) or bool(text)


class _Reader:
    def __init__(self, file: str):
        self.repairs = Repairs()
        self.b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=self.repairs)
        self.out = Skeleton()  # Message, or _Reply until the end
        self.open: _Reply | None = None  # the assistant message calls may still join
        self.last: _Reply | None = None  # the latest assistant message
        self.calls: dict[str, int] = {}  # original call id -> calls made with it, not yet answered
        self.compactions: list[dict[str, Any]] = []
        self.model = ""
        self.name = ""
        self.cwd: Any = None
        self.last_total: Any = None

    def _reply(self, text: bool, meta: dict[str, Any]) -> _Reply:
        reply = _Reply(text, meta)
        self.out.reply(reply, meta)
        self.last = reply
        return reply

    def line(self, lineno: int, line: _Line) -> None:
        kind, p = line.type, line.payload
        if not isinstance(p, _Payload):
            raise Unsure()  # a bare item, or a payload of no object: the full reader
        meta = {"timestamp": line.timestamp} if isinstance(line.timestamp, str) else {}
        if kind == "session_meta":
            self.cwd = p.cwd
            self.name = str(p.id or self.name)
            if isinstance(p.model, str) and p.model and not self.model:
                self.model = p.model
            if isinstance(p.instructions, str) and p.instructions.strip():
                self.out.plain("system", "x", meta)
        elif kind == "response_item":
            self.item(p, meta)
        elif kind == "event_msg":
            if p.type == "token_count":
                self.token_count(lineno, p)
        elif kind == "turn_context":
            if isinstance(p.model, str) and p.model:
                self.model = p.model
        elif kind == "compacted":
            self.compactions.append({"entry_id": None, "summary": "x", "first_kept_message_id": None,
                                     "first_kept_index": None, "tokens_before": None,
                                     "position_index": len(self.out.out)})
            self.out.plain("summary", "x", {**meta, "kind": "compaction"})
        # any other line type: an unknown entry, named by the full reader's repairs (not damage)

    def item(self, p: _Payload, meta: dict[str, Any]) -> None:
        """``ItemReader.add``."""
        kind = p.type if p.type is not UNSET else ("message" if p.role is not UNSET else None)
        if kind == "message":
            if p.role not in MESSAGE_ROLES:
                raise Unsure()  # no role, or one the full reader refuses
            text = _text(None if p.content is UNSET else _content(p.content))
            if p.role == "assistant":
                source = {k: v for k, v in (("model", p.model), ("provider", p.provider)) if v is not UNSET}
                self.open = self._reply(text, {**meta, "source": source} if source else meta)
            else:
                self.open = None
                self.out.plain("system" if p.role == "developer" else p.role, "x" if text else "", meta)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            if self.open is None:
                self.open = self._reply(False, {})  # ItemReader._assistant: no metadata of its own
            name = p.name if p.name is not UNSET else ("local_shell" if kind == "local_shell_call" else None)
            call = p.call_id
            if not isinstance(call, str) or not call or not isinstance(name, str) or not name:
                raise Unsure()
            self.calls[call] = self.calls.get(call, 0) + 1
            self.open.calls += 1
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self.open = None
            out = p.output
            if isinstance(out, Raw):
                first = bytes(out)[:1]
                if first == b"[":
                    _list(out)  # parts must be text or objects (flatten_content); msgspec refuses others
                elif first not in (b'"', b"n"):
                    raise Unsure()  # a number, a boolean or an object: the full reader refuses it
            call = p.call_id
            if not isinstance(call, str) or not call or call not in self.calls:
                raise Unsure()  # a result with no call id, or answering no call: refused
            linked = self.calls[call] > 0
            self.calls[call] -= linked
            self.out.plain("tool", "x", meta, "call" if linked else None)
        # reasoning: thinking only; any other item: kept unmapped

    def token_count(self, lineno: int, p: _Payload) -> None:
        info = p.info or {}
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if total is not None and total == self.last_total:
            return  # the same count again: not a request
        self.last_total = total
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        target = self.last
        if isinstance(last, dict) and target is not None:
            if "usage" in target.meta:
                self.repairs.add("usage_without_reply", lineno)
                return
            self.b.line = lineno
            recorded = token_count_usage(self.b, last)
            if recorded is not None:
                target.meta["usage"] = recorded
            if self.model:
                target.meta["model"] = self.model

    def session(self) -> Session:
        if not isinstance(self.cwd, str) or not self.cwd:
            raise Unsure()  # recorded_cwd would look further
        out = self.out.finish(lambda r: r.meta)
        for i, m in enumerate(out):
            if isinstance(m, _Reply):
                out[i] = Message(id="m", role="assistant", content="x" if m.text else "",
                                 tool_calls=(_CALL,) * m.calls, metadata=m.meta)
        metadata: dict[str, Any] = {"source": {"session_meta": {"cwd": self.cwd}}}
        if self.compactions:
            metadata["recorded_compactions"] = self.compactions
        self.repairs.merge_into(metadata)
        return Session(messages=tuple(out), name=self.name, source_format=NAME, metadata=metadata)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Codex rollout ``path`` and the file's SHA-256, or None when the full
    reader (``pruner.formats.load_session``) must read it (see the module)."""
    try:
        with Stream(path) as stream:
            reader = _Reader(stream.file)
            repeats = Repeats(stream)
            checked = False
            for lineno, offset, raw in stream.lines():
                if not checked:
                    if not detected(stream, NAME):
                        return None
                    checked = True
                line = _decode(raw)
                key = identity(line, _KEYS)
                if key is None and isinstance(line.payload, _Payload):
                    key = identity(line.payload, _KEYS)
                if key is not None and repeats.repeated(key, raw, offset):
                    continue
                reader.line(lineno, line)
            return reader.session(), stream.digest
    except Exception:  # Unsure, a line msgspec refuses, anything the full reader should name: it reads the file
        return None
