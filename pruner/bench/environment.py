"""Where and when a benchmark ran: written into every results file beside its figures.

A figure quoted in the README is only meaningful with the machine it was measured
on and how busy that machine was, so each benchmark command stores this block in
its results file (``meta["environment"]``), and the README's figure tables print it
under the table they render.

>>> env = finish(start("pruner bench"))
>>> sorted(env), env["command"], env["machine"]["cpus"] >= 1
(['command', 'date', 'load_after', 'load_before', 'machine'], 'pruner bench', True)
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from typing import Any


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not available on this platform
        return None


def start(command: str) -> dict[str, Any]:
    """The environment block at the start of a run of ``command`` (the command line a reader reruns)."""
    return {
        "command": command,
        # The date a figure was measured is a fact about the figure, so the wall clock belongs here
        # (and only here: no result depends on it).
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"system": f"{platform.system()} {platform.machine()}",
                    "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count() or 1, "python": platform.python_version()},
        "load_before": _load(),
    }


def finish(env: dict[str, Any]) -> dict[str, Any]:
    """``env`` with the load average at the end of the run added (a new dict)."""
    return {**env, "load_after": _load()}


def describe(env: dict[str, Any] | None) -> str:
    """One line for a caption: ``2025-01-31 10:00 UTC; Linux x86_64, 2 CPUs; load 1.0 -> 1.2``."""
    if not env:
        return "no record of where or when it ran"
    m = env.get("machine", {})
    def load(v: Any) -> str:
        return "?" if not v else f"{v[0]:.1f}"
    return (f"{env.get('date', '?')}; {m.get('system', '?')}, {m.get('cpus', '?')} CPUs, "
            f"Python {m.get('python', '?')}; 1-minute load {load(env.get('load_before'))} at the start, "
            f"{load(env.get('load_after'))} at the end")
