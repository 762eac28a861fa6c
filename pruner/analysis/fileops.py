"""Which files a tool call reads, writes or edits, for the common coding agents.

>>> from pruner.model import ToolCall
>>> file_operations(ToolCall(id="c1", name="Read", arguments={"file_path": "src/app.py"}))
(('read', 'src/app.py'),)
>>> file_operations(ToolCall(id="c2", name="str_replace_editor",
...                          arguments={"command": "view", "path": "/repo/x.py"}))
(('read', '/repo/x.py'),)
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..model import ToolCall, parse_arguments

READ, WRITE, EDIT = "read", "write", "edit"


@dataclass(frozen=True)
class FileTools:
    """Tool and argument names that identify file operations (matched case-insensitively).

    ``editor_tools`` take a ``command`` argument (SWE-agent's and OpenHands'
    ``str_replace_editor``): ``view`` reads; ``create`` writes; ``str_replace``,
    ``insert``, ``undo_edit`` edit. ``range_args`` mark a partial read, which
    does not make an earlier full read stale.
    """

    read: frozenset[str] = frozenset({"read", "read_file", "view", "view_file", "cat", "open_file"})
    write: frozenset[str] = frozenset({"write", "write_file", "create", "create_file"})
    edit: frozenset[str] = frozenset({"edit", "str_replace", "apply_patch", "multiedit", "edit_file",
                                      "replace", "insert"})
    editor_tools: frozenset[str] = frozenset({"str_replace_editor", "str_replace_based_edit_tool",
                                              "edit_tool", "file_editor"})
    path_args: tuple[str, ...] = ("path", "file_path", "filepath", "filename", "file")
    range_args: frozenset[str] = frozenset({"offset", "limit", "view_range", "start_line", "end_line",
                                            "line_start", "line_end", "lines"})


DEFAULT_FILE_TOOLS = FileTools()

_EDITOR_COMMANDS = {"view": READ, "create": WRITE, "str_replace": EDIT, "insert": EDIT,
                    "undo_edit": EDIT, "write": WRITE, "edit": EDIT}
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)


def _norm(path: str) -> str:
    return posixpath.normpath(path.strip()) if path.strip() else path


def _patch_paths(text: str) -> tuple[tuple[str, str], ...]:
    ops = []
    for kind, path in _PATCH_FILE.findall(text):
        ops.append((WRITE if kind == "Add" else EDIT, _norm(path)))
    ops += [(WRITE, _norm(p)) for p in _PATCH_MOVE.findall(text)]
    return tuple(ops)


def file_operations(call: ToolCall, tools: FileTools = DEFAULT_FILE_TOOLS) -> tuple[tuple[str, str], ...]:
    """``(operation, path)`` pairs for ``call``; empty when it touches no file we can name."""
    name = (call.name or "").lower()
    args = parse_arguments(call.arguments)
    if name == "apply_patch" or (isinstance(args, str) and "*** Begin Patch" in args):
        text = args if isinstance(args, str) else " ".join(
            str(v) for v in (args.values() if isinstance(args, dict) else [args]))
        return _patch_paths(text)
    if not isinstance(args, dict):
        return ()
    path = next((args[a] for a in tools.path_args if isinstance(args.get(a), str) and args[a].strip()), None)
    if path is None:
        return ()
    if name in tools.editor_tools:
        op = _EDITOR_COMMANDS.get(str(args.get("command", "")).lower())
    elif name in tools.read:
        op = READ
    elif name in tools.write:
        op = WRITE
    elif name in tools.edit:
        op = EDIT
    else:
        op = None
    return ((op, _norm(path)),) if op else ()


def is_partial_read(call: ToolCall, tools: FileTools = DEFAULT_FILE_TOOLS) -> bool:
    """True when a read asks for part of a file (offset, limit, a line range)."""
    args = parse_arguments(call.arguments)
    return isinstance(args, dict) and any(args.get(a) not in (None, "", []) for a in tools.range_args)
