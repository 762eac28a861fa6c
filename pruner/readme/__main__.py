"""``python -m pruner.readme README.md``: rewrite the README's generated parts in place."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import PrunerError
from . import regenerate, splice_tables


def _root(path: Path) -> Path:
    """The repository the document belongs to (result files are named relative to it): the nearest
    folder above it holding ``pyproject.toml``, else the document's own folder."""
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return folder


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "README.md")
    try:
        text = path.read_text(encoding="utf-8")
        # The README also holds the CLI reference; another document (docs/*.md) only figure tables.
        new = regenerate(text, _root(path)) if path.name == "README.md" else splice_tables(text, _root(path))
    except (OSError, PrunerError) as exc:
        print(f"pruner.readme: error: {exc}", file=sys.stderr)
        return 2
    if new == text:
        print(f"{path}: generated parts already up to date")
        return 0
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, path)
    print(f"{path}: generated parts updated")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
