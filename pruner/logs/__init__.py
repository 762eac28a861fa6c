"""Your own agent logs: find them (``discover``), read the new and changed sessions into one table (``run_logs``).

See ``pruner logs --help`` and ``docs/own-logs.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .discover import AGENTS, FileState, Location, LogSession, agent_roots, discover

if TYPE_CHECKING:
    from .run import LogsSummary, plan, read_session, run_logs

# The reading and its table need pyarrow (the logs extra): they are imported on first use, so that finding
# the logs (and `pruner logs --help`, whose flags name the agents) works on the core install.
_FROM_RUN = ("LogsSummary", "plan", "read_session", "run_logs")


def __getattr__(name: str) -> Any:
    if name in _FROM_RUN:
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AGENTS", "FileState", "Location", "LogSession", "LogsSummary", "agent_roots", "discover", "plan",
           "read_session", "run_logs"]
