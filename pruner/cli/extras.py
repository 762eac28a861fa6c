"""Which optional install (pyproject's extras) each heavy command needs, and the one line that says so.

The core install (``pip install pruner``) reads, prunes, compacts offline and replays; a command
that needs more names its extra (``EXTRA = "batch"`` in its module, checked before it runs, or
``require`` where only one of its options needs it). A missing extra is the user's to fix, so it is
one line and exit status 2, never an ImportError's traceback:

    pruner batch needs the batch extra: pip install 'pruner[batch]'

The modules are looked up, not imported: the check costs no start-up time and imports nothing.
"""

from __future__ import annotations

import importlib.util

#: extra -> the modules it installs that the commands import (the import names, not the distributions').
EXTRAS: dict[str, tuple[str, ...]] = {
    "dashboard": ("streamlit", "pandas", "plotly", "pyarrow", "psutil"),
    "batch": ("dask", "distributed", "pyarrow", "psutil"),
    "logs": ("pyarrow", "psutil"),  # psutil: the folder lock (pruner.batch.lock)
    "openai": ("openai",),
}


class MissingExtra(Exception):
    """A command needs an extra that is not installed; ``str()`` is the line to print."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here, in ``EXTRAS`` order."""
    return [name for name in EXTRAS[extra] if _absent(name)]


def _absent(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):  # a broken install, or a module set to None to stand for a missing one
        return True


def require(command: str, extra: str) -> None:
    """Raise ``MissingExtra`` naming ``command`` (as typed: ``pruner batch``) when ``extra`` is not installed."""
    if missing(extra):
        raise MissingExtra(f"{command} needs the {extra} extra: pip install 'pruner[{extra}]'")


__all__ = ["EXTRAS", "MissingExtra", "missing", "require"]
