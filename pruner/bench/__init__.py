"""Benchmarks: ``workloads`` (synthetic sessions with world-model ground truth),
``run`` (the workload × size benchmark), ``baselines`` (no pruning, truncation,
oracle), ``scaling`` and ``speed`` (timings).

``workloads`` never imports the pruner, so its ground truth cannot depend on it.
"""

#: Nothing at the package level: its modules are the API (imported by name, e.g. ``pruner.bench.run``).
__all__: list[str] = []
