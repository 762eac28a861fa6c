"""Compaction: replace old turns with a structured summary, and preview exactly how.

>>> from pruner.compaction import CompactionSettings, OfflineSummarizer, compact
>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
...                         content=f"step {i}: edit src/app.py " * 30) for i in range(6)])
>>> r = compact(s, CompactionSettings(keep_recent_tokens=150), OfflineSummarizer(), force=True)
>>> list(r.sections)[:3]
['Goal', 'Constraints & Preferences', 'Progress']

See ``compact.py`` for the result, ``cut.py`` for the cut rules,
``offline.py`` and ``openai_summarizer.py`` for the two summarisers.
"""

from .base import Summarizer, SummaryTask
from .compact import CompactionPlan, CompactionResult, compact, plan_compaction
from .cut import ContextWindow, CutPoint, PreviousCompaction, context_window, find_cut_point
from .offline import OfflineSummarizer
from .openai_summarizer import OpenAISummarizer
from .pipeline import PipelinePreview, compare_recorded, preview_pipeline
from .prompts import SYSTEM_PROMPT, SummaryRequest, history_request, prefix_request
from .sections import (PREFIX_SECTIONS, PROGRESS_SUBSECTIONS, SUMMARY_SECTIONS, missing_sections,
                       parse_file_lists, parse_sections)
from .serialize import serialize_messages, wrap_conversation
from .settings import CompactionSettings, TriggerDecision, should_compact

__all__ = [
    "CompactionPlan", "CompactionResult", "CompactionSettings", "ContextWindow", "CutPoint",
    "OfflineSummarizer", "OpenAISummarizer", "PREFIX_SECTIONS", "PROGRESS_SUBSECTIONS", "PipelinePreview",
    "PreviousCompaction", "SUMMARY_SECTIONS", "SYSTEM_PROMPT", "Summarizer", "SummaryRequest", "SummaryTask",
    "TriggerDecision", "compact", "compare_recorded", "context_window", "find_cut_point", "history_request",
    "missing_sections", "parse_file_lists", "parse_sections", "plan_compaction", "prefix_request",
    "preview_pipeline", "serialize_messages", "should_compact", "wrap_conversation",
]
