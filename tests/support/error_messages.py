"""Every library error message the suite makes, checked when the run ends: none may name a flag.

``pruner.errors`` promises that a library message names the setting (``err.setting``), never a
command-line flag: the CLI says ``--reserve-tokens``, the dashboard its control's label. The static
scan in ``tests/unit/replay/test_settings_source.py`` reads the raise sites; this records what the library really
raised while the whole suite ran, so a message built at run time (a flag pasted in from a table, a
helper's text) is caught too. Errors made by the CLI itself (``pruner/cli/``: its messages are
about its flags) and by tests are not the library's and are left out.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pruner import errors

ROOT = Path(__file__).resolve().parents[2]
LIBRARY, FRONT_END = ROOT / "pruner", ROOT / "pruner" / "cli"
_ERRORS_FILE = Path(errors.__file__).resolve()
#: A command-line flag in a text: ``--word`` not inside a longer word or a ``---`` rule.
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")

#: message → (where it was made, the test that made it); only messages holding a flag are kept.
FOUND: dict[str, tuple[str, str | None]] = {}
current_test: list[str | None] = [None]


def _maker() -> Path | None:
    """The file of the first frame outside the error classes' own ``__init__`` methods."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name == "__init__" and "Error" in type(
            frame.f_locals.get("self", None)).__name__:
        frame = frame.f_back
    return Path(frame.f_code.co_filename).resolve() if frame is not None else None


def start() -> None:
    """Wrap ``PrunerError.__init__`` (once) so every library error holding a flag is recorded."""
    cls = errors.PrunerError
    if getattr(cls.__init__, "_records_flags", False):
        return
    original = cls.__init__

    def recording(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        text = " ".join(a for a in args if isinstance(a, str))
        if "--" in text and FLAG.search(text):
            where = _maker()
            if where is not None and where.is_relative_to(LIBRARY) and not where.is_relative_to(FRONT_END):
                FOUND.setdefault(text, (str(where.relative_to(ROOT)), current_test[0]))

    recording._records_flags = True  # type: ignore[attr-defined]
    cls.__init__ = recording  # type: ignore[method-assign]


def naming_a_flag() -> list[str]:
    """One line per library message that named a flag: the flag, where it was made, by which test."""
    return [f"{', '.join(FLAG.findall(text))} in {where} (test {test}): {text[:200]!r}"
            for text, (where, test) in sorted(FOUND.items())]
