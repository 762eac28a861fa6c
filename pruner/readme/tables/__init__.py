"""Figure tables for the README, one module per table, registered by name.

A table is a pure function from a committed result file (parsed JSON) to Markdown.
Register it with the file it reads and the command that writes that file::

    @register_table("bench", source="sample_sessions/bench/results.json", command="pruner bench")
    def render(results: dict) -> str:
        ...

The result file must record where and when it was measured in
``meta["environment"]`` (``pruner.bench.environment``); the generator prints that
under the table, so every figure says which run it came from. Every module in this
package is imported when the package loads; see CONTRIBUTING.md.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from ...bench.environment import describe
from ...errors import PrunerError
from ...registry import Registry, origin_of


@dataclass(frozen=True)
class FigureTable:
    name: str
    source: str  # the result file, relative to the repository root
    command: str  # the command that writes ``source``
    render: Callable[[dict[str, Any]], str]
    document: str = "README.md"  # the Markdown file the table is placed in (relative to the repository)


#: Every generated table by name; a second table under a taken name is refused, naming both.
TABLES: Registry[FigureTable] = Registry("table", origin=lambda table: origin_of(table.render))
Render = TypeVar("Render", bound=Callable[[dict[str, Any]], str])


def register_table(name: str, *, source: str, command: str,
                   document: str = "README.md") -> Callable[[Render], Render]:
    """Decorator: ``fn(results) -> markdown`` renders table ``name`` from the JSON file ``source``, placed
    in ``document`` (``python -m pruner.readme DOCUMENT`` regenerates it)."""
    def decorate(fn: Render) -> Render:
        TABLES.add(name, FigureTable(name=name, source=source, command=command, render=fn, document=document))
        return fn
    return decorate


def load_results(table: FigureTable, root: Path) -> dict[str, Any]:
    path = root / table.source
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PrunerError(f"{table.source}: not found; run `{table.command}` to write it") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PrunerError(f"{table.source}: cannot read it as JSON ({exc}); run `{table.command}` again") from None
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) or "environment" not in data["meta"]:
        raise PrunerError(f"{table.source}: field 'meta.environment' is missing (where and when it was measured); "
                          f"run `{table.command}` again")
    return data


def provenance(table: FigureTable, data: dict[str, Any]) -> str:
    env = data["meta"]["environment"]
    generator = data["meta"].get("generator")  # the workloads timed, where a table times generated sessions
    workloads = f"; workloads {generator}" if generator else ""
    return (f"<sub>From `{table.source}`, written by `{env.get('command') or table.command}`: "
            f"{describe(env)}{workloads}.</sub>")


def render_table(table: FigureTable, root: Path) -> str:
    """The table's Markdown followed by the line that says where and when its figures were measured."""
    data = load_results(table, root)
    return f"{table.render(data).rstrip()}\n\n{provenance(table, data)}"


def _load_builtin_tables() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load_builtin_tables()


__all__ = [
    "FigureTable", "TABLES", "load_results", "provenance", "register_table", "render_table"
]
