"""pruner: make long LLM conversations smaller without breaking them.

>>> from pruner import Message, Session, prune
>>> s = Session.of([Message(id="u1", role="user", content="My format is CSV. DEFINE:fmt")])
>>> prune(s).stats.messages_after
1
"""

from .compaction import CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact
from .errors import ConfigurationError, ExportError, FormatError, InvalidSessionError, PrunerError, SummarizerError
from .engine.fileops import FileTools
from .formats import FORMATS, load_session, save_session
from .formats.export import dumps, export, to_anthropic_messages, to_openai_messages, to_text
from .model import ROLES, STATUSES, Decision, Message, Session, ToolCall, validate_session
from .engine.incremental import IncrementalPruner
from .engine.prune import PruneConfig, PruneResult, PruneStats, message_tokens, prune
from .replay import ReplaySettings, calibrate, replay
from .tokens import ENCODINGS, get_counter

__version__ = "0.4.0"
"""The version of pruner (``pruner --version`` prints it); CHANGELOG.md says what each changed."""

__all__ = [
    "CompactionSettings", "ConfigurationError", "ExportError", "__version__", "dumps", "export",
    "to_anthropic_messages",
    "to_openai_messages", "to_text", "IncrementalPruner", "OfflineSummarizer", "OpenAISummarizer", "compact",
    "Decision", "ENCODINGS", "FORMATS", "FileTools", "FormatError", "InvalidSessionError", "Message",
    "PruneConfig", "PruneResult", "PruneStats", "PrunerError", "ROLES", "STATUSES", "Session",
    "SummarizerError", "ToolCall", "get_counter", "load_session", "message_tokens", "prune",
    "save_session", "validate_session", "replay", "ReplaySettings", "calibrate",
]
