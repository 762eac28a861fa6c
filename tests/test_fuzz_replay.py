"""The fuzz suite for the replay's inputs and the batch folder (issue 23): recorded usage of every format
that records it, prices files, and batch manifests.

Each property takes a hostile input and asks for the library's own error (a ``PrunerError``, one line)
or a result that holds up; never another exception. Under ``CI`` each runs ``FUZZ_EXAMPLES_CI``
examples, otherwise 60. The properties are kept fast so the three together stay within a minute of
CPU time (measured: 30,000 examples in about 60 s of CPU on this project's 2-core machine): a replay of
two requests, a prices file of a few rows, a manifest of a few fields, each drawn from one ``binary``
draw mapped onto pools of hostile values, and no ``event()`` statistics (they cost a fifth of a
millisecond an example). What the values can be is in ``COUNTS``, ``PRICES`` and ``ANY``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from pruner.batch import BatchSettings, Folder
from pruner.batch.schema import schema_fingerprint
from pruner.batch.store import MANIFEST, check_manifest
from pruner.errors import PrunerError
from pruner.formats import loads
from pruner.replay import load_prices, replay
from tests.support.fuzz import Raw, encode
from tests.support.profile import profile

# CI: 2,000 per property (was 10,000: the three took 227, 112 and 97 s of the three-worker run of 2026-12-07,
# issue 43). The CI draw is derandomized, so more examples re-check a fixed list; the wide random search is
# the nightly profile's (PRUNER_NIGHTLY=1: 10,000 fresh examples each).
FUZZ_EXAMPLES_CI = 2_000
FUZZ_EXAMPLES_NIGHTLY = 10_000
FUZZ = settings(max_examples={"nightly": FUZZ_EXAMPLES_NIGHTLY, "ci": FUZZ_EXAMPLES_CI, "dev": 60}[profile()],
                deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: What a usage count may be in a hostile file: in range, at and past the bounds, the wrong type, and JSON
#: numbers no Python value stands for. A pool drawn from, so an example costs little more than its check.
VALID_COUNTS = (0, 1, 2, 7, 64, 999, 4_096, 65_536, 200_000, 10**6, 10**9, 10**12, 3.0, 1e9)
JUNK_COUNTS = (10**12 + 1, 2**53 + 1, 2**63, 2**64 + 1, 10**30, -1, -(2**63), 0.5, 1e15, 1e307, 1e308, -1e308,
               5e-324, True, False, None, "12", "", [], {}, [1], {"n": 1}, Raw("1e999"), Raw("-1e999"), Raw("NaN"),
               Raw("Infinity"), Raw("9" * 400), Raw("1e-999"), Raw("-0"), Raw("1E+2"))
COUNTS = VALID_COUNTS + JUNK_COUNTS


def count(x: int):
    """A usage value from a drawn byte: in range about two times in three (so whole usages pass the check
    and reach the replay), else junk."""
    return VALID_COUNTS[x % len(VALID_COUNTS)] if x < 176 else JUNK_COUNTS[x % len(JUNK_COUNTS)]


ODD = (None, "x", [], 7, 1e308, -1e308)  # an odd value in place of the whole usage object

USAGE_FIELDS = {
    "anthropic": ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
    "claude_code": ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
    "codex": ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_output_tokens"),
    "pi": ("input", "output", "cacheRead", "cacheWrite"),
    "native": ("input", "output", "cache_read", "cache_write"),  # metadata.usage as the replay reads it
}
EXTRA = {"anthropic": "cache_creation", "claude_code": "cache_creation", "pi": "cost", "native": "cost"}  # a sixth


def usage(fmt: str, values, mask: int):
    """A usage object of ``fmt`` from six drawn values; ``mask``'s bits leave fields out (and pick an odd object)."""
    if mask % 11 == 0:
        return ODD[mask % len(ODD)]
    out = {name: values[k] for k, name in enumerate(USAGE_FIELDS[fmt]) if not mask >> k & 1}
    extra = EXTRA.get(fmt)
    if extra and mask >> 4 & 1:
        out[extra] = ({"ephemeral_1h_input_tokens": values[4]} if extra == "cache_creation"
                      else values[5] if fmt == "native" else {"total": values[5]})
    return out


