"""The import graph of the project's own code, read from the source, and the two checks the layers
rest on: no circle between modules, and no arrow against the layers (``tests/repo/test_layers.py``).

An arrow is every ``import`` and ``from ... import`` of a project module, wherever it stands: at the
top, inside a function, under ``if TYPE_CHECKING:``. A function-local import still runs when the
function does, and one written to dodge a circle is the circle; a type named in a signature ties the
two modules' meaning whatever runs, so a lower module names an upper one's type by shape (a
``Protocol``) instead. Not arrows: modules loaded by name (``importlib.import_module``), which is how a
registry loads its plug-ins; and the parent packages Python runs on the way to a module (an arrow to
``a.b.c`` is to that module, not to ``a`` and ``a.b``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence


@dataclass(frozen=True)
class Arrow:
    """``source`` imports ``target`` (both files, relative to the root, as ``pruner/rules/x.py``) at ``line``."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}"


def module_files(root: Path, packages: Iterable[str]) -> dict[str, str]:
    """Every module of ``packages`` by dotted name (``pruner.rules`` for ``pruner/rules/__init__.py``)."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = rel.as_posix()
    return out


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: Mapping[str, str]) -> set[str]:
    """The modules ``node`` (in ``module``) imports, each as specific as the statement says: ``import a.b``
    is an arrow to the longest of ``a.b``, ``a`` that is a module; ``from a import b`` to ``a.b`` when
    that is a module, else to ``a`` (``b`` is a name defined there)."""
    if isinstance(node, ast.Import):
        return {_existing(alias.name, modules) for alias in node.names}
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    submodules = {f"{origin}.{alias.name}" for alias in node.names} & modules.keys()
    if len(submodules) < len(node.names):
        submodules.add(_existing(origin, modules))
    return submodules


def arrows(root: Path, packages: Sequence[str]) -> list[Arrow]:
    """Every arrow between the modules of ``packages`` under ``root`` (one per pair, at its first line)."""
    modules = module_files(root, packages)
    out: list[Arrow] = []
    for module, rel in modules.items():
        tree = ast.parse((root / rel).read_text(encoding="utf-8"), filename=rel)
        statements = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                            key=lambda n: n.lineno)
        seen: set[str] = set()
        for node in statements:
            for target in sorted(_targets(node, module, rel.endswith("__init__.py"), modules) - seen - {"", module}):
                seen.add(target)
                out.append(Arrow(rel, modules[target], node.lineno))
    return sorted(out, key=lambda a: (a.source, a.line, a.target))


def _existing(name: str, modules: Mapping[str, str]) -> str:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def circles(graph: Sequence[Arrow]) -> list[list[Arrow]]:
    """One closed chain of arrows for each group of modules that reach each other (Tarjan's strongly
    connected components, then the shortest way round from the group's first module), in name order."""
    out_of: dict[str, list[Arrow]] = {}
    for a in graph:
        out_of.setdefault(a.source, []).append(a)
        out_of.setdefault(a.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the chain length: a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        for a in out_of[v]:
            if a.target not in index:
                visit(a.target)
                low[v] = min(low[v], low[a.target])
            elif a.target in stack:
                low[v] = min(low[v], index[a.target])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(out_of):
        if v not in index:
            visit(v)
    return sorted((_way_round(min(g), g, out_of) for g in groups), key=lambda chain: chain[0].source)


def _way_round(start: str, group: set[str], out_of: Mapping[str, list[Arrow]]) -> list[Arrow]:
    """The shortest chain of arrows inside ``group`` from ``start`` back to it (breadth first)."""
    came: dict[str, Arrow] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for a in out_of[v]:
                if a.target == start:
                    chain = [a]
                    while chain[0].source != start:
                        chain.insert(0, came[chain[0].source])
                    return chain
                if a.target in group and a.target not in came:
                    came[a.target] = a
                    following.append(a.target)
        frontier = following
    raise AssertionError(f"{start} is in a circle with no way round")  # Tarjan's groups always have one


def place(path: str, entries: Iterable[str]) -> str | None:
    """The entry that holds ``path``: the longest that is the file itself or a folder (``x/``) above it."""
    fits = [e for e in entries if path == e or (e.endswith("/") and path.startswith(e))]
    return max(fits, key=len) if fits else None


def against_layers(graph: Sequence[Arrow], layers: Mapping[str, Sequence[Sequence[str]]]) -> list[str]:
    """Every arrow that climbs (to a higher layer) or runs sideways (to another unit of its own layer:
    the units of one layer are independent), one line each. ``layers``: name -> its units, bottom
    first; a unit is a few entries (a file, or a folder ending in ``/``) whose modules may import each
    other. A module on no layer is a problem too: it has to be placed."""
    where = {entry: (n, name, u) for n, (name, units) in enumerate(layers.items())
             for u, unit in enumerate(units) for entry in unit}
    problems = [f"{p} is on no layer: place it in LAYERS (tests/repo/test_layers.py) and in CONTRIBUTING.md"
                for p in sorted({p for a in graph for p in (a.source, a.target) if place(p, where) is None})]
    for a in graph:
        src, dst = place(a.source, where), place(a.target, where)
        if src is None or dst is None:
            continue
        (low, low_name, low_unit), (high, high_name, high_unit) = where[src], where[dst]
        if high > low:
            problems.append(f"climbs: {a} (from layer {low + 1}, {low_name}, up to layer {high + 1}, {high_name})")
        elif high == low and high_unit != low_unit:
            problems.append(f"sideways: {a} ({src} and {dst} are independent units of layer {low + 1}, {low_name})")
    return problems
