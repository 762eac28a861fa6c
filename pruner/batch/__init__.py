"""Many transcripts at once: prune a corpus on Dask and write Parquet tables.

Example (not a doctest: it starts a cluster)::

    from pruner.batch import BatchSettings, run_batch
    summary = run_batch(["logs/"], "out/", BatchSettings(), workers=2)
    pandas.read_parquet("out/sessions")   # one row per session

``run_batch`` lists the input files (files, folders, globs), skips those the
output folder already holds with the same content, and prunes the rest with
one Dask task per partition of files. Each task writes its own ``sessions``
and ``decisions`` partition; see ``pruner.batch.schema`` for the columns.
"""

from .inputs import Inputs, InputFile, expand_inputs
from .run import BatchSummary, plan_partitions, run_batch
from .schema import DECISIONS, SESSIONS
from .settings import BatchSettings
from .store import MANIFEST, Folder

__all__ = ["BatchSettings", "BatchSummary", "DECISIONS", "Folder", "InputFile", "Inputs", "MANIFEST", "SESSIONS",
           "expand_inputs", "plan_partitions", "run_batch"]
