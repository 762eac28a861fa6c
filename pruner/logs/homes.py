"""A team's logs: one shared folder, one sub-folder per person or machine, each laid out as a home folder.

::

    SHARED/alice/.claude/projects/<project>/<session>.jsonl
    SHARED/alice/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
    SHARED/bob-laptop/.gemini/tmp/<project>/chats/*.json
    ...

Each sub-folder is searched as a home folder is (``discover`` with ``{"HOME": sub-folder}`` and no
other variable: the agents' variables of the machine running the command, such as
``CLAUDE_CONFIG_DIR``, are this machine's, not the team's). Its sessions carry the sub-folder's
name as their ``person``, the table's ``person`` column. A session's key is its agent and main
file, and the main file's path holds the sub-folder, so keys never collide across persons; a file
reached through two persons' folders (a link, a copy by hard link, a folder mounted twice) is one
session, billed once: the path at the file's real place, else the first person's in name order
(``pruner.logs.aliases``).

Hidden sub-folders (``.snapshot``, ``.git``) and files beside the sub-folders are not persons.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..errors import ConfigurationError
from .aliases import distinct
from .discover import AGENTS, Location, discover
from .names import printable


def people(shared: str) -> list[tuple[str, str]]:
    """(person, home folder) for each sub-folder of ``shared``, in name order."""
    if not os.path.isdir(shared):
        what = "does not exist" if not os.path.lexists(shared) else "is not a folder"
        raise ConfigurationError(f"{printable(shared)}: {what}; a team's folder holds one home folder per person "
                                 "or machine", setting="homes")
    try:
        names = sorted(os.listdir(shared))
    except OSError as exc:
        raise ConfigurationError(f"{printable(shared)}: cannot list the folder ({exc.strerror or exc})",
                                 setting="homes") from None
    return [(name, os.path.join(shared, name)) for name in names
            if not name.startswith(".") and os.path.isdir(os.path.join(shared, name))]


def discover_homes(shared: str, *, agents: tuple[str, ...] = AGENTS, since: str | None = None,
                   until: str | None = None, project: str | None = None) -> list[tuple[str, Location]]:
    """(person, agent folder and its sessions) for every person of ``shared`` and every agent of ``agents``,
    each session labelled with its person, one session per real file across persons (see the module)."""
    shared = os.path.abspath(shared)
    found = [(person, loc) for person, home in people(shared)
             for loc in discover({"HOME": home}, agents=agents, since=since, until=until, project=project)]
    labelled = [(person, replace(loc, sessions=tuple(replace(s, person=person) for s in loc.sessions)))
                for person, loc in found]
    kept = set(distinct(s for _, loc in labelled for s in loc.sessions))
    return [(person, replace(loc, sessions=tuple(s for s in loc.sessions if s in kept))) for person, loc in labelled]


def person_totals(rows: list[dict[str, object]]) -> list[tuple[str, int, float]]:
    """(person, sessions, dollars billed) per person of ``rows`` (removed rows left out), in name order."""
    sums: dict[str, tuple[int, float]] = {}
    for r in rows:
        if r.get("removed"):
            continue
        person = str(r.get("person") or "")
        billed = r.get("billed")
        n, dollars = sums.get(person, (0, 0.0))
        sums[person] = (n + 1, dollars + (billed if isinstance(billed, (int, float)) else 0.0))
    return [(person, n, dollars) for person, (n, dollars) in sorted(sums.items())]
