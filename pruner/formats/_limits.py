"""The limits a session's bytes are held to, a file's or an agent's database rows alike (a leaf module:
``pruner.formats`` re-exports them, and ``common.RecordBudget`` reads them here without importing the
package that imports it)."""

#: The most bytes of one session a reader takes (``pruner.formats.load_session``'s ``max_bytes``).
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

#: What one JSON array or object costs to read, in bytes of plain text that cost as much memory.
#: Measured by ``pruner bench-limits``: a ``[`` becomes a Python list of about 100 bytes, while
#: text costs about 6 bytes of memory per byte; 8 keeps real transcripts (one array or object
#: per 65 to 280 bytes in every sample and real file) far from the limit.
CONTAINER_BYTES = 8

__all__ = ["CONTAINER_BYTES", "DEFAULT_MAX_BYTES"]
