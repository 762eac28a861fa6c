"""Which test profile this run is: ``nightly`` (``PRUNER_NIGHTLY=1``), ``ci`` (``CI`` set) or ``dev``.

One switch for every suite: the shared hypothesis profile (tests/conftest.py), the logs fuzz suite and
the fast-against-full differential read it here. ``PRUNER_FUZZ=nightly`` and ``PRUNER_FUZZ_NIGHTLY``,
the two fuzz suites' earlier switches, and ``PRUNER_LIMIT_NIGHTLY=1``, the bound's, still select it.
"""

from __future__ import annotations

import os


def profile() -> str:
    env = os.environ
    if env.get("PRUNER_NIGHTLY") or env.get("PRUNER_FUZZ") == "nightly" or env.get("PRUNER_FUZZ_NIGHTLY") \
            or env.get("PRUNER_LIMIT_NIGHTLY"):
        return "nightly"
    return "ci" if env.get("CI") else "dev"
