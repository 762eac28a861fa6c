"""Running the passes.

``index`` computes what rules read about each message (content-addressed
features, call keys, file accesses); ``prune`` runs the three passes and
explains decisions; ``rounds`` decides when a second round can be skipped;
``incremental`` carries the same result from turn to turn. ``fileops`` says
what a tool call does to files.

This package imports nothing on import, so a rule module can import
``pruner.engine.index`` while ``pruner.engine.prune`` imports the rules.
"""
