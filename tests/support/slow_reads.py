"""Preloaded into a test's ``dask worker`` (``--preload``): every session read there takes ``DELAY_S`` longer.

The killed-worker test (tests/unit/logs/test_logs_cluster.py) must kill a worker while it reads and while other
sessions wait; on a fast machine the whole run could end before the test looks. The delay is this
test module's, in the worker process only: pruner itself has no delay hook. ``pruner.logs.cluster``'s
task looks ``read_session`` up when it runs, so the worker reads through this wrapper.
"""

from __future__ import annotations

import time

from pruner.logs import run

DELAY_S = 0.4
#: The real reader, kept on its module: Dask may run a preload file more than once in a worker, and a
#: second run must wrap the real reader again, not the first wrapper (each read would sleep once more).
_read = getattr(run, "_real_read_session", run.read_session)
run._real_read_session = _read


def _slow(found, strategies=(), bound=False):
    time.sleep(DELAY_S)
    return _read(found, strategies, bound)


run.read_session = _slow
