"""Synthetic workloads whose ground truth comes from the generator's own world model.

Three workloads (``WORKLOADS``), any size, byte-identical for a given seed on
every run and machine. Each message's ``required`` says whether the world
model needs it (see ``pruner.bench.workloads.world``); its ``metadata`` records what
it carries (``carries``: ``item@version``; ``live``: the copies a safe pruner must
keep one of), which facts it refers to (``uses``
with a ``REF:`` tag, ``untagged_uses`` in a paraphrase), and for a re-retrieved
chunk how the copy differs (``variant``). Nothing here calls the pruner.

>>> s = generate("tool_agent", turns=20, seed=7)
>>> s.metadata["workload"], s.messages[0].role
('tool_agent', 'system')
>>> all(m.required is not None for m in s.messages)
True
"""

from __future__ import annotations

import gc

from ...errors import PrunerError
from ...model import Session
from .generator import GENERATOR_VERSION, _Generator
from .params import SIZES, WORKLOADS, WorkloadParams, params_table
from .truth import (FactTruth, LostFacts, SessionTruth, lost_items, missing_facts, oracle_messages,
                    session_truth)
from .world import DIALOGUE_ROLES

__all__ = ["DIALOGUE_ROLES", "FactTruth", "GENERATOR_VERSION", "LostFacts", "SIZES", "SessionTruth",
           "WORKLOADS", "WorkloadParams", "generate", "lost_items", "missing_facts", "oracle_messages", "params_table",
           "session_truth"]


def generate(workload: str, *, turns: int, seed: int = 0) -> Session:
    """A ``turns``-turn session of ``workload``, labelled with ground truth.

    Raises ``PrunerError`` for an unknown workload or a negative size.
    """
    params = WORKLOADS.get(workload)
    if params is None:
        raise PrunerError(f"unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")
    if not isinstance(turns, int) or isinstance(turns, bool) or turns < 0:
        raise PrunerError(f"turns must be a non-negative integer, got {turns!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise PrunerError(f"seed must be an integer, got {seed!r}")
    # The generator allocates millions of small objects and no reference cycles; the
    # cyclic collector would rescan them again and again (quadratic in the size).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Generator(params, seed).session(turns, seed)
    finally:
        if was_enabled:
            gc.enable()
