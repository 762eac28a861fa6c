"""The declared public surface (issue 24): every package's ``__all__`` pinned, sorted and true, and
nothing outside ``pruner/`` importing an underscored name from it.

Like httpx's ``test_exported_members``: the expected lists are written here, so adding, removing
or renaming a public name is a visible change of this file (and a line in CHANGELOG.md).
"""

from __future__ import annotations

import ast
import importlib
import re

import pytest
from tests.support.paths import ROOT

PACKAGE = ROOT / "pruner"

EXPORTS: dict[str, list[str]] = {
    "pruner": [
        "Answer", "Bill", "CompactionSettings", "ConfigurationError", "Decision", "ENCODINGS", "ExportError", "FORMATS",
        "FileTools", "FormatError", "IncrementalPruner", "InvalidSessionError", "Message", "OfflineSummarizer",
        "OpenAISummarizer", "PruneConfig", "PruneResult", "PruneStats", "PrunerError", "ROLES", "Replay",
        "ReplaySettings", "STATUSES", "Session", "SummarizerError", "ToolCall", "__version__", "bill",
        "calibrate", "compact", "dumps", "export", "get_counter", "load_session", "message_tokens", "prune",
        "replay_session", "save_session", "to_anthropic_messages", "to_openai_messages", "to_text",
        "validate_session", "verdict"],
    "pruner.batch": ["BatchSettings", "BatchSummary", "DECISIONS", "Folder", "InputFile", "Inputs", "MANIFEST",
                     "SESSIONS", "expand_inputs", "plan_partitions", "run_batch"],
    "pruner.bench": [],
    "pruner.bench.workloads": [
        "DIALOGUE_ROLES", "FactTruth", "GENERATOR_VERSION", "LostFacts", "SIZES", "SessionTruth", "WORKLOADS",
        "WorkloadParams", "generate", "lost_items", "missing_facts", "oracle_messages", "params_table",
        "session_truth"],
    "pruner.cli": ["build_parser", "main"],
    "pruner.compaction": [
        "CompactionPlan", "CompactionResult", "CompactionSettings", "ContextWindow", "CutPoint",
        "OfflineSummarizer", "OpenAISummarizer", "PREFIX_SECTIONS", "PROGRESS_SUBSECTIONS", "PipelinePreview",
        "PreviousCompaction", "SUMMARY_SECTIONS", "SYSTEM_PROMPT", "Summarizer", "SummaryRequest", "SummaryTask",
        "TriggerDecision", "compact", "compare_recorded", "context_window", "find_cut_point", "history_request",
        "missing_sections", "parse_file_lists", "parse_sections", "plan_compaction", "prefix_request",
        "preview_pipeline", "serialize_messages", "should_compact", "wrap_conversation"],
    "pruner.analysis": [],
    "pruner.engine": [],
    "pruner.formats": [
        "ALIASES", "AUTHORING_MODULES", "BINARY_SNIFF_BYTES", "CONTAINER_BYTES", "DEFAULT_MAX_BYTES", "Detector",
        "Dumper", "FORMATS", "Format", "FormatModule", "Loader", "NOT_FORMATS", "RETRIEVAL_TOOLS", "charged_size",
        "check_text_bytes", "decode_bytes", "detect_format", "format_name", "load_bytes", "load_dialogues",
        "load_session", "loads", "loads_all", "probe", "register_format", "register_module", "repair_messages",
        "repairs", "save_session"],
    "pruner.formats.export": ["EXPORTS", "Export", "dumps", "export", "to_anthropic_messages", "to_openai_messages",
                              "to_text", "validate_anthropic_messages", "validate_openai_messages"],
    "pruner.logs": ["AGENTS", "FileState", "Location", "LogSession", "LogsSummary", "agent_roots", "discover", "plan",
                    "read_session", "run_logs"],
    "pruner.logs.agents": ["AGENTS", "Agent", "UsageReader", "register_agent"],
    "pruner.readme": ["GENERATOR", "SECTIONS", "TABLES", "pages", "regenerate", "render_table", "section_regions",
                      "splice_sections", "splice_tables", "start_marker", "table_regions"],
    "pruner.readme.tables": ["FigureTable", "TABLES", "load_results", "provenance", "register_table", "render_table"],
    "pruner.replay": [
        "Answer", "AnthropicCache", "Bill", "BilledRequest", "CACHE_MODELS", "CAUSES", "CacheModel", "CacheUsage",
        "Calibration", "DEFAULT_MODELS", "Event", "ExtraCall", "LedgerEntry", "ModelPrice", "OpenAICache",
        "PriceTable", "RecallReport", "Replay", "ReplaySettings", "Request", "RequestRow", "STRATEGIES", "Step",
        "Strategy", "StrategyRun", "TokenScale", "bill", "calibrate", "context_recall",
        "default_prices", "find_requests", "ledger", "ledger_of", "ledger_summary", "load_prices",
        "register_strategy", "replay", "strategy_names", "verdict"],
    "pruner.replay.limit": ["FAMILY_ORDER", "Limit", "Limits", "ScheduledAction", "compute_limits", "replay_plan"],
    "pruner.replay.strategies": [],
    "pruner.rules": ["Alive", "DEFAULT_PLACEHOLDER", "EXPLANATIONS", "Emits", "Explanation", "Placeholder",
                     "REMOVAL_STAGES", "RULES", "Removal", "RemovesAgain", "Rule", "RuleFamily", "STAGES",
                     "declaration", "explain", "explains", "placeholder_text", "register_rule", "rules_for",
                     "short_name"],
}


