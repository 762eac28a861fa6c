"""pruner: make long LLM conversations smaller without breaking them.

>>> from pruner import Message, Session, prune
>>> s = Session.of([Message(id="u1", role="user", content="My format is CSV. DEFINE:fmt")])
>>> prune(s).stats.messages_after
1
"""

from .compaction import CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact
from .errors import FormatError, InvalidSessionError, PrunerError, SummarizerError
from .fileops import FileTools
from .formats import FORMATS, load_session, save_session
from .model import ROLES, STATUSES, Decision, Message, Session, ToolCall, validate_session
from .incremental import IncrementalPruner
from .prune import PruneConfig, PruneResult, PruneStats, message_tokens, prune
from .tokens import ENCODINGS, get_counter

__all__ = [
    "CompactionSettings", "IncrementalPruner", "OfflineSummarizer", "OpenAISummarizer", "compact",
    "Decision", "ENCODINGS", "FORMATS", "FileTools", "FormatError", "InvalidSessionError", "Message",
    "PruneConfig", "PruneResult", "PruneStats", "PrunerError", "ROLES", "STATUSES", "Session",
    "SummarizerError", "ToolCall", "get_counter", "load_session", "message_tokens", "prune",
    "save_session", "validate_session",
]
