"""Deterministic filler text: every function takes the caller's ``random.Random``.

Nothing here uses the global ``random`` module or iterates over a set, so the
same seed gives the same text on every run and machine.

>>> import random
>>> a, b = random.Random(1), random.Random(1)
>>> sentence(a) == sentence(b)
True
"""

from __future__ import annotations

import random

NOUNS = (
    "account", "invoice", "pipeline", "cluster", "report", "ticket", "dashboard", "schema", "bucket",
    "token", "queue", "replica", "gateway", "ledger", "policy", "template", "workspace", "webhook",
    "snapshot", "partition", "release", "manifest", "endpoint", "quota", "index", "scheduler", "tenant",
    "migration", "certificate", "backup", "session", "catalog", "cohort", "forecast", "budget",
    "vendor", "contract", "shipment", "warehouse", "refund", "subscription", "license", "audit",
    "region", "runbook", "incident", "metric", "alert", "checkout", "payload", "cache", "table",
    "column", "container", "volume", "build", "branch", "commit", "review", "deployment", "feature",
    "experiment", "segment", "campaign", "customer", "order", "product", "price", "discount",
    "export", "import", "job", "worker", "limit", "window", "rule", "filter", "mapping", "field",
    "ancestor", "archive", "baseline", "batch", "beacon", "blueprint", "bundle", "channel", "charter",
    "checkpoint", "cipher", "clause", "collector", "console", "counter", "crawler", "cursor", "daemon",
    "digest", "directory", "domain", "driver", "envelope", "estimate", "event", "fixture", "folder",
    "fragment", "frame", "gauge", "handle", "harness", "header", "hook", "host", "inventory", "kernel",
    "key", "label", "lease", "listener", "locale", "lock", "manager", "marker", "mirror", "module",
    "monitor", "namespace", "node", "notice", "operator", "outline", "owner", "packet", "parser",
    "patch", "plan", "plugin", "pool", "probe", "profile", "proxy", "reader", "record", "registry",
    "relay", "resolver", "route", "sample", "scope", "sensor", "shard", "signal", "sketch", "slot",
    "socket", "source", "spool", "stage", "statement", "stream", "summary", "switch", "thread",
    "timer", "topic", "trace", "tracker", "trigger", "unit", "upload", "user", "vault", "view",
)
VERBS = (
    "updates", "validates", "exports", "archives", "rotates", "throttles", "replicates", "indexes",
    "schedules", "approves", "rejects", "retries", "merges", "splits", "caches", "streams",
    "aggregates", "filters", "encrypts", "restores", "migrates", "reconciles", "batches", "tags",
    "flags", "bills", "forwards", "resolves", "estimates", "summarises", "verifies", "reloads",
    "publishes", "drains", "pins", "expands", "trims", "orders", "groups", "checks",
)
ADJECTIVES = (
    "nightly", "regional", "primary", "stale", "pending", "encrypted", "shared", "legacy", "hourly",
    "default", "custom", "failed", "active", "archived", "external", "internal", "monthly", "partial",
    "verified", "draft", "cached", "private", "public", "weekly", "idle", "billing", "staging",
    "production", "manual", "automatic", "temporary", "quarterly", "optional", "mandatory", "small",
    "large", "recent", "historic", "global", "local",
)
ADVERBS = ("quickly", "silently", "twice", "automatically", "eventually", "safely", "first", "again",
           "later", "manually", "in order", "on demand", "by default", "at night", "in bulk")
PREPOSITIONS = ("for", "before", "after", "with", "from", "into", "across", "under", "per", "behind",
                "beside", "inside", "through", "without", "around", "against", "beyond", "toward")
DETERMINERS = ("the", "each", "every", "any", "this", "that", "our", "its", "one", "some", "no", "their")
CONNECTIVES = ("when", "unless", "because", "so that", "while", "until", "once", "whenever")
TEAMS = ("payments", "platform", "growth", "data", "support", "security", "billing", "search")
PLACES = ("eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "us-west-1", "sa-east-1")


def word(rng: random.Random, bank: tuple[str, ...]) -> str:
    return bank[rng.randrange(len(bank))]


def sentence(rng: random.Random) -> str:
    """One plausible-looking technical sentence of about 10-16 words."""
    parts = [word(rng, DETERMINERS).capitalize(), word(rng, ADJECTIVES), word(rng, NOUNS), word(rng, VERBS),
             word(rng, DETERMINERS), word(rng, ADJECTIVES), word(rng, NOUNS), word(rng, PREPOSITIONS),
             word(rng, DETERMINERS), word(rng, NOUNS)]
    if rng.random() < 0.6:
        parts += [word(rng, CONNECTIVES), word(rng, DETERMINERS), word(rng, NOUNS), word(rng, VERBS),
                  word(rng, ADVERBS)]
    return " ".join(parts) + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def phrase(rng: random.Random, words: int = 3) -> str:
    bank = (ADJECTIVES, NOUNS, NOUNS)
    return " ".join(word(rng, bank[i % 3]) for i in range(words))


def number(rng: random.Random, low: int = 10, high: int = 99_999) -> str:
    return f"{rng.randint(low, high):,}"


# Near-duplicate variants of a retrieved chunk: the world model treats all four as
# carrying the same information as the chunk itself (a sub-chunk carries part of it).

def variant_whitespace(rng: random.Random, body: str) -> str:
    """Same words, different spacing and line breaks."""
    words = body.split(" ")
    out = []
    for w in words:
        out.append(w)
        out.append("\n" if w.endswith(".") and rng.random() < 0.5 else ("  " if rng.random() < 0.1 else " "))
    return "".join(out).rstrip()


def variant_changed_word(rng: random.Random, body: str) -> str:
    """One word swapped for another of the same kind (a light edit of the source)."""
    words = body.split(" ")
    candidates = [i for i, w in enumerate(words) if w in ADJECTIVES]
    if not candidates:
        return body + " (revised)"
    i = candidates[rng.randrange(len(candidates))]
    choices = [a for a in ADJECTIVES if a != words[i]]
    words[i] = choices[rng.randrange(len(choices))]
    return " ".join(words)


def variant_subchunk(rng: random.Random, body: str) -> str:
    """A contiguous run of most of the chunk's sentences (a smaller window over the same text)."""
    sentences = body.split(". ")
    if len(sentences) < 3:
        return body
    keep = max(2, (len(sentences) * 2 + 2) // 3)
    start = rng.randrange(len(sentences) - keep + 1)
    part = ". ".join(sentences[start:start + keep])
    return part if part.endswith(".") else part + "."
