"""SWE-agent trajectories (``.traj`` JSON).

``history`` is an OpenAI-style message list whose tool messages carry
``tool_call_ids`` (a list) instead of ``tool_call_id``; the extra fields
(``message_type``, ``thought``, ``action``, ``agent``) go to
``metadata["source"]``, and step ``i`` of ``trajectory`` (its
``execution_time`` and ``state``) goes to the ``i``-th assistant action.
``info``, ``environment`` and ``replay_config`` are kept in
``Session.metadata["source"]``. SWE-agent replays reuse call ids; each call
stays distinct (see ``SessionBuilder``). An observation answering several
calls is attached to the first; the others get an empty result that says so.

>>> text = ('{"history": [{"role": "user", "content": "fix it"}], "trajectory": [], "info": {}}')
>>> [m.role for m in loads(text).messages]
['user']
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import FormatError
from ..model import Session
from .builder import SessionBuilder
from .common import Probe, chat_message_fields, document, jpath, type_name, unmapped, with_source

NAME = "swe_agent"
ORDER = 70  # where --help and FORMATS list it
DESCRIPTION = "SWE-agent trajectory (.traj JSON with a 'history' message list)"
ROLES = ("system", "user", "assistant", "tool")
_KNOWN = ("role", "content", "tool_calls", "tool_call_ids", "tool_call_id")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document or not isinstance(probe.document, dict):
        return 0.0
    doc = probe.document
    if isinstance(doc.get("history"), list) and any(k in doc for k in ("trajectory", "info", "environment")):
        return 1.0
    return 0.0


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    doc = document(text, file=file)
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with a 'history' "
                          "list (a SWE-agent .traj file)", file=file, path="$")
    trajectory = doc.get("trajectory")
    steps: list[Any] = trajectory if isinstance(trajectory, list) else []
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools)
    actions = 0
    for i, m in enumerate(doc["history"]):
        where = jpath("$.history", i)
        role, content, extra = chat_message_fields(b, m, where, roles=ROLES, known=_KNOWN)
        mid = f"m{i}"
        if role == "tool":
            ids = m.get("tool_call_ids")
            if ids is None and "tool_call_id" in m:
                ids = [m["tool_call_id"]]
            if not isinstance(ids, list) or not ids:
                raise b.error("tool message has no 'tool_call_ids' list naming the calls it answers", where)
            for k, cid in enumerate(ids):
                text = content if k == 0 else f"[the output above, {mid}, answers this call too]"
                b.add_result(original_call_id=cid, id=mid if k == 0 else f"{mid}_{k}", content=text,
                             where=jpath(where, "tool_call_ids", k), metadata=with_source({}, dict(extra)))
            continue
        meta: dict[str, Any] = {}
        if role == "assistant" and m.get("message_type") == "action" and actions < len(steps) \
                and isinstance(steps[actions], dict):
            step = steps[actions]
            extra["trajectory_step"] = {k: step[k] for k in ("execution_time", "state") if k in step}
            actions += 1
        draft = b.add(id=mid, role=role, content=content, where=where, metadata=with_source(meta, extra))
        calls = m.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise b.error(f"field 'tool_calls' must be a list, got {type_name(calls)}", jpath(where, "tool_calls"))
        for j, c in enumerate(calls or []):
            cwhere = jpath(where, "tool_calls", j)
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict):
                raise b.error("tool call has no 'function' object with 'name' and 'arguments'", cwhere)
            b.add_call(draft, original_id=c.get("id"), name=fn.get("name"), arguments=fn.get("arguments", "{}"),
                       where=cwhere)
    source = unmapped(doc, ("history", "trajectory"))
    source["trajectory_steps"] = len(steps)
    return b.build(metadata={"source": source})
