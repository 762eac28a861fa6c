"""Your own agent logs: find them (``discover``), read the new and changed sessions into one table (``run_logs``).

See ``pruner logs --help`` and ``docs/own-logs.md``.
"""

from .discover import AGENTS, FileState, Location, LogSession, agent_roots, discover
from .run import LogsSummary, plan, read_session, run_logs

__all__ = ["AGENTS", "FileState", "Location", "LogSession", "LogsSummary", "agent_roots", "discover", "plan",
           "read_session", "run_logs"]
