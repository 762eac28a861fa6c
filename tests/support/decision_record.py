"""Every decision pruning makes on the samples, the workloads and the real transcripts, recorded.

The record was taken from main before the engine was rebuilt for speed (issue 13), so
``tests/unit/engine/test_decisions_unchanged.py`` can show that the new engine decides exactly as the
old one did: same message, status, rule, reason, related message, placeholders and token
totals. Small inputs (``sample_sessions/``) are recorded in full so a failure shows the
differing decision; large ones (real transcripts, reference corpora, 2,000-turn
workloads) as a SHA-256 of the same record plus its counts per rule.

Regenerate only for an intended change of behaviour, explained in its commit:
``python -m tests.support.decision_record``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from functools import lru_cache

from pruner import PruneConfig, Session, load_session, prune
from pruner.bench.workloads import generate
from pruner.formats import load_dialogues
from tests.support.paths import ROOT, SAMPLES

SHARED = ROOT.parent / "shared" / "data"
REAL = SHARED / "real"
CORPORA = SHARED / "reference-corpora"
RECORD = ROOT / "tests" / "data" / "decisions"
SAMPLES_RECORD = RECORD / "samples.json"
DIGESTS_RECORD = RECORD / "digests.json"

CONFIGS = {"default": PruneConfig(), "drop_pair": PruneConfig(orphan_policy="drop_pair")}
GENERATED = (("plain_chat", 2000), ("rag_assistant", 2000), ("tool_agent", 2000))
TAU_DIALOGUES = 200
REAL_FILES = ("swe-agent/marshmallow-1867.function_calling_replace.traj", "pi/large-session.jsonl")
CORPORA_FILES = ("normal_chat-2000.jsonl", "rag_assistant-2000.jsonl", "tool_agent-2000.jsonl")


def record(session: Session, config: PruneConfig) -> dict:
    """What pruning decided, in a JSON-ready form."""
    r = prune(session, config)
    return {
        "decisions": [[d.id, d.status, d.rule, d.reason, d.related] for d in r.decisions],
        "placeholders": sorted(r.placeholders.items()),
        "messages_after": r.stats.messages_after,
        "tokens_before": r.stats.tokens_before,
        "tokens_after": r.stats.tokens_after,
        "rounds": r.stats.rounds,
    }


def digest(rec: dict) -> dict:
    """A SHA-256 of the record, with the counts per rule to say roughly what moved."""
    text = json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    by_rule: dict[str, int] = {}
    for _, _, rule, _, _ in rec["decisions"]:
        by_rule[rule or "kept"] = by_rule.get(rule or "kept", 0) + 1
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "by_rule": dict(sorted(by_rule.items())),
            "messages_after": rec["messages_after"], "tokens_after": rec["tokens_after"]}


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if p.is_file())


@lru_cache(maxsize=1)
def _tau_dialogues() -> tuple[Session, ...]:
    return tuple(load_dialogues(REAL / "tau-bench" / "gpt-4o-airline.json"))


def large_input_names() -> list[str]:
    """Every large input this record covers (whether or not it is present here)."""
    names = [f"real/tau-bench#{k}" for k in range(TAU_DIALOGUES)]
    names += [f"real/{rel}" for rel in REAL_FILES]
    names += [f"reference-corpora/{name}" for name in CORPORA_FILES]
    return names + [f"generated/{w}-{t}" for w, t in GENERATED]


def load_large(name: str) -> Session | None:
    """The session called ``name``, or ``None`` when its file is absent on this machine."""
    kind, _, rest = name.partition("/")
    if kind == "generated":
        workload, _, turns = rest.rpartition("-")
        return generate(workload, turns=int(turns), seed=0)
    path = (REAL if kind == "real" else CORPORA) / rest.split("#")[0]
    if not path.exists():
        return None
    if "#" in rest:
        return _tau_dialogues()[int(rest.split("#")[1])]
    return load_session(path)


def build_samples() -> dict:
    return {p.name: {c: record(load_session(p), cfg) for c, cfg in CONFIGS.items()} for p in sample_files()}


def build_digests() -> dict:
    out = {}
    for name in large_input_names():
        s = load_large(name)
        if s is None:
            raise SystemExit(f"{name} is absent: the record must cover every large input")
        out[name] = {c: digest(record(s, cfg)) for c, cfg in CONFIGS.items()}
    return out


def _dumps(value, depth: int = 0) -> str:
    """JSON with one line per innermost list (one decision per line): readable diffs."""
    if isinstance(value, dict) and value:
        pad = " " * (depth + 1)
        items = ",\n".join(f"{pad}{json.dumps(k)}: {_dumps(v, depth + 1)}" for k, v in sorted(value.items()))
        return "{\n" + items + "\n" + " " * depth + "}"
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        pad = " " * (depth + 1)
        return "[\n" + ",\n".join(pad + json.dumps(v, ensure_ascii=False) for v in value) + "\n" + " " * depth + "]"
    return json.dumps(value, ensure_ascii=False)


def _write(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(_dumps(value) + "\n", encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    _write(SAMPLES_RECORD, build_samples())
    _write(DIGESTS_RECORD, build_digests())
    print(f"wrote {SAMPLES_RECORD} and {DIGESTS_RECORD}")
