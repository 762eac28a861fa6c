"""One session's row of the logs table: who recorded it, where, when, with which models, how many requests.

The row is built from the loaded ``Session`` (its main conversation and its
subagents' chains) with the library's own readers: requests are
``pruner.replay.find_requests`` per chain, times are each message's recorded
timestamp. Money columns come from the money and recall modules (see
``pruner.logs.money``). Rows are plain dicts keyed by ``pruner.logs.table``'s
column names.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Mapping

from ..formats.repairing import repairs_of
from ..model import MAIN_CHAIN, Message, Session
from ..replay.requests import find_requests, timestamp
from .found import FileState, LogSession
from .names import printable

#: The repairs that leave something out of the bill: a line that is not a JSON object (skipped), a usage
#: whose counts are not whole numbers in range (dropped), a Codex token count with no reply to bill; and a
#: recorded time outside the calendar (``invalid_time``: no date is taken from it, the bill is unchanged).
DAMAGE = ("skipped_lines", "invalid_usage", "usage_without_reply", "invalid_time")


def digest_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def recorded_cwd(session: Session) -> str:
    """The working folder the session records ("" when none): header, session fields, or a message's source."""
    def look(value: Any, depth: int) -> str:
        if isinstance(value, Mapping):
            cwd = value.get("cwd")
            if isinstance(cwd, str) and cwd:
                return cwd
            if depth:
                for v in value.values():
                    found = look(v, depth - 1)
                    if found:
                        return found
        return ""
    found = look(session.metadata.get("source"), 2)
    for m in session.messages[:20]:
        if found:
            break
        found = look(m.metadata.get("source"), 1)
    return found


def _model(message: Message) -> str | None:
    model = message.metadata.get("model")
    if not isinstance(model, str):
        source = message.metadata.get("source")
        model = source.get("model") if isinstance(source, Mapping) else None
    return model if isinstance(model, str) and model and model != "<synthetic>" else None


def session_facts(session: Session) -> dict[str, Any]:
    """Start, end, models and request counts over every chain of ``session``."""
    times: list[float] = []
    models: Counter[str] = Counter()
    chains = dict(session.chains)
    main = sub = 0
    for r in find_requests(session):  # every chain's requests (each with its chain and position in it)
        if r.chain == MAIN_CHAIN:
            main += 1
        else:
            sub += 1
        model = _model(chains[r.chain].messages[r.position])
        if model:
            models[model] += 1
    for part in chains.values():
        times.extend(t for t in (timestamp(m) for m in part.messages) if t is not None)
    return {"start": _iso(min(times)) if times else None, "end": _iso(max(times)) if times else None,
            "models": json.dumps(dict(sorted(models.items()))), "requests_main": main, "requests_subagent": sub}


def damaged_lines(session: Session) -> int:
    """How many lines the reader left out of the bill or repaired for it (``DAMAGE``), over the session's
    files: the main file's repairs (its in-file subagent chains' included) and each subagent file's."""
    own = sum(int(r.get("count", 0)) for r in repairs_of(session.metadata) if r.get("kind") in DAMAGE)
    return own + sum(damaged_lines(s) for s in session.subagents)


def base_row(found: LogSession, digests: list[str]) -> dict[str, Any]:
    """What is known before the file is parsed: identity, files (path, size, mtime, digest). A path in
    ``files`` is JSON (any name survives it); ``source`` and ``project`` are shown (``names.printable``)."""
    return {"session_key": found.key, "agent": found.agent, "person": printable(found.person),
            "project": printable(found.project),
            "source": printable(found.main.path),
            "files": json.dumps([[f.path, f.size, f.mtime_ns, d] for f, d in zip(found.files, digests)]),
            "bytes": found.size, "subagent_files": len(found.subagents), "removed": False}


def states_of(row: Mapping[str, Any]) -> list[tuple[FileState, str]]:
    """The files a row was made from, with their digests."""
    return [(FileState(path, size, mtime), digest) for path, size, mtime, digest in json.loads(row["files"])]
