"""``pruner compact FILE``: preview compaction: trigger, cut, summary, tokens before -> after.

The API key for ``--summarizer openai`` is read only from the environment
(``OPENAI_API_KEY``, or the variable named by ``--api-key-env``), never from a
flag, so it does not end up in shell history; it is never printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from ..compaction import (CompactionSettings, OfflineSummarizer, OpenAISummarizer, compact, compare_recorded,
                          preview_pipeline)
from ..compaction.base import Summarizer
from ..compaction.compact import CompactionResult
from ..compaction.openai_summarizer import DEFAULT_MODEL, display_url
from ..compaction.pipeline import PipelinePreview
from ..model import Session
from ..errors import ConfigurationError
from ..formats.export import export
from ..jsonio import dumps_json
from .extras import require
from .types import base_url, non_negative_int, positive_int, positive_seconds
from .common import (add_input_arguments, add_setting_arguments, load_from_args, say, setting_values, terminal_safe,
                     warn, write_output)

NAME = "compact"
HELP = "preview compaction: where the cut falls, the structured summary, tokens before -> after"
COMPACTION_SETTINGS = ("context_window", "reserve_tokens", "keep_recent_tokens", "encoding")

def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    add_setting_arguments(p, CompactionSettings, COMPACTION_SETTINGS)
    p.add_argument("--force", action="store_true", help="compact even when the trigger does not fire")
    p.add_argument("--prune", action="store_true",
                   help="prune first, then compact the kept messages, and show what each step saves")
    p.add_argument("--summarizer", choices=("offline", "openai"), default="offline",
                   help="offline: deterministic, no network (default); openai: an OpenAI-compatible endpoint")
    p.add_argument("--model", default=DEFAULT_MODEL, help="model for --summarizer openai (default %(default)s)")
    p.add_argument("--base-url", metavar="URL", type=base_url, default=None,
                   help="endpoint for --summarizer openai (default: $OPENAI_BASE_URL or api.openai.com)")
    p.add_argument("--api-key-env", metavar="NAME", default="OPENAI_API_KEY",
                   help="environment variable that holds the API key (default %(default)s)")
    p.add_argument("--timeout", type=positive_seconds, default=60.0, metavar="S",
                   help="seconds per request (default 60)")
    p.add_argument("--max-retries", type=non_negative_int, default=2, metavar="N",
                   help="retries after a 429, 5xx, timeout or refused connection (default 2)")
    p.add_argument("--max-output-tokens", type=positive_int, default=4096, metavar="N",
                   help="cap on the summary's length in tokens (default 4096)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON instead of text")
    p.add_argument("--show-request", action="store_true",
                   help="also print the exact request a summariser is sent (system prompt and user message)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the compacted session here")
    p.add_argument("--to", choices=("native", "openai"), default="native",
                   help="format for -o: native JSONL or OpenAI Chat Completions messages JSON")


def _summarizer(args: argparse.Namespace) -> Summarizer:
    if args.summarizer == "offline":
        return OfflineSummarizer()
    require("pruner compact --summarizer openai", "openai")
    key = os.environ.get(args.api_key_env)
    if not key:
        raise ConfigurationError(f"--summarizer openai needs an API key in the environment variable "
                                 f"{args.api_key_env}; set it (it is never printed) or use --summarizer offline")
    return OpenAISummarizer(base_url=args.base_url, model=args.model, api_key=key, timeout=args.timeout,
                            max_retries=args.max_retries, max_output_tokens=args.max_output_tokens,
                            key_name=args.api_key_env)


def _clean(text: str) -> str:
    return terminal_safe(text)


def text_report(result: CompactionResult, session: Session, *, pipeline: PipelinePreview | None = None,
                recorded: Sequence[dict[str, Any]] = (), show_request: bool = False) -> list[str]:
    """The human-readable report, one line per entry (already safe for a terminal)."""
    r = result
    lines = [f"session:  {session.name or '(unnamed)'} ({session.source_format}, {len(session.messages)} messages)",
             f"trigger:  {'yes' if r.triggered else 'no'}: {r.trigger_reason}"]
    if r.already_compacted or r.previous_summary is not None:
        lines.append(f"earlier:  a previous compaction summary is merged; {r.already_compacted} message(s) "
                     "were already compacted before it")
    if r.cut_index is None:
        lines.append(f"cut:      none: {r.cut_reason}")
    else:
        split = "no"
        if r.split_turn:
            start = result.session.messages[r.turn_start_index] \
                if result.session and r.turn_start_index is not None else None
            split = f"yes (the turn starts at index {r.turn_start_index}" + (
                f", message {start.id!r})" if start else ")")
        lines += [f"cut:      index {r.cut_index}, message {r.cut_message_id!r}; split turn: {split}",
                  f"          {r.cut_reason}",
                  f"messages: {len(r.to_summarize)} summarised" + (
                      f" + {len(r.turn_prefix)} in the turn prefix" if r.split_turn else "")
                  + f"; {len(r.kept)} kept" + (f"; {len(r.pinned)} pinned system" if r.pinned else "")]
        if r.error:
            lines.append(f"error:    {r.error}")
        lines.append(f"summary ({r.summarizer_name}), sections: {', '.join(r.sections) or 'none'}")
        lines += ["  " + line for line in _clean(r.summary).splitlines()]
    pct = 100 * (1 - r.tokens_after / r.tokens_before) if r.tokens_before else 0.0
    change = f"{pct:.1f}% fewer" if pct >= 0 else f"{-pct:.1f}% MORE: the summary outweighs what it replaces"
    lines.append(f"tokens:   {r.tokens_before:,} -> {r.tokens_after:,} ({change}; context as "
                 f"{'reported' if r.context_source == 'usage' else 'estimated'}: {r.context_tokens:,})")
    if r.cut_index is not None:
        lines += [f"cache:    {r.cache_invalidated_tokens:,} tokens of the cached prompt prefix are invalidated; "
                  f"{r.cache_rewrite_tokens:,} tokens must be processed again",
                  f"files:    {len(r.read_files)} read, {len(r.modified_files)} modified (listed in the summary)"]
    if pipeline is not None:
        steps = "; ".join(f"{s['step']} {s['tokens']:,}" + (f" (-{s['saved']:,})" if s["step"] != "original" else "")
                          for s in pipeline.steps())
        lines.append(f"pipeline: {steps}")
    for row in recorded:
        rec, comp = row["recorded"], row["computed"] or {}
        lines.append(f"recorded: compaction at index {row['position_index']} kept from "
                     f"{rec['first_kept_message_id']!r} (index {rec['first_kept_index']}, tokens before "
                     f"{rec['tokens_before']}); this project: {comp.get('first_kept_message_id')!r} "
                     f"(index {comp.get('first_kept_index')}, split turn {comp.get('split_turn')})")
    lines.append(f"counter:  {r.counter}")
    if show_request:
        for label, req in (("request", r.request), ("turn-prefix request", r.prefix_request)):
            if req is not None:
                lines += [f"--- {label}: system prompt ---", *_clean(req.system_prompt).splitlines(),
                          f"--- {label}: user message ---", *_clean(req.user_message).splitlines()]
    return lines


def run(args: argparse.Namespace) -> int:
    session = load_from_args(args)
    settings = CompactionSettings(**setting_values(CompactionSettings, args, COMPACTION_SETTINGS))
    summarizer = _summarizer(args)
    pipeline = None
    if args.prune:
        pipeline = preview_pipeline(session, settings=settings, summarizer=summarizer, force=args.force,
                                    on_error="fallback")
        result = pipeline.compaction
    else:
        result = compact(session, settings, summarizer, force=args.force, on_error="fallback")
    recorded = compare_recorded(session, settings)
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        report = result.to_dict(include_request=args.show_request)
        if pipeline is not None:
            report["pipeline"] = pipeline.steps()
        report["recorded_compactions"] = recorded
        print(dumps_json(report, indent=2), file=out)
    else:
        say(text_report(result, session, pipeline=pipeline, recorded=recorded, show_request=args.show_request),
            file=out)
    if result.error:
        where = display_url(summarizer.base_url) if hasattr(summarizer, "base_url") else summarizer.name
        print(terminal_safe(f"pruner compact: error: the summariser at {where} failed: {result.error}; the "
                            "offline summary is shown instead" + ("; nothing was written to -o" if args.output else ""),
                            one_line=True), file=sys.stderr)
        return 2
    if args.output:
        exported = export(result.compacted, to=args.to)
        write_output(args.output, exported.text, source=args.file)
        for note in exported.notes:
            warn(note)
    return 0
