"""The terms context recall counts, importable where they were first written: they live in
``pruner.terms`` now, below both the replay (which counts them) and compaction (which quotes them)."""

from ..terms import GRAMMAR, MIN_DIGITS, MIN_LENGTH, TERM, context_terms, distinctive, message_text, pieces, reply_terms

__all__ = ["GRAMMAR", "MIN_DIGITS", "MIN_LENGTH", "TERM", "context_terms", "distinctive", "message_text", "pieces",
           "reply_terms"]
