"""Every supported format, in one table: its sample is detected from content (never
from the file name), loads into a valid session, and survives the native round trip.
Format-specific behaviour lives in ``test_formats_<name>.py``."""

from __future__ import annotations

import shutil

import pytest

from pruner import FORMATS, dumps, load_session, validate_session
from pruner.formats import loads

# format -> its sample in sample_sessions/, copied under a misleading name
SAMPLES = {
    "native": "native_demo.jsonl",
    "openai_chat": "openai_chat.json",
    "openai_responses": "openai_responses.json",
    "anthropic": "anthropic_messages.json",
    "claude_code": "claude_code.jsonl",
    "pi": "pi_session.jsonl",
    "codex": "codex_rollout.jsonl",
    "swe_agent": "swe_agent.traj",
    "gemini_cli": "gemini_cli.json",
    "opencode": "opencode_export.json",
    "goose": "goose_export.json",
    "qwen_code": "qwen_code.jsonl",
    "copilot_cli": "copilot_cli.jsonl",
    "amp": "amp_thread.json",
}


def test_every_registered_format_has_a_sample():
    assert sorted(SAMPLES) == sorted(FORMATS)


@pytest.mark.parametrize("format_name", sorted(SAMPLES))
def test_sample_is_detected_from_content_not_its_name(format_name, samples, tmp_path):
    renamed = tmp_path / "transcript.txt"
    shutil.copy(samples / SAMPLES[format_name], renamed)
    session = load_session(renamed)
    assert session.source_format == format_name
    validate_session(session)
    assert len(session.messages) > 0


@pytest.mark.parametrize("format_name", sorted(SAMPLES))
def test_sample_survives_the_native_round_trip(format_name, samples):
    session = load_session(samples / SAMPLES[format_name])
    again = loads(dumps(session, to="native"), format="native")
    assert again.messages == session.messages
