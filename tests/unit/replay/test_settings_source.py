"""One source for each setting, and library errors that name the setting, never a flag (issue 24).

The settings dataclasses (``PruneConfig``, ``CompactionSettings``, ``ReplaySettings``) hold every
default, help text, flag and label (``pruner.setting_fields``); the CLI and the dashboard derive
theirs. These tests read the source and the parsers to check that nothing restates them, and
drive the library into its errors to check what their messages say.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from pruner import PruneConfig
from pruner.cli import build_parser
from pruner.cli.common import error_line, setting_advice
from pruner.compaction import CompactionSettings
from pruner.errors import ConfigurationError, PrunerError, SummarizerError
from pruner.replay import ReplaySettings
from pruner.setting_fields import described

from dashboard.controls import label_of
from dashboard.logic.replay import ReplayChoice
from dashboard.ui import for_dashboard
from pruner.replay.settings import DEFAULT_PROVIDER

ROOT = Path(__file__).resolve().parents[3]
SETTINGS = (PruneConfig, CompactionSettings, ReplaySettings)
FIELD_NAMES = {f.name for cls in SETTINGS for f in dataclasses.fields(cls)}
#: A command-line flag in a text: ``--word`` not inside a longer word or a ``---`` rule.
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")


def _sources(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _distinctive(value) -> bool:
    """A default worth tracing through the source: a number no other code would write by chance
    (not 0, 1, 3: loop bounds and counts are full of those). Strings ("5m", "anthropic") name
    things all over the code; their flags and controls are checked by the tests below instead."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) >= 10 or (isinstance(value, float) and value not in (0.0, 0.5, 1.0))


def _names_a_field(name: str) -> bool:
    """``reserve_tokens``, ``RESERVE_TOKENS``, ``DEFAULT_NEAR_DUPLICATE_THRESHOLD``: a settings field's name."""
    name = name.lower()
    return any(name == f or name.endswith("_" + f) for f in FIELD_NAMES)


def _settings_contexts(tree: ast.AST):
    """``(name, literal node)`` for each literal written where a setting's value goes: assigned to a
    name that is a settings field (``reserve_tokens: int = 16_384``, also in another dataclass) or its
    constant (``RESERVE_TOKENS = 16_384``, ``DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.8``), or passed as
    ``default=``, ``value=`` or ``<field>=``."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and _names_a_field(t.id):
                    yield t.id, node.value
        elif isinstance(node, ast.Call):
            for k in node.keywords:
                if k.arg in FIELD_NAMES | {"default", "value"} and isinstance(k.value, ast.Constant):
                    yield k.arg, k.value
            # setting(16_384, ...): the default is the first positional argument
            if getattr(node.func, "id", None) == "setting" and node.args and isinstance(node.args[0], ast.Constant):
                yield "setting", node.args[0]


def test_every_settings_default_is_written_once():
    """Every distinctive default of the three settings dataclasses appears as a literal in exactly one
    settings context of ``pruner/`` and ``dashboard/`` (see ``_settings_contexts``): its definition.

    It fails when a CLI flag says ``default=16_384``, when the dashboard's form state restates
    ``reserve_tokens: int = 16_384``, or when a module keeps its own ``RESERVE_TOKENS`` copy: each is a
    second place to change. A number that only happens to equal a default (a cap of 100_000 cached
    placeholders) is in no settings context and is not counted. Defaults shared by two dataclasses
    (``reserve_tokens`` of compaction and replay) must be taken from one (``default_of``)."""
    defaults: dict[object, list[str]] = {}
    for cls in SETTINGS:
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING and _distinctive(f.default):
                defaults.setdefault((type(f.default), f.default), []).append(f"{cls.__name__}.{f.name}")
    assert "ReplaySettings.reserve_tokens" in str(defaults) and len(defaults) >= 6  # the scan has work to do
    found: dict[object, list[str]] = {key: [] for key in defaults}
    for path, tree in _sources("pruner", "dashboard"):
        for name, node in _settings_contexts(tree):
            key = (type(node.value), node.value)
            if key in found:
                found[key].append(f"{path.relative_to(ROOT)}:{node.lineno} ({name})")
    for key, places in found.items():
        assert len(places) == 1, f"the default {key[1]!r} of {', '.join(defaults[key])} is written in {places}"


def test_no_public_constant_is_written_twice():
    """A public module constant (``SNAPSHOT_LIMIT = 3_000_000``) is assigned its literal value in one
    module of ``pruner/`` or ``dashboard/``; another module imports it. It fails when two modules
    each keep a copy under the same name and value (the dashboard's own ``SNAPSHOT_LIMIT`` did)."""
    seen: dict[tuple, list[str]] = {}
    for path, tree in _sources("pruner", "dashboard"):
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name) and t.id.isupper() and not t.id.startswith("_"):
                        key = (t.id, type(node.value.value), node.value.value)
                        seen.setdefault(key, []).append(str(path.relative_to(ROOT)))
    assert ("SNAPSHOT_LIMIT", int, 3_000_000) in seen
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}


