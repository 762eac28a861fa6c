"""The Start page's logic: the samples it offers, and which links it passes on to the explorer.

>>> passes_on({"sample": "native_demo.jsonl"}), passes_on({})
(True, False)
"""

from __future__ import annotations

from typing import Mapping

from .. import links

#: The samples offered on the Start page: (label, the link's parameters).
SAMPLES = (
    ("A short demo (25 messages, every kind of removal)", {"sample": "native_demo.jsonl"}),
    ("A Pi coding-agent session that compacted", {"sample": "pi_session.jsonl"}),
    ("A 2,000-turn generated agent session", {"workload": "tool_agent", "turns": "2000", "seed": "0"}),
)


def passes_on(params: Mapping[str, str]) -> bool:
    """Whether a link to the app's root names a session: then the explorer opens it (old links keep working)."""
    return links.names_a_source(params)
