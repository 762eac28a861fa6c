"""Errors a person can act on.

Every error the library raises on bad input is a ``PrunerError``: the CLI turns
it into one line on stderr and exit status 2, the dashboard into ``st.error``.
"""

from __future__ import annotations


class PrunerError(ValueError):
    """Base class for every error caused by the input rather than by a bug."""


class InvalidSessionError(PrunerError):
    """A session breaks the model's rules (duplicate ids, unknown role, ...).

    The message names the offending message (by id and position) and field.
    """


class FormatError(PrunerError):
    """A transcript file cannot be read.

    ``str(err)`` reads ``FILE:LINE: what is wrong`` (or ``FILE: $.path: ...`` for
    JSON documents) so a person can open the file at the right place.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None):
        self.file = file
        self.line = line
        self.path = path
        self.detail = message
        where = file or "<input>"
        if line is not None:
            where += f":{line}"
        if path:
            where += f": {path}"
        super().__init__(f"{where}: {message}")


class SummarizerError(PrunerError):
    """A summariser (usually a remote LLM) failed; the message names the cause."""


class ConfigurationError(PrunerError):
    """A setting is out of range or of the wrong kind; the message names the setting."""


class ExportError(PrunerError):
    """An exported message list the API would reject, or a session that cannot be
    exported; the message says where."""
