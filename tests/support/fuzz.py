"""Structured fuzzing of every transcript format: strategies for hostile files, and the check they must pass.

Each strategy draws a file shaped like its format (the records, fields and
block types the importer looks for) and then spoils it: any value may turn
into a wrong type, a huge or deeply nested value, NaN, Infinity, ``1e999`` or
a 5,000-digit integer; any text may hold control characters, non-BMP
characters, U+2028 and lone surrogates; ids come from small pools, so they
repeat and dangle; records are shuffled out of order; JSONL files get blank,
broken, non-object and repeated lines.

``check`` is the contract (issue 12): a file gives either a ``PrunerError``
with a one-line message, or a session that survives the native round trip
unchanged and exports to OpenAI Chat Completions and Anthropic Messages
API-valid, strict JSON, with every message's content byte-identical and every
tool result with its own call.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from pruner.errors import ExportError, FormatError, PrunerError
from pruner.formats import loads
from pruner.formats.export import export, validate_anthropic_messages, validate_openai_messages
from pruner.formats.export.anthropic import CONTINUATION, EMPTY_RESULT, SYSTEM_PREFIX
from pruner.formats.export.openai import MISSING_RESULT, RETRIEVED_PREFIX, SUMMARY_PREFIX, TOOL_OUTPUT_PREFIX
from pruner.model import parse_arguments


class Raw(str):
    """JSON text put into a file as it is (values no Python object can stand for: NaN, 1e999, ...)."""


SPECIAL = ["\x00", "\x07", "\x1b[31m", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\ud800", "\udbff", "\udc00",
           "\udfff", "\ufeff", "\u202e", "\U0001F600", "\U0010FFFF", "\r", "\n", "\t", " ", "\\", '"', "é"]
TEXT = st.one_of(
    st.lists(st.sampled_from(SPECIAL) | st.characters(max_codepoint=0x2FFF, exclude_categories=("Cs",))
             | st.sampled_from(list("ab xy.")), max_size=24).map("".join),
    st.sampled_from(["", " ", "hi", "NaN", "DEFINE:k", "REF:k", "null"]),
    st.integers(2_000, 40_000).map(lambda n: "w" * n),  # huge, and without whitespace
)
RAW_JUNK = st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"), Raw("9" * 5000),
                            Raw("[" * 3000 + "]" * 3000), Raw('{"a":' * 600 + "1" + "}" * 600)])
JUNK = st.one_of(st.sampled_from([None, True, False, 0, -1, 2**70, 1.5, "", [], {}, [1, "x"], {"k": "v"}]),
                 RAW_JUNK, st.recursive(st.integers(0, 3), lambda inner: st.lists(inner, max_size=2), max_leaves=6))
IDS = st.sampled_from(["a", "b", "c", "u1", "m0", "m1", "x_2", "line3"])
CALL_IDS = st.sampled_from(["c1", "c2", "c1_2", "call.9", "t"])
NAMES = st.sampled_from(["search", "read_file", "f", "", "a b"])


HOSTILITY = st.sampled_from([3, 12, 60, 0])  # odds of spoiling a value: 1 in n (0: never, a clean file)


def spoil(draw, strategy, odds: int):
    """A value from ``strategy``, or (about once in ``odds``; never when 0) junk of any type."""
    return draw(JUNK) if odds and draw(st.integers(1, odds)) == 1 else draw(strategy)


def record(draw, fields: dict[str, Any], odds: int) -> dict[str, Any]:
    """``fields`` (key -> strategy) drawn, each possibly spoiled, some left out, an unknown one added."""
    out = {}
    for key, strategy in fields.items():
        if odds and draw(st.integers(1, 2 * odds)) == 1:
            continue  # a missing field
        out[key] = spoil(draw, strategy, odds)
    if odds and draw(st.integers(1, odds)) == 1:
        out["unknown_field"] = draw(JUNK)
    return out


def kind(good: list[Any], bad: list[Any], odds: int):
    """A role or type: one the format knows, or (about once in ``odds``) one it does not."""
    if not odds:
        return st.sampled_from(good)
    return st.integers(1, odds).flatmap(lambda n: st.sampled_from(bad if n == 1 else good))


def content_strategy(block):
    return st.one_of(TEXT, st.none(), st.lists(block, max_size=3))


@st.composite
def text_part(draw, odds):
    return record(draw, {"type": st.sampled_from(["text", "input_text", "output_text", "image_url", "refusal"]),
                         "text": TEXT}, odds)


@st.composite
def arguments(draw, odds):
    value = spoil(draw, st.dictionaries(st.sampled_from(["q", "path", "x"]), TEXT | st.integers(), max_size=2), odds)
    if draw(st.booleans()):
        return encode(value, draw(st.booleans()))  # as the JSON string Chat Completions sends
    return value


# -- one file per format: each strategy takes the file's hostility ------------------------------------

@st.composite
def native_file(draw, odds) -> list[Any]:
    header = record(draw, {"pruner_session": st.just(1), "name": TEXT, "source_format": TEXT,
                           "metadata": st.dictionaries(st.sampled_from(["k", "repairs"]), TEXT, max_size=2)}, odds)
    header.setdefault("pruner_session", 1)
    call = st.builds(dict, id=CALL_IDS, name=NAMES, arguments=arguments(odds))
    messages = [record(draw, {"id": IDS, "role": kind(["system", "user", "assistant", "tool", "retrieved_doc",
                                                        "summary"], ["robot", "User"], odds),
                              "content": TEXT, "turn": st.integers(-1, 3), "tool_calls": st.lists(call, max_size=2),
                              "tool_call_id": CALL_IDS, "tool_name": NAMES, "defines": st.lists(TEXT, max_size=1),
                              "refs": st.lists(TEXT, max_size=1), "expires_after_turn": st.integers(0, 3),
                              "required": st.booleans(), "metadata": st.dictionaries(TEXT, TEXT, max_size=1)}, odds)
                for _ in range(draw(st.integers(0, 6)))]
    if odds == 0 or draw(st.booleans()):  # mostly well-formed: ids unique, calls only on assistants
        seen: set = set()
        seen_calls: set = set()
        for k, m in enumerate(messages):
            if repr(m.get("id")) in seen:
                m["id"] = f"auto{k}"
            seen.add(repr(m.get("id")))
            if m.get("role") != "assistant":
                m.pop("tool_calls", None)
            calls = m.get("tool_calls") if isinstance(m.get("tool_calls"), list) else []
            if repr(m.get("tool_call_id")) not in seen_calls:
                m.pop("tool_call_id", None)
            seen_calls.update(repr(c.get("id")) for c in calls if isinstance(c, dict))
    return [header, *messages]


@st.composite
def chat_message(draw, odds) -> dict[str, Any]:
    call = st.builds(lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
                     CALL_IDS, NAMES, arguments(odds))
    role = draw(kind(["system", "user", "user", "assistant", "assistant", "tool"],
                     ["developer", "function", "robot"], odds))
    fields = {"role": st.just(role), "content": content_strategy(text_part(odds)), "name": NAMES,
              "reasoning_content": TEXT}
    if role == "assistant" or (odds and draw(st.integers(1, odds)) == 1):
        fields["tool_calls"] = st.lists(call, max_size=2)
    if role == "tool" or (odds and draw(st.integers(1, odds)) == 1):
        fields["tool_call_id"] = CALL_IDS
    return record(draw, fields, odds)


@st.composite
def openai_chat_file(draw, odds) -> Any:
    messages = draw(st.lists(chat_message(odds), max_size=7))
    shape = draw(st.integers(0, 3))
    if shape == 1:
        return {"messages": messages}
    if shape == 2:  # tau-bench records; the check picks dialogue 0
        other = draw(st.lists(chat_message(odds), max_size=3))
        return [{"task_id": 0, "traj": messages}, {"task_id": 1, "traj": other}]
    return messages


@st.composite
def responses_item(draw, odds) -> dict[str, Any]:
    return record(draw, {"type": kind(["message", "function_call", "function_call_output", "custom_tool_call",
                                       "custom_tool_call_output", "reasoning"], ["web_search_call", "mesage"], odds),
                         "role": kind(["user", "assistant", "system", "developer"], ["robot"], odds),
                         "content": content_strategy(text_part(odds)), "call_id": CALL_IDS, "name": NAMES,
                         "arguments": arguments(odds), "input": TEXT,
                         "output": TEXT | st.lists(text_part(odds), max_size=2), "id": IDS,
                         "summary": st.lists(text_part(odds), max_size=2)}, odds)


@st.composite
def openai_responses_file(draw, odds) -> Any:
    items = draw(st.lists(responses_item(odds), max_size=7))
    if draw(st.booleans()):
        return {"instructions": spoil(draw, TEXT, odds), "input": items[: len(items) // 2],
                "output": items[len(items) // 2:]}
    return items


@st.composite
def anthropic_block(draw, odds) -> dict[str, Any]:
    return record(draw, {"type": kind(["text", "text", "tool_use", "tool_result", "thinking"],
                                      ["image", "redacted_thinking", "server_tool_use"], odds),
                         "text": TEXT, "id": CALL_IDS, "name": NAMES, "input": arguments(odds),
                         "tool_use_id": CALL_IDS, "content": TEXT | st.lists(text_part(odds), max_size=2),
                         "is_error": st.booleans(), "thinking": TEXT}, odds)


@st.composite
def anthropic_file(draw, odds) -> Any:
    messages = [record(draw, {"role": kind(["user", "assistant"], ["system", "robot"], odds),
                              "content": content_strategy(anthropic_block(odds)), "id": IDS}, odds)
                for _ in range(draw(st.integers(0, 7)))]
    if draw(st.booleans()):
        return {"system": spoil(draw, TEXT | st.lists(text_part(odds), max_size=2), odds), "messages": messages}
    return messages


@st.composite
def claude_code_file(draw, odds) -> list[Any]:
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        line_type = draw(kind(["user", "user", "assistant", "assistant", "summary", "system"],
                              ["file-history-snapshot", "User", "human", "progress"], odds))
        message = record(draw, {"role": st.sampled_from(["user", "assistant"]), "id": st.sampled_from(["m1", "m2"]),
                                "content": content_strategy(anthropic_block(odds)),
                                "usage": st.fixed_dictionaries({"input_tokens": st.integers(0, 10)})}, odds)
        rows.append(record(draw, {"type": st.just(line_type), "uuid": IDS, "parentUuid": IDS | st.none(),
                                  "sessionId": st.just("s1"), "isSidechain": st.sampled_from([False, False, True]),
                                  "message": st.just(message), "isCompactSummary": st.sampled_from([False, True]),
                                  "subtype": st.just("compact_boundary"), "toolUseResult": TEXT}, odds))
    return rows


@st.composite
def pi_file(draw, odds) -> list[Any]:
    header = record(draw, {"type": st.just("session"), "version": kind([1, 2, 3, 3], [4, "3"], odds), "id": IDS,
                           "cwd": TEXT}, odds)
    header["type"] = "session"
    rows = [header]
    block = st.builds(dict, type=st.sampled_from(["text", "thinking", "toolCall"]), text=TEXT, thinking=TEXT,
                      id=CALL_IDS, name=NAMES, arguments=arguments(odds))
    previous = None
    for k in range(draw(st.integers(0, 7))):
        message = record(draw, {"role": kind(["user", "assistant", "toolResult", "bashExecution", "custom"],
                                             ["branchSummary", "robot"], odds),
                                "content": content_strategy(block), "toolCallId": CALL_IDS, "toolName": NAMES,
                                "isError": st.booleans(), "command": TEXT, "output": TEXT, "summary": TEXT}, odds)
        eid = draw(IDS) if odds and draw(st.integers(1, odds)) == 1 else f"e{k}"
        rows.append(record(draw, {"type": kind(["message", "message", "message", "compaction", "branch_summary",
                                                "custom_message", "model_change"], ["mesage", "label"], odds),
                                  "id": st.just(eid),
                                  "parentId": IDS if odds and draw(st.integers(1, odds)) == 1 else st.just(previous),
                                  "timestamp": st.sampled_from(["t1", "t2"]), "message": st.just(message),
                                  "summary": TEXT, "firstKeptEntryId": IDS, "content": TEXT}, odds))
        previous = eid
    return rows


@st.composite
def codex_file(draw, odds) -> list[Any]:
    rows = [{"type": "session_meta", "payload": record(draw, {"id": IDS, "instructions": TEXT}, odds)}]
    for _ in range(draw(st.integers(0, 7))):
        line_type = draw(kind(["response_item", "response_item", "event_msg", "turn_context", "compacted"],
                              ["response_itme"], odds))
        if line_type == "response_item":
            payload = draw(responses_item(odds))
        elif line_type == "event_msg":
            usage = {"input_tokens": spoil(draw, st.integers(0, 9), odds)}
            payload = {"type": "token_count", "info": {"last_token_usage": usage}}
        else:
            payload = record(draw, {"message": TEXT}, odds)
        rows.append(record(draw, {"timestamp": st.sampled_from(["2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z"]),
                                  "type": st.just(line_type), "payload": st.just(payload)}, odds))
    return rows


@st.composite
def swe_agent_file(draw, odds) -> Any:
    history = []
    for _ in range(draw(st.integers(0, 7))):
        m = draw(chat_message(odds))
        if m.get("role") == "tool" and draw(st.booleans()):
            m["tool_call_ids"] = draw(st.lists(CALL_IDS, max_size=2))
        history.append(m)
    return {"history": history, "trajectory": draw(st.lists(st.fixed_dictionaries({"state": TEXT}), max_size=2)),
            "info": {"exit_status": spoil(draw, TEXT, odds)}}


@st.composite
def gemini_cli_file(draw, odds) -> Any:
    messages = []
    for k in range(draw(st.integers(0, 7))):
        result = [{"functionResponse": record(draw, {"id": CALL_IDS, "name": NAMES,
                                                      "response": st.fixed_dictionaries({"output": TEXT})}, odds)}]
        call = record(draw, {"id": CALL_IDS, "name": NAMES, "args": arguments(odds), "status": st.just("success"),
                             "result": st.just(result)}, odds)
        tokens = record(draw, {key: st.integers(0, 9000) for key in ("input", "output", "cached", "thoughts", "tool")},
                        odds)
        messages.append(record(draw, {"id": st.just(f"m{k}") | IDS,
                                      "type": kind(["user", "gemini", "gemini", "info"], ["robot", "model"], odds),
                                      "content": TEXT, "model": st.just("gemini-2.5-pro"),
                                      "thoughts": st.just([{"subject": "s", "description": "d"}]),
                                      "toolCalls": st.lists(st.just(call), max_size=2), "tokens": st.just(tokens)},
                               odds))
    return {"sessionId": "s1", "projectHash": "p", "messages": messages}


@st.composite
def opencode_tokens(draw, odds) -> Any:
    cache = record(draw, {"read": st.integers(0, 9000), "write": st.integers(0, 9000)}, odds)
    return record(draw, {"input": st.integers(0, 9000), "output": st.integers(0, 9000),
                         "reasoning": st.integers(0, 900), "cache": st.just(cache)}, odds)


@st.composite
def opencode_part(draw, odds, name: str) -> Any:
    state = record(draw, {"status": kind(["completed", "error", "running"], ["done"], odds), "input": arguments(odds),
                          "output": TEXT, "error": TEXT,
                          "time": st.fixed_dictionaries({"start": st.integers(0, 2 * 10**12),
                                                         "end": st.integers(0, 2 * 10**12)})}, odds)
    return record(draw, {"id": st.just(name), "type": kind(["step-start", "text", "reasoning", "tool", "tool",
                                                            "step-finish", "patch"], ["bogus"], odds),
                         "text": TEXT, "callID": CALL_IDS, "tool": NAMES, "state": st.just(state),
                         "tokens": opencode_tokens(odds), "cost": st.floats(0, 2)}, odds)


@st.composite
def opencode_file(draw, odds) -> Any:
    messages = []
    for k in range(draw(st.integers(0, 6))):
        info = record(draw, {"id": st.just(f"msg_{k}") | IDS, "role": kind(["user", "assistant", "assistant"],
                                                                            ["system"], odds),
                             "time": st.fixed_dictionaries({"created": st.integers(0, 2 * 10**12)}),
                             "modelID": st.just("claude-sonnet-4-5"), "providerID": st.just("anthropic"),
                             "tokens": opencode_tokens(odds), "cost": st.floats(0, 2)}, odds)
        parts = [draw(opencode_part(odds, f"prt_{k}_{j}")) for j in range(draw(st.integers(0, 5)))]
        messages.append(record(draw, {"info": st.just(info), "parts": st.just(parts)}, odds))
    return {"info": {"id": "ses_1", "title": "t", "directory": "/w"}, "messages": messages}


@st.composite
def goose_item(draw, odds) -> Any:
    call = record(draw, {"status": kind(["success"], ["error", "maybe"], odds),
                         "value": st.fixed_dictionaries({"name": NAMES, "arguments": arguments(odds)}),
                         "error": TEXT}, odds)
    result = record(draw, {"status": kind(["success", "error"], ["maybe"], odds),
                           "value": st.fixed_dictionaries({"content": st.lists(text_part(odds), max_size=2)})
                           | st.lists(text_part(odds), max_size=2), "error": TEXT}, odds)
    return record(draw, {"type": kind(["text", "toolRequest", "toolResponse", "thinking", "systemNotification"],
                                      ["hologram"], odds),
                         "text": TEXT, "thinking": TEXT, "id": CALL_IDS, "toolCall": st.just(call),
                         "toolResult": st.just(result)}, odds)


@st.composite
def goose_file(draw, odds) -> Any:
    messages = [record(draw, {"id": IDS, "role": kind(["user", "assistant"], ["system"], odds),
                              "created": st.integers(0, 2 * 10**9),
                              "content": st.lists(goose_item(odds), max_size=3)}, odds)
                for _ in range(draw(st.integers(0, 6)))]
    tokens = record(draw, {"accumulated_input_tokens": st.integers(0, 10**6),
                           "accumulated_output_tokens": st.integers(0, 10**5)}, odds)
    return {"id": "20260102_1", "working_dir": "/w", "name": "n", "provider_name": "anthropic",
            "model_config": {"model_name": "claude-sonnet-4-5"}, **tokens, "conversation": messages}


@st.composite
def qwen_code_file(draw, odds) -> list[Any]:
    rows = []
    for k in range(draw(st.integers(1, 7))):  # at least one line (file_text repeats a line)
        part = st.one_of(st.fixed_dictionaries({"text": TEXT}),
                         st.fixed_dictionaries({"text": TEXT, "thought": st.just(True)}),
                         st.fixed_dictionaries({"functionCall": st.fixed_dictionaries(
                             {"id": CALL_IDS, "name": NAMES, "args": arguments(odds)})}),
                         st.fixed_dictionaries({"functionResponse": st.fixed_dictionaries(
                             {"id": CALL_IDS, "name": NAMES,
                              "response": st.fixed_dictionaries({"output": TEXT}) | st.fixed_dictionaries(
                                  {"error": TEXT})})}),
                         st.just({"inlineData": {"mimeType": "image/png", "data": "AA=="}}))
        message = record(draw, {"role": st.sampled_from(["user", "model"]), "parts": st.lists(part, max_size=3)}, odds)
        usage = record(draw, {key: st.integers(0, 9000) for key in (
            "promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount", "thoughtsTokenCount",
            "totalTokenCount", "toolUsePromptTokenCount")}, odds)
        rows.append(record(draw, {"uuid": st.just(f"r{k}") | IDS, "parentUuid": IDS | st.none(),
                                  "sessionId": st.just("s1"), "timestamp": st.sampled_from(
                                      ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:05.000Z"]),
                                  "type": kind(["user", "assistant", "assistant", "tool_result", "system"],
                                               ["model", "robot"], odds),
                                  "subtype": st.sampled_from(["ui_telemetry", "chat_compression"]),
                                  "cwd": st.just("/w"), "message": st.just(message),
                                  "model": st.sampled_from(["qwen3-coder-plus", "gpt-4.1"]),
                                  "usageMetadata": st.just(usage),
                                  "toolCallResult": st.fixed_dictionaries({"status": st.sampled_from(
                                      ["success", "error"])}),
                                  "isSidechain": st.sampled_from([False, True]),
                                  "agentId": st.sampled_from(["a1", "main"])}, odds))
    return rows


@st.composite
def copilot_cli_file(draw, odds) -> list[Any]:
    start = {"type": "session.start", "id": "e0", "timestamp": "2026-01-01T00:00:00.000Z",
             "data": record(draw, {"sessionId": st.just("s1"), "context": st.just({"cwd": "/w"})}, odds)}
    rows = [start]
    usage = st.fixed_dictionaries({key: st.integers(0, 9000) for key in (
        "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")})
    # 1.0.x: the uncached part of inputTokens (which holds the cache reads and writes) in tokenDetails
    details = st.fixed_dictionaries({"input": st.fixed_dictionaries({"tokenCount": st.integers(0, 9000)})})
    metric = st.fixed_dictionaries({"usage": usage}, optional={"tokenDetails": details})
    for k in range(draw(st.integers(0, 7))):
        kind_ = draw(kind(["user.message", "assistant.message", "assistant.message", "tool.execution_complete",
                           "session.shutdown", "assistant.usage", "tool.execution_start", "session.model_change",
                           "session.resume"], ["assistant", "x.y"], odds))
        request = st.fixed_dictionaries({"toolCallId": CALL_IDS, "name": NAMES, "arguments": arguments(odds)})
        data = record(draw, {"content": TEXT, "transformedContent": TEXT, "messageId": IDS,
                             "apiCallId": st.sampled_from(["a1", "a2", "a3"]),
                             "model": st.sampled_from(["gpt-5", "claude-sonnet-4.5"]),
                             "newModel": st.sampled_from(["gpt-5", "claude-opus-4.5"]),
                             "selectedModel": st.sampled_from(["gpt-4.1", "claude-sonnet-4.5"]),
                             "outputTokens": st.integers(0, 900), "toolRequests": st.lists(request, max_size=2),
                             "toolCallId": CALL_IDS, "success": st.booleans(),
                             "result": st.fixed_dictionaries({"content": TEXT}),
                             "error": st.fixed_dictionaries({"message": TEXT}),
                             "inputTokens": st.integers(0, 9000), "cacheReadTokens": st.integers(0, 9000),
                             "modelMetrics": st.dictionaries(st.sampled_from(["gpt-5", "gpt-4.1"]), metric, max_size=2),
                             "agentMetrics": st.dictionaries(st.sampled_from(["main", "sub-1"]), st.fixed_dictionaries(
                                 {"modelMetrics": st.dictionaries(st.sampled_from(["gpt-5"]), st.fixed_dictionaries(
                                     {"usage": usage}), max_size=1)}), max_size=2)}, odds)
        rows.append(record(draw, {"type": st.just(kind_), "id": st.just(f"e{k + 1}") | IDS,
                                  "timestamp": st.sampled_from(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02Z"]),
                                  "agentId": st.sampled_from(["sub-1", "main"]), "data": st.just(data)}, odds))
    return rows


@st.composite
def amp_file(draw, odds) -> Any:
    block = st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
                      st.fixed_dictionaries({"type": st.just("thinking"), "thinking": TEXT}),
                      st.fixed_dictionaries({"type": st.just("tool_use"), "id": CALL_IDS, "name": NAMES,
                                             "input": arguments(odds)}),
                      st.fixed_dictionaries({"type": st.just("tool_result"), "toolUseID": CALL_IDS,
                                             "run": st.fixed_dictionaries({"status": st.sampled_from(
                                                 ["done", "error", "cancelled"]), "result": TEXT})}),
                      st.just({"type": "image", "source": {"type": "base64", "data": "AA=="}}))
    usage = record(draw, {"model": st.sampled_from(["claude-sonnet-4-5-20250929", "gpt-5", "mystery-1"]),
                          "inputTokens": st.integers(0, 9000), "outputTokens": st.integers(0, 900),
                          "cacheCreationInputTokens": st.integers(0, 9000),
                          "cacheReadInputTokens": st.integers(0, 9000), "credits": st.floats(0, 2),
                          "timestamp": st.just("2026-01-01T00:00:02.000Z")}, odds)
    messages = [record(draw, {"role": kind(["user", "assistant", "assistant", "info"], ["system", "robot"], odds),
                              "messageId": st.just(k) | st.integers(0, 3), "content": st.lists(block, max_size=3),
                              "meta": st.fixed_dictionaries({"sentAt": st.integers(1767225600000, 1767225700000)}),
                              "usage": st.just(usage)}, odds) for k in range(draw(st.integers(0, 7)))]
    ledger = {"events": [record(draw, {"model": st.just("gpt-5"), "toMessageId": st.integers(0, 7),
                                       "tokens": st.fixed_dictionaries({"input": st.integers(0, 900),
                                                                        "output": st.integers(0, 90)})}, odds)]}
    doc = {"v": 1, "id": "T-1", "env": {"initial": {"trees": [{"uri": "file:///w"}]}}, "messages": messages}
    if draw(st.booleans()):
        doc["usageLedger"] = ledger
    return doc


#: format name -> (strategy taking the hostility, is JSON Lines)
FILES = {"native": (native_file, True), "openai_chat": (openai_chat_file, False),
         "openai_responses": (openai_responses_file, False), "anthropic": (anthropic_file, False),
         "claude_code": (claude_code_file, True), "pi": (pi_file, True), "codex": (codex_file, True),
         "swe_agent": (swe_agent_file, False), "gemini_cli": (gemini_cli_file, False),
         "opencode": (opencode_file, False), "goose": (goose_file, False),
         "qwen_code": (qwen_code_file, True), "copilot_cli": (copilot_cli_file, True),
         "amp": (amp_file, False)}


# -- from values to text --------------------------------------------------------------------------------

def encode(value: Any, ascii_only: bool) -> str:
    """JSON text for ``value``; ``Raw`` pieces go in verbatim. Lone surrogates become ``\\ud800``
    escapes when ``ascii_only``, else stay raw in the text (as a hostile caller could pass them)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=ascii_only)}: {encode(v, ascii_only)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(encode(v, ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def file_text(draw, fmt: str) -> str:
    strategy, jsonl = FILES[fmt]
    odds = draw(HOSTILITY)
    value = draw(strategy(odds))
    ascii_only = draw(st.booleans())
    if not jsonl:
        if odds and isinstance(value, list) and len(value) > 1 and draw(st.integers(0, 4)) == 0:
            value = draw(st.permutations(value))  # out of order
        return encode(value, ascii_only)
    lines = [encode(v, ascii_only) for v in value]
    if odds and len(lines) > 1 and draw(st.integers(0, 4)) == 0:  # out of order, header kept first
        lines = [lines[0], *draw(st.permutations(lines[1:]))]
    for _ in range(draw(st.integers(0, 2 if odds else 0))):  # damage: blank, broken, non-object, repeated lines
        junk = draw(st.sampled_from(["", "[1, 2]", '{"type": "user", "uuid": "u', "null", '"text"', "{}",
                                     "repeat", "repeat"]))
        if junk == "repeat":
            junk = draw(st.sampled_from(lines))
        lines.insert(draw(st.integers(0, len(lines))), junk)
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + "\n"


# -- the contract ----------------------------------------------------------------------------------------

def _one_line_error(exc: PrunerError, file: str) -> None:
    message = str(exc)
    assert message and "\n" not in message and "\r" not in message, message
    if isinstance(exc, FormatError):
        assert message.startswith(file), message


def _strict_json(text: str) -> Any:
    def refuse(name):
        raise AssertionError(f"{name} in an export")
    return json.loads(text, parse_constant=refuse)


def _check_native(session) -> None:
    text = export(session, to="native").text
    text.encode("utf-8")  # every character encodable: no lone surrogate is left
    lines = text.split("\n")
    assert lines[-1] == "" and all(_strict_json(line) is not None for line in lines[:-1])
    back = loads(text, file="roundtrip.jsonl", format="native")
    assert back.messages == session.messages
    assert (back.name, back.source_format) == (session.name, session.source_format)
    assert dict(back.metadata) == {k: v for k, v in session.metadata.items() if k != "repairs"}


def _check_openai(session) -> None:
    results = {m.tool_call_id: m for m in session.messages if m.tool_call_id is not None}
    try:
        exported = export(session, to="openai")
    except ExportError as exc:  # allowed only when nothing at all could be sent
        assert all(m.tool_call_id is not None or (m.role == "assistant" and not m.tool_calls and not m.content.strip())
                   for m in session.messages), exc
        return
    out = _strict_json(exported.text)
    validate_openai_messages(out)
    p = dropped = 0
    for m in session.messages:
        if m.tool_call_id is not None:
            continue
        if m.role == "assistant" and m.tool_calls:
            assert out[p]["content"] == (m.content or None)
            calls = out[p]["tool_calls"]
            assert [c["id"] for c in calls] == [c.id for c in m.tool_calls]
            for sent, call in zip(calls, m.tool_calls):
                assert sent["function"]["name"] == call.name
                args = call.arguments
                assert sent["function"]["arguments"] == args if isinstance(args, str) else \
                    _strict_json(sent["function"]["arguments"]) == args
            for k, call in enumerate(m.tool_calls, start=1):  # each result with its own call
                r = results.get(call.id)
                assert out[p + k] == {"role": "tool", "tool_call_id": call.id,
                                      "content": r.content if r is not None else MISSING_RESULT}
            p += 1 + len(m.tool_calls)
            continue
        if m.role == "assistant" and not m.content.strip():
            dropped += 1
            continue
        prefix = {"retrieved_doc": RETRIEVED_PREFIX, "summary": SUMMARY_PREFIX, "tool": TOOL_OUTPUT_PREFIX}
        role = "user" if m.role in prefix else m.role
        assert out[p] == {"role": role, "content": prefix.get(m.role, "") + m.content}
        p += 1
    assert p == len(out) and dropped == exported.dropped_empty


def _check_anthropic(session) -> None:
    results = {m.tool_call_id: m for m in session.messages if m.tool_call_id is not None}
    try:
        exported = export(session, to="anthropic")
    except ExportError as exc:  # allowed only when there is no user or assistant content at all
        assert not any(m.tool_calls or (m.content.strip() and m.tool_call_id is None and m.role != "system")
                       for m in session.messages), exc
        return
    body = _strict_json(exported.text)
    validate_anthropic_messages(body)
    texts, uses, answers, system, leading = [], [], [], [], True
    prefix = {"retrieved_doc": "[Retrieved document]\n", "summary": SUMMARY_PREFIX, "system": SYSTEM_PREFIX,
              "tool": TOOL_OUTPUT_PREFIX}
    for m in session.messages:
        if m.tool_call_id is not None:
            continue
        if m.role == "system" and leading:
            system += [m.content] if m.content.strip() else []
            continue
        leading = False
        if m.role == "assistant":
            texts += [m.content] if m.content.strip() else []
            for c in m.tool_calls:
                args = parse_arguments(c.arguments)
                uses.append((c.name, args if isinstance(args, dict) else {"input": args}))
                r = results.get(c.id)
                text = r.content if r is not None else MISSING_RESULT
                answers.append(text if text.strip() else EMPTY_RESULT)
        elif (prefix.get(m.role, "") + m.content).strip():
            texts.append(prefix.get(m.role, "") + m.content)
    assert body["system"] == ("\n\n".join(system) if system else None)
    blocks = [b for msg in body["messages"] for b in msg["content"]]
    sent_texts = [b["text"] for b in blocks if b["type"] == "text"]
    if sent_texts[:1] == [CONTINUATION] and texts[:1] != [CONTINUATION]:
        sent_texts = sent_texts[1:]
    assert sent_texts == texts
    assert [(b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"] == uses
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    by_id = {b["tool_use_id"]: b["content"] for b in blocks if b["type"] == "tool_result"}
    assert [by_id[i] for i in ids] == answers  # each result with its own call


def check(text: str, fmt: str | None, *, file: str = "fuzz.data") -> str:
    """Either a one-line ``PrunerError`` or a session that round-trips; returns which, for statistics."""
    try:
        session = loads(text, file=file, format=fmt, dialogue=0 if fmt == "openai_chat" else None)
    except PrunerError as exc:
        _one_line_error(exc, file)
        return "refused"
    _check_native(session)
    _check_openai(session)
    _check_anthropic(session)
    return "repaired" if session.metadata.get("repairs") else "read"
