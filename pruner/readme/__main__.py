"""``python -m pruner.readme [PAGE ...]``: rewrite the documentation's generated parts in place
(README.md and every page under docs/ when no page is named)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import PrunerError
from ..files import write_atomic
from . import pages, regenerate


def _root(path: Path) -> Path:
    """The repository the page belongs to: the nearest folder above it holding pyproject.toml."""
    for parent in path.resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return parent
    return path.resolve().parent


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or pages(Path.cwd())
    status = 0
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
            new = regenerate(text, _root(path))
        except (OSError, PrunerError) as exc:
            print(f"pruner.readme: error: {path}: {exc}", file=sys.stderr)
            status = 2
            continue
        if new == text:
            print(f"{path}: generated parts already up to date")
            continue
        write_atomic(path, new)
        print(f"{path}: generated parts updated")
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
