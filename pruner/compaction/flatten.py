"""Transcript text made safe to quote on one line of a summary (the offline summariser's items, the
key lines): both quote with it, so it stands below both."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Terminal residue pasted from or printed by a TUI: colour codes (with or without their ESC),
# spinner glyphs (Braille patterns), box-drawing lines and block elements. Quoted into a
# summary they are noise that costs tokens and reads as garbage.
_TERMINAL_NOISE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|(?<![\w\]])\[[0-9;]{1,12}m|[\u2800-\u28ff\u2500-\u259f]+")
_TAGS = re.compile(r"</?(?:summary|read-files|modified-files|conversation|previous-summary)>")


def one_line(text: str, limit: int = 240) -> str:
    """``text`` on one line: terminal residue and control characters dropped, whitespace collapsed, cut at ``limit``.

    >>> one_line("crashed. ⠇ Working... (esc to interrupt) ─────── \x1b[2mdark\x1b[0m [39mlight")
    'crashed. Working... (esc to interrupt) dark light'

    The tags the compacted message relies on are broken up, so transcript text
    cannot end the summary early or add files to its lists.
    """
    text = _TERMINAL_NOISE.sub(" ", text)
    flat = " ".join(_CONTROL.sub(" ", _TAGS.sub(lambda m: m.group(0).replace("<", "< "), text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
