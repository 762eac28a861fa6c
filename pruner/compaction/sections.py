"""The structured summary: its sections, parsing, validation and file lists.

>>> text = "## Goal\\n- ship it\\n## Next Steps\\n- test"
>>> parse_sections(text)
{'Goal': '- ship it', 'Next Steps': '- test'}
>>> missing_sections(text)[:2]
['## Constraints & Preferences', '## Progress']
"""

from __future__ import annotations

import re
from typing import Iterable

#: The summary's sections, in order.
SUMMARY_SECTIONS: tuple[str, ...] = ("Goal", "Constraints & Preferences", "Progress", "Key Decisions",
                                     "Next Steps", "Critical Context")
#: The subsections of ``## Progress``, in order.
PROGRESS_SUBSECTIONS: tuple[str, ...] = ("Done", "In Progress", "Blocked")
#: The sections of a split turn's prefix summary, in order.
PREFIX_SECTIONS: tuple[str, ...] = ("Original Request", "Early Progress", "Context for Suffix")

_HEADING = re.compile(r"^(#{2,3}) +(.+?) *#* *$", re.MULTILINE)
_RULE = re.compile(r"^---+ *$", re.MULTILINE)
_FILE_LIST = re.compile(r"<(read-files|modified-files)>\n?(.*?)</\1>", re.DOTALL)


def _blocks(text: str, level: int) -> dict[str, str]:
    out: dict[str, str] = {}
    marks = [(m.start(), m.end(), m.group(2).strip()) for m in _HEADING.finditer(text)
             if len(m.group(1)) == level]
    for k, (_, end, name) in enumerate(marks):
        stop = marks[k + 1][0] if k + 1 < len(marks) else len(text)
        # A lower-level heading belongs to its section; a "---" rule ends it (split-turn joins use one).
        body = _RULE.split(text[end:stop], maxsplit=1)[0]
        out.setdefault(name, strip_file_lists(body).strip())
    return out


def parse_sections(text: str) -> dict[str, str]:
    """``{heading: body}`` for every ``## heading`` of ``text`` (first occurrence wins).

    A ``## Progress`` body keeps its ``### `` subsections; file lists are left out.
    """
    return _blocks(text, 2)


def parse_subsections(body: str) -> dict[str, str]:
    """``{heading: body}`` for every ``### heading`` of a section body."""
    return _blocks(body, 3)


def missing_sections(text: str, required: Iterable[str] = SUMMARY_SECTIONS) -> list[str]:
    """The required headings ``text`` lacks, as ``## Name`` / ``### Name`` strings, in order.

    When ``required`` includes ``Progress``, its three subsections are required too.
    """
    sections = parse_sections(text)
    missing = []
    for name in required:
        if name not in sections:
            missing.append(f"## {name}")
            if name == "Progress":
                missing.extend(f"### {s}" for s in PROGRESS_SUBSECTIONS)
        elif name == "Progress":
            subs = parse_subsections(sections[name])
            missing.extend(f"### {s}" for s in PROGRESS_SUBSECTIONS if s not in subs)
    return missing


def bullets(body: str) -> list[str]:
    """The ``- item`` lines of a section body (without the dash), in order."""
    return [line[2:].strip() for line in body.splitlines() if line.startswith("- ") and line[2:].strip()]


def format_file_lists(read_files: Iterable[str], modified_files: Iterable[str]) -> str:
    """The ``<read-files>`` / ``<modified-files>`` blocks (empty lists are left out)."""
    parts = []
    for tag, files in (("read-files", list(read_files)), ("modified-files", list(modified_files))):
        if files:
            parts.append(f"<{tag}>\n" + "\n".join(files) + f"\n</{tag}>")
    return "\n\n".join(parts)


def parse_file_lists(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(read files, modified files)`` listed in ``text``'s file-list blocks."""
    found: dict[str, list[str]] = {"read-files": [], "modified-files": []}
    for tag, body in _FILE_LIST.findall(text):
        found[tag].extend(line.strip() for line in body.splitlines() if line.strip())
    return tuple(dict.fromkeys(found["read-files"])), tuple(dict.fromkeys(found["modified-files"]))


def strip_file_lists(text: str) -> str:
    """``text`` without its file-list blocks."""
    return _FILE_LIST.sub("", text).rstrip()