def test_a_restated_default_is_found(tmp_path):
    """The scan above can fail: a form field that restates the reserve is one more settings context."""
    tree = ast.parse("class Choice:\n    reserve_tokens: int = 16_384\np.add_argument('--x', default=20_000)\n")
    assert [(n, c.value) for n, c in _settings_contexts(tree)] == [("reserve_tokens", 16_384), ("default", 20_000)]


def _subparser(name: str):
    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices[name]


@pytest.mark.parametrize("command, cls", [("replay", ReplaySettings), ("compact", CompactionSettings),
                                          ("prune", PruneConfig), ("batch", PruneConfig)])
def test_cli_flags_are_generated_from_the_settings(command, cls):
    """Each flag that sets a settings field has the field's default and help and the flag the field
    declares; a hand-written argument with another default or help fails here."""
    actions = {a.dest: a for a in _subparser(command)._actions}
    checked = 0
    for s in described(cls):
        if s.name not in actions:
            continue
        action, checked = actions[s.name], checked + 1
        assert s.flag in action.option_strings
        # a repeated flag starts from None (no value given: the field's default)
        assert action.default == (None if isinstance(s.default, tuple) else s.default), (s.name, action.default)
        if s.name != "orphan_policy":  # each command words the orphan policy for what it does
            assert action.help.startswith(s.flag_help), (s.name, action.help)
    assert checked >= {"replay": 11, "compact": 4, "prune": 6, "batch": 6}[command]


def test_the_flags_give_back_the_settings_defaults(tmp_path):
    """Parsing no option at all gives every setting its dataclass default (the round trip the
    commands rely on: ``setting_values``)."""
    from pruner.cli.common import setting_values
    from pruner.cli.replay import REPLAY_SETTINGS

    args = build_parser().parse_args(["replay", "x.jsonl"])
    assert ReplaySettings(**setting_values(ReplaySettings, args, REPLAY_SETTINGS)) == ReplaySettings()
    args = build_parser().parse_args(["replay", "x.jsonl", "--clear-exclude-tool", "a", "--clear-exclude-tool",
                                      "b", "--no-inherit-cold", "--reserve-tokens", "7"])
    got = setting_values(ReplaySettings, args, REPLAY_SETTINGS)
    assert got["clear_exclude_tools"] == ("a", "b") and got["inherit_cold"] is False and got["reserve_tokens"] == 7


def test_dashboard_controls_take_their_labels_and_defaults_from_the_settings():
    """No dashboard module writes a settings label as a literal (the pages call ``controls.control``),
    and the Replay form's defaults are ``ReplaySettings``'s."""
    labels = {s.label for cls in SETTINGS for s in described(cls)}
    written = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for path, tree in _sources("dashboard")
               for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in labels]
    assert written == []
    choice, settings = ReplayChoice(), ReplaySettings()
    for name in ("context_window", "ttl", "reserve_tokens", "keep_recent_tokens", "clear_trigger",
                 "clear_keep", "inherit_cold"):
        assert getattr(choice, name) == getattr(settings, name)
    # ReplaySettings leaves the provider to the session (None); the form starts from the one detection
    # falls back to, and a loaded session replaces it with its own (choice_for)
    assert settings.provider is None and choice.provider == DEFAULT_PROVIDER
    assert choice.settings() == ReplaySettings(provider=choice.provider, model=choice.model)


# --- errors -------------------------------------------------------------------------------------

def _raised_texts(tree: ast.AST):
    """Every string literal in a ``raise X(...)`` and in a call that builds an error's message from
    its ``error=``/``expected=`` keywords (``load_json_file``)."""
    for node in ast.walk(tree):
        calls = [node.exc] if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) else []
        if isinstance(node, ast.Call) and any(k.arg in ("error", "expected") for k in node.keywords):
            calls.append(node)
        for call in calls:
            for part in ast.walk(call):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield part