def _packages() -> list[str]:
    """Every package under pruner/, found on disk (so a new package without a pinned list fails)."""
    return sorted(".".join(p.parent.relative_to(ROOT).parts) for p in PACKAGE.rglob("__init__.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_every_package_is_pinned():
    assert sorted(EXPORTS) == _packages()


@pytest.mark.parametrize("package", sorted(EXPORTS))
def test_exported_members(package):
    module = importlib.import_module(package)
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{package} declares no __all__"
    assert declared == EXPORTS[package], f"{package}.__all__ changed: update EXPORTS here and CHANGELOG.md"
    assert declared == sorted(declared), f"{package}.__all__ is not sorted"
    assert len(set(declared)) == len(declared)
    for name in declared:
        assert hasattr(module, name), f"{package}.__all__ names {name!r}, which does not exist"
        assert not _private(name), f"{package}.__all__ exports the private name {name!r}"
    namespace: dict = {}
    exec(f"from {package} import *", namespace)  # every name in __all__ is importable this way
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(declared)


@pytest.mark.parametrize("package", sorted(EXPORTS))
def test_every_public_name_defined_in_a_package_init_is_exported(package):
    """A public function, class or constant written in the ``__init__.py`` itself is part of the surface;
    an import there (a module, a helper the package uses) is not, unless listed."""
    path = ROOT.joinpath(*package.split(".")) / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign) and not (  # a TypeVar is a checker's name, not the package's
                isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "TypeVar"):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    public = {n for n in defined if not n.startswith("_")}
    assert public <= set(importlib.import_module(package).__all__), sorted(public - set(EXPORTS[package]))


def test_import_pruner_replay_gives_the_function_not_the_package():
    """``pruner/__init__.py`` imported ``replay`` (the function) from ``pruner.replay``, which hid the
    package: ``import pruner.replay as r`` gave the function, so ``r.bill`` failed. The function is
    ``pruner.replay_session`` at the top level now (CHANGELOG 0.4.0).

    Regression."""
    import types

    import pruner
    import pruner.replay as r
    from pruner.replay.engine import replay

    assert isinstance(r, types.ModuleType) and r.__name__ == "pruner.replay"
    assert pruner.replay is r
    assert callable(r.bill) and "full" in r.STRATEGIES
    assert pruner.replay_session is r.replay is replay


# --- nothing outside pruner/ imports an underscored name from it -------------------------------------

#: Where code that uses pruner lives outside the package: the dashboard, the tests, scripts, and
#: the Python blocks of the documentation.
OUTSIDE = ("dashboard", "tests", "scripts", "docs")
_PY_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _outside_sources() -> list[tuple[str, str]]:
    sources = []
    for top in OUTSIDE:
        for path in sorted((ROOT / top).rglob("*.py")):
            sources.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for k, m in enumerate(_PY_BLOCK.finditer(path.read_text(encoding="utf-8"))):
            sources.append((f"{path.relative_to(ROOT)} (python block {k + 1})", m[1]))
    return sources


def private_imports(source: str) -> list[tuple[int, str]]:
    """``(line, import)`` of every import of a private pruner module or name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "pruner" or node.module.startswith("pruner.")):
            names = [a.name for a in node.names]
            if any(_private(part) for part in node.module.split(".")) or any(_private(n) for n in names):
                found.append((node.lineno, f"from {node.module} import {', '.join(names)}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pruner" and any(_private(part) for part in parts):
                    found.append((node.lineno, f"import {alias.name}"))
    return found


def test_the_import_walk_finds_every_kind_of_private_import():
    source = ("from pruner.formats._repairs import Repairs\nfrom pruner.analysis.text import _hash_words\n"
              "import pruner.replay.strategies._x as x\nfrom pruner import __version__, prune\n"
              "from pruner.readme.__main__ import main\nfrom other._pkg import _y\n")
    assert [line for line, _ in private_imports(source)] == [1, 2, 3]


def test_nothing_outside_pruner_imports_an_underscored_name_from_it():
    sources = _outside_sources()
    assert any(name.startswith("dashboard/") for name, _ in sources) and any("python block" in n for n, _ in sources)
    bad = [f"{name}:{line}: {text}" for name, source in sources for line, text in private_imports(source)]
    assert not bad, "private pruner names imported outside pruner/ (make them public or test the public API):\n" \
        + "\n".join(bad)
