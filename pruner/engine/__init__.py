"""Running the passes.

``text`` computes each distinct text's features once (normalised form, word 3-grams,
markers); ``near`` finds which texts nearly contain which; ``index`` keeps what the
rules read about a session's messages; ``prune`` runs the three passes and ``result``
turns what they decided into a ``PruneResult`` (decisions built when read);
``rounds`` decides when a second round can be skipped; ``incremental`` carries the
same result from turn to turn with the rules' trackers, and ``context`` keeps what
the model receives up to date from what changed. ``fileops`` says what a tool call
does to files.

This package imports nothing on import, so a rule module can import
``pruner.engine.index`` while ``pruner.engine.prune`` imports the rules.
"""

#: Nothing at the package level: its modules are the API (imported by name, e.g. ``pruner.engine.prune``).
__all__: list[str] = []