def test_no_library_raise_site_names_a_flag():
    """``pruner.errors`` promises library messages name no flag: no raise outside ``pruner/cli`` (the
    front end, whose messages are about its flags) has a ``--flag`` in its text. It fails on e.g.
    ``ConfigurationError("choose another --out folder")``."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for path, tree in _sources("pruner")
             if "cli" not in path.relative_to(ROOT).parts for node in _raised_texts(tree) if FLAG.search(node.value)]
    assert found == []
    assert FLAG.search("choose another --out folder") and not FLAG.search("a ---- rule, x--y")


def _bad_calls(tmp_path):
    """Real library calls that fail on bad input, across modules, each with the setting it should name."""
    from pruner.batch.settings import BatchSettings
    from pruner.batch.store import Folder
    from pruner.bench.run import run_benchmark
    from pruner.formats import load_session
    from pruner.logs.table import check_folder
    from pruner.replay.cache import AnthropicCache, OpenAICache
    from pruner.replay.prices import ModelPrice
    from pruner.replay.recording import window_of

    a_file = tmp_path / "a.jsonl"
    a_file.write_text('{"pruner_session": 1}\n{"id": "m1", "role": "user", "content": "hi"}\n', encoding="utf-8")
    busy = tmp_path / "busy"
    busy.mkdir(exist_ok=True)
    (busy / "other.txt").write_text("x", encoding="utf-8")
    no_window = ModelPrice(provider="anthropic", model="m", input=1.0, cached_input=0.1, output=2.0)
    return [
        (lambda: ReplaySettings(reserve_tokens=-1), "reserve_tokens"),
        (lambda: ReplaySettings(context_window=0), "context_window"),
        (lambda: ReplaySettings(ttl="2h"), "ttl"),
        (lambda: CompactionSettings(reserve_tokens=300_000), "reserve_tokens"),
        (lambda: PruneConfig(near_duplicate_threshold=2), "near_duplicate_threshold"),
        (lambda: AnthropicCache(ttl="2h"), "ttl"),
        (lambda: OpenAICache(retention="forever"), "openai_retention"),
        (lambda: window_of(ReplaySettings(), no_window, no_window), "context_window"),
        (lambda: Folder(str(a_file)).check(BatchSettings()), "out"),
        (lambda: Folder(str(busy)).check(BatchSettings()), "out"),
        (lambda: check_folder(str(a_file)), "out"),
        (lambda: check_folder(str(busy)), "out"),
        (lambda: run_benchmark(workloads=["tool_agent"], sizes=[10], seeds=0), "seeds"),
        (lambda: load_session(a_file, max_bytes=5), "max_bytes"),
        (lambda: load_session(a_file, format="nope"), "format"),
        (lambda: BatchSettings(format="nope"), "format"),
    ]


def test_library_errors_name_the_setting_and_each_front_end_its_own_word(tmp_path):
    """Each bad call raises a ``PrunerError`` whose message names no flag and whose ``setting`` is the
    library name; the CLI line adds that setting's flag, the dashboard's text a control or a box,
    never a flag."""
    flagged = 0
    for call, setting in _bad_calls(tmp_path):
        with pytest.raises(PrunerError) as caught:
            call()
        exc = caught.value
        assert not FLAG.search(str(exc)), str(exc)
        assert exc.setting == setting, (str(exc), exc.setting)
        advice = setting_advice(setting)
        assert advice in error_line("x", exc)  # the CLI translates the setting into its flag
        flagged += bool(FLAG.search(advice))
        shown = for_dashboard(exc)
        assert not FLAG.search(shown), shown
        label = label_of(setting)
        if label:
            assert f"“{label}”" in shown
    assert flagged >= len(_bad_calls(tmp_path)) - 1  # all but openai_retention, which no flag sets
    # the CLI names a flag only when the command takes it
    exc = ConfigurationError("the price table gives no context window for m", setting="context_window")
    assert "--context-window N" in error_line("replay", exc, flags=["--context-window"])
    assert "--" not in error_line("batch", exc, flags=["--out"])


def test_pruner_error_is_not_a_value_error():
    """0.4.0: a summariser's network failure (or any ``PrunerError``) is no ``ValueError``: an
    ``except ValueError`` around a call must not swallow it."""
    from pruner.compaction import OpenAISummarizer, compact
    from pruner.model import Message, Session

    assert not issubclass(PrunerError, ValueError)
    session = Session.of([Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", content="word " * 400)
                          for i in range(12)])
    closed = OpenAISummarizer(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=2.0, max_retries=0)
    with pytest.raises(SummarizerError) as caught:
        compact(session, CompactionSettings(context_window=2_000, reserve_tokens=100, keep_recent_tokens=500),
                closed, force=True)
    assert not isinstance(caught.value, ValueError)


def test_the_cache_models_refuse_an_unknown_ttl_with_a_configuration_error():
    """Regression: ``replay/cache.py`` raised a bare ``ValueError`` for an unknown TTL or retention."""
    from pruner.replay.cache import AnthropicCache, OpenAICache

    with pytest.raises(ConfigurationError, match="ttl is '2h'; expected one of 5m, 1h"):
        AnthropicCache(ttl="2h")
    with pytest.raises(ConfigurationError, match="openai_retention is 'x'; expected one of in_memory, 24h"):
        OpenAICache(retention="x")
