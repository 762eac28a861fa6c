"""pruner: make long LLM conversations smaller without breaking them.

>>> from pruner import Message, Session, prune
>>> s = Session.of([Message(id="u1", role="user", content="My format is CSV. DEFINE:fmt")])
>>> prune(s).stats.messages_after
1
"""

from .compaction import CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact
from .errors import ConfigurationError, ExportError, FormatError, InvalidSessionError, PrunerError, SummarizerError
from .analysis.fileops import FileTools
from .formats import FORMATS, load_session, save_session
from .formats.export import dumps, export, to_anthropic_messages, to_openai_messages, to_text
from .model import ROLES, STATUSES, Decision, Message, Session, ToolCall, validate_session
from .engine.incremental import IncrementalPruner
from .engine.prune import PruneConfig, PruneResult, PruneStats, message_tokens, prune
# ``replay_session``, not ``replay``: the name ``pruner.replay`` is the package (issue 24; CHANGELOG 0.4.0).
# It is ``pruner.replay.replay``: one function, which detects the session's provider and model as the CLI does.
from .replay import Answer, Bill, Replay, ReplaySettings, bill, calibrate, verdict
from .replay import replay as replay_session
from .tokens import ENCODINGS, get_counter

__version__ = "0.4.0"
"""The version of pruner (``pruner --version`` prints it); CHANGELOG.md says what each changed."""

__all__ = [
    "Answer", "Bill", "CompactionSettings", "ConfigurationError", "Decision", "ENCODINGS", "ExportError", "FORMATS",
    "FileTools", "FormatError", "IncrementalPruner", "InvalidSessionError", "Message", "OfflineSummarizer",
    "OpenAISummarizer", "PruneConfig", "PruneResult", "PruneStats", "PrunerError", "ROLES", "Replay",
    "ReplaySettings", "STATUSES", "Session", "SummarizerError", "ToolCall", "__version__", "bill",
    "calibrate", "compact", "dumps", "export", "get_counter", "load_session", "message_tokens", "prune",
    "replay_session", "save_session", "to_anthropic_messages", "to_openai_messages", "to_text",
    "validate_session", "verdict"
]