def _file(fmt: str, usages: list, gaps: list[int]) -> str:
    """A two-request transcript of ``fmt`` whose assistant messages record ``usages``."""
    stamps = [f"2025-01-01T00:{g // 60 % 60:02d}:{g % 60:02d}Z" for g in gaps]
    if fmt == "anthropic":
        return encode({"model": "claude-sonnet-4-5-20250929", "messages": [
            {"role": "user", "content": "hello there"},
            {"role": "assistant", "content": "hi", "usage": usages[0]},
            {"role": "user", "content": "and then"},
            {"role": "assistant", "content": "done", "usage": usages[1]}]}, True)
    if fmt == "claude_code":
        rows, parent = [], None
        for k in range(2):
            rows.append({"type": "user", "uuid": f"u{k}", "parentUuid": parent, "sessionId": "s",
                         "isSidechain": False, "timestamp": stamps[2 * k],
                         "message": {"role": "user", "content": f"question {k}"}})
            rows.append({"type": "assistant", "uuid": f"a{k}", "parentUuid": f"u{k}", "sessionId": "s",
                         "isSidechain": False, "timestamp": stamps[2 * k + 1], "requestId": f"r{k}",
                         "message": {"id": f"m{k}", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                     "content": [{"type": "text", "text": f"answer {k}"}], "usage": usages[k]}})
            parent = f"a{k}"
        return "\n".join(encode(r, True) for r in rows) + "\n"
    if fmt == "codex":
        rows = [{"type": "session_meta", "timestamp": stamps[0], "payload": {"id": "s"}}]
        for k in range(2):
            rows.append({"type": "response_item", "timestamp": stamps[2 * k], "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"question {k}"}]}})
            rows.append({"type": "response_item", "timestamp": stamps[2 * k + 1], "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": f"answer {k}"}]}})
            rows.append({"type": "event_msg", "timestamp": stamps[2 * k + 1], "payload": {
                "type": "token_count", "info": {"last_token_usage": usages[k]}}})
        return "\n".join(encode(r, True) for r in rows) + "\n"
    if fmt == "pi":
        rows, parent = [{"type": "session", "version": 3, "id": "s", "cwd": "/w", "timestamp": stamps[0]}], None
        for k in range(2):
            rows.append({"type": "message", "id": f"q{k}", "parentId": parent, "timestamp": stamps[2 * k],
                         "message": {"role": "user", "content": [{"type": "text", "text": f"question {k}"}]}})
            rows.append({"type": "message", "id": f"r{k}", "parentId": f"q{k}", "timestamp": stamps[2 * k + 1],
                         "message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                     "content": [{"type": "text", "text": f"answer {k}"}], "usage": usages[k]}})
            parent = f"r{k}"
        return "\n".join(encode(r, True) for r in rows) + "\n"
    assert fmt == "native"
    rows = [{"pruner_session": 1, "name": "n", "source_format": "native", "metadata": {}}]
    for k in range(2):
        rows.append({"id": f"u{k}", "role": "user", "content": f"question {k}",
                     "metadata": {"timestamp": stamps[2 * k]}})
        rows.append({"id": f"a{k}", "role": "assistant", "content": f"answer {k}",
                     "metadata": {"timestamp": stamps[2 * k + 1], "usage": usages[k]}})
    return "\n".join(encode(r, True) for r in rows) + "\n"


def recorded_file(b: bytes):
    """A two-request file of one format from 24 drawn bytes: the format, twelve usage values, two masks,
    the request times. One ``binary`` draw per example keeps generation cheap (and still shrinks: to zero
    bytes, a clean claude_code file of small counts)."""
    fmt = sorted(USAGE_FIELDS)[b[0] % len(USAGE_FIELDS)]
    values = [count(x) for x in b[1:13]]
    gaps = sorted(int.from_bytes(b[15 + 2 * k: 17 + 2 * k], "big") % 3600 for k in range(4))
    return fmt, _file(fmt, [usage(fmt, values[:6], b[13] % 64), usage(fmt, values[6:], b[14] % 64)], gaps)


RECORDED = st.binary(min_size=24, max_size=24).map(recorded_file)


def _finite_totals(run) -> None:
    for key in ("dollars", "fresh", "cached", "written", "output"):
        value = run.totals.get(key)
        if value is not None:
            assert isinstance(value, (int, float)) and math.isfinite(value) and value >= 0, (key, value)


@FUZZ
@given(RECORDED)
def test_recorded_usage_of_every_format_reaches_the_replay_as_an_error_or_finite_money(case):
    fmt, text = case
    try:
        session = loads(text, format=fmt, file=f"fuzz.{fmt}")
    except PrunerError as exc:
        assert "\n" not in str(exc)
        return
    try:
        result = replay(session, snapshots=False)
    except PrunerError as exc:
        assert "\n" not in str(exc)
        return
    for run in result.runs.values():
        _finite_totals(run)


# -- prices files ------------------------------------------------------------------------------------------

PRICES = (0, 0.3, 3.0, 15.0, 0.03, 1.25, 75.0, 10_000, 0.000001)  # USD per million tokens, in range
WINDOWS = (200_000, 1_000_000, 128_000, 1, None)
MINIMUMS = (0, 1024, 2048, 4096)
PRICE_FIELDS = ("input", "output", "cached_input", "cache_write_5m", "cache_write_1h", "context_window",
                "min_cacheable_tokens")
MODELS = ("claude-sonnet-4-5-20250929", "gpt-5.1", "m1", "", "m0", None, 3, [])
PROVIDERS = ("anthropic", "anthropic", "openai", "openai", "google", "other", None)
ALIASES = ([], ["a"], [1], "a", None, ["m0"])


def prices_text(b: bytes) -> str:
    """A prices file from 32 drawn bytes: mostly in shape, with drawn prices, windows and names; now and
    then one value out of range or of the wrong type, a field left out, or a broken body. (Shrinking
    leans to zero bytes, so the damage sits at the high end of each byte.)"""
    rows = 1 + b[0] % 3
    models = []
    for k in range(rows):
        name, provider, damage = (x % 64 for x in b[1 + 3 * k: 4 + 3 * k])
        row = {field: PRICES[x % len(PRICES)] for field, x in zip(PRICE_FIELDS[:5], b[10 + 5 * k: 15 + 5 * k])}
        row.update(context_window=WINDOWS[name % len(WINDOWS)], min_cacheable_tokens=MINIMUMS[provider % 4])
        row.update(model=MODELS[name % 3] if name < 56 else MODELS[name % len(MODELS)],
                   provider=PROVIDERS[provider % 4] if provider < 56 else PROVIDERS[provider % len(PROVIDERS)],
                   aliases=ALIASES[damage % 2] if damage < 56 else ALIASES[damage % len(ALIASES)])
        if damage >= 48:  # one value out of range or of the wrong type
            row[PRICE_FIELDS[damage % len(PRICE_FIELDS)]] = COUNTS[(name + damage) % len(COUNTS)]
        if 40 <= damage < 44:  # a field left out
            row.pop(PRICE_FIELDS[damage % len(PRICE_FIELDS)])
        models.append(row)
    shape = b[25] % 16
    body = {"schema": "pruner.prices/1" if shape < 15 else "pruner.prices/9",
            "retrieved": "2025-11-01" if shape != 14 else "", "source": "fuzz",
            "models": models if shape != 13 else {"m": models}}
    if shape == 12:
        body = [[], "x", 1, None, Raw("NaN"), Raw("{"), Raw(""), Raw("[" * 5000)][b[26] % 8]
    return encode(body, True)


PRICES_FILES = st.binary(min_size=32, max_size=32).map(prices_text)


@FUZZ
@given(text=PRICES_FILES)
def test_a_prices_file_is_refused_naming_it_or_gives_finite_prices(text, tmp_path_factory):
    path = _scratch(tmp_path_factory) / "prices.json"
    path.write_text(text, encoding="utf-8")
    try:
        table = load_prices(str(path))
    except PrunerError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    for row in table.models:
        for value in (row.input, row.output, row.cached_input):
            assert isinstance(value, float) and math.isfinite(value) and value >= 0
        dollars = row.dollars(input=10**6, cached=10**6, written=10**6, output=10**6)
        assert math.isfinite(dollars) and dollars >= 0


# -- batch manifests ---------------------------------------------------------------------------------------

SETTINGS = BatchSettings()
GOOD_MANIFEST = {"pruner_batch": 1, "pruner_version": "0", "settings": SETTINGS.fingerprint(),
                 "schema": schema_fingerprint(), "last_run": {}}
ANY = (None, True, False, 0, 1, -1, 2**70, 1.5, 1e308, "", "x", "1", [], [1], {}, {"a": 1}, [{"a": []}],
       Raw("NaN"), Raw("1e999"), Raw("9" * 5000), Raw("[" * 3000 + "]" * 3000))
MANIFEST_FIELDS = sorted(GOOD_MANIFEST) + ["extra"]


def manifest_text(b: bytes) -> str:
    """A manifest from 8 drawn bytes: as this version writes it, with fields removed or replaced, cut
    short, or anything at all."""
    shape = b[0] % 6
    if shape == 0:
        return encode(ANY[b[1] % len(ANY)], True)
    body = dict(GOOD_MANIFEST)
    if shape != 5:  # 5: as written, so the settings match
        for k in range(b[1] % 3):
            name, value = MANIFEST_FIELDS[b[2 + 2 * k] % len(MANIFEST_FIELDS)], ANY[b[3 + 2 * k] % len(ANY)]
            if b[3 + 2 * k] >= 200:
                body.pop(name, None)
            else:
                body[name] = value
    text = encode(body, True)
    if shape == 1:  # cut, as a write interrupted half way would leave it
        text = text[: int.from_bytes(b[6:8], "big") % (len(text) + 1)]
    return text


MANIFESTS = st.binary(min_size=8, max_size=8).map(manifest_text)


@FUZZ
@given(text=MANIFESTS)
def test_reading_a_manifest_never_crashes_and_a_bad_one_is_reported(text, tmp_path_factory):
    root = _scratch(tmp_path_factory) / "out"
    root.mkdir(exist_ok=True)
    (root / MANIFEST).write_text(text, encoding="utf-8", errors="surrogatepass")
    folder = Folder(str(root))
    try:
        body = folder.manifest()
    except PrunerError as exc:
        assert MANIFEST in str(exc) and "\n" not in str(exc)
        return
    assert check_manifest(body, "x") is body  # what reading accepts, the check accepts
    try:
        folder.check(SETTINGS)
    except PrunerError as exc:
        assert "\n" not in str(exc)
        return
    assert body["settings"] == SETTINGS.fingerprint()


def _scratch(factory) -> Path:
    """One scratch folder for all examples of a run (a folder per example would cost more than the example)."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = factory.mktemp("fuzz")
    return _SCRATCH


_SCRATCH: Path | None = None


def test_the_manifest_the_batch_writes_reads_back():
    """The fixed point of the manifest property: what ``write_manifest`` writes is what ``manifest`` reads."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        folder = Folder(tmp)
        folder.write_manifest(SETTINGS, {"files": 1})
        assert folder.manifest()["last_run"] == {"files": 1}
        assert json.loads((Path(tmp) / MANIFEST).read_text())["settings"] == SETTINGS.fingerprint()
