"""``python -m pruner.readme README.md``: rewrite the README's generated parts in place (or a ``docs/``
page's: ``python -m pruner.readme docs/own-logs.md``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import PrunerError
from . import regenerate


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "README.md")
    try:
        text = path.read_text(encoding="utf-8")
        here = path.resolve().parent
        # the result files are named from the repository root (a docs/ page's table too)
        root = next((p for p in (here, *here.parents) if (p / "sample_sessions").is_dir()), here)
        new = regenerate(text, root)
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
