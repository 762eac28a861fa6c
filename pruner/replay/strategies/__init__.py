"""Built-in replay strategies, one module each; every module here registers itself when loaded."""

#: Nothing at the package level: each module registers a strategy (``pruner.replay.STRATEGIES``).
__all__: list[str] = []
