"""Running the passes.

What the passes read about a session (its index, text features, near duplicates, file
operations, ``PruneConfig``) is ``pruner.analysis``, a package below the rules; ``prune``
runs the three passes and ``result``
turns what they decided into a ``PruneResult`` (decisions built when read);
``rounds`` decides when a second round can be skipped; ``incremental`` carries the
same result from turn to turn with the rules' trackers, and ``context`` keeps what
the model receives up to date from what changed.

This package imports nothing on import: its modules are the API, imported by name.
"""

#: Nothing at the package level: its modules are the API (imported by name, e.g. ``pruner.engine.prune``).
__all__: list[str] = []
