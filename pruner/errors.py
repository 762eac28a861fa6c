"""Errors a person can act on.

Every error the library raises on bad input is a ``PrunerError``: the CLI turns
it into one line on stderr and exit status 2, the dashboard into ``st.error``.

Messages never name a command-line flag or a dashboard control: the library
does not know which front end shows them. When a setting would change the
outcome, the error carries its library name in ``setting`` (``"max_bytes"``,
``"dialogue"``, ``"format"``, ``"skip_bad_lines"``), and each front end adds
its own words for it (the CLI ``--max-bytes N``, the dashboard "the upload
limit").

>>> err = FileTooLargeError(size=500, limit=100, file="big.json")
>>> str(err), err.setting, err.limit
('big.json: the file is 500 bytes, over the 100-byte limit', 'max_bytes', 100)
>>> ConfigurationError("reserve_tokens must be a whole number", setting="reserve_tokens").setting
'reserve_tokens'
"""

from __future__ import annotations


class PrunerError(Exception):
    """Base class for every error caused by the input rather than by a bug.

    ``setting``: the library setting that would change the outcome, or None
    (``ConfigurationError("...", setting="reserve_tokens")``).

    Not a ``ValueError`` (since 0.4.0): a summariser's network failure or a busy
    batch folder is no bad value, and ``except ValueError`` around a library call
    must not swallow them.
    """

    setting: str | None = None

    def __init__(self, *args: object, setting: str | None = None):
        super().__init__(*args)
        if setting is not None:
            self.setting = setting


class InvalidSessionError(PrunerError):
    """A session breaks the model's rules (duplicate ids, unknown role, ...).

    The message names the offending message (by id and position) and field.
    """


class FormatError(PrunerError):
    """A transcript file cannot be read.

    ``str(err)`` reads ``FILE:LINE: what is wrong`` (or ``FILE: $.path: ...`` for
    JSON documents) so a person can open the file at the right place; ``detail``
    is the part after the place.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None, setting: str | None = None):
        self.file = file
        self.line = line
        self.path = path
        self.detail = message
        where = file or "<input>"
        if line is not None:
            where += f":{line}"
        if path:
            where += f": {path}"
        super().__init__(f"{where}: {message}", setting=setting)


class FileTooLargeError(FormatError):
    """A file over the size limit (``size`` and ``limit`` in bytes); refused before it is parsed.

    ``charged`` is set when the file is under the limit by length but its JSON holds so many
    arrays and objects that reading it would cost as much as a file of ``charged`` bytes.
    """

    def __init__(self, *, size: int, limit: int, file: str | None = None, charged: int | None = None):
        self.size = size
        self.limit = limit
        self.charged = charged
        if charged is None:
            message = f"the file is {size:,} bytes, over the {limit:,}-byte limit"
        else:
            message = (f"the file is {size:,} bytes, but its JSON nests so many arrays and objects that reading "
                       f"it costs as much memory as {charged:,} bytes of text, over the {limit:,}-byte limit")
        super().__init__(message, file=file, setting="max_bytes")


class DialogueChoiceError(FormatError):
    """A file holding ``count`` dialogues was read without saying which one (``setting`` "dialogue")."""

    def __init__(self, *, count: int, file: str | None = None):
        self.count = count
        super().__init__(f"this file holds {count} dialogues; choose one (0 to {count - 1})", file=file,
                         setting="dialogue")


class SummarizerError(PrunerError):
    """A summariser (usually a remote LLM) failed; the message names the cause."""


class ConfigurationError(PrunerError):
    """A setting is out of range or of the wrong kind; the message names the setting."""


class ExportError(PrunerError):
    """An exported message list the API would reject, or a session that cannot be
    exported; the message says where."""
