"""What the pruning passes read about a session, below the rules that read it.

``text`` computes each distinct text's features once (normalised form, word 3-grams, markers);
``near`` finds which texts nearly contain which; ``index`` keeps what the rules read about a
session's messages; ``fileops`` says what a tool call does to files; ``config`` holds
``PruneConfig``, the passes' settings. The rules (``pruner.rules``) import these and the engine
(``pruner.engine``) imports the rules, so they are a package of their own under both: with
them inside ``pruner/engine/`` the rules' imports climbed back up into the engine.

This package imports nothing on import: its modules are the API, imported by name.
"""

#: Nothing at the package level: its modules are the API (imported by name, e.g. ``pruner.analysis.index``).
__all__: list[str] = []
