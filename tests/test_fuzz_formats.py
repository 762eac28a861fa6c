"""The fuzz suite: hostile files in every format give a one-line PrunerError or a session that
round-trips (tests/support/fuzz.py says what is drawn and what is checked).

Under ``CI`` each property runs ``FUZZ_EXAMPLES_CI`` examples (9 properties, 12,150 examples
per run; ``--hypothesis-show-statistics`` prints the count per property); otherwise 60, so a
developer's run stays quick. ``event()`` records how each example ended (refused, read, or
read with repairs), which the statistics show too.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from pruner.formats import FORMATS
from tests.support.fuzz import FILES, check, file_text

FUZZ_EXAMPLES_CI = 1350
FUZZ = settings(max_examples=FUZZ_EXAMPLES_CI if os.environ.get("CI") else 60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def test_every_registered_format_is_fuzzed():
    assert sorted(FILES) == sorted(FORMATS)


@pytest.mark.parametrize("fmt", sorted(FILES))
@FUZZ
@given(data=st.data())
def test_a_hostile_file_is_refused_in_one_line_or_round_trips(fmt, data):
    text = data.draw(file_text(fmt), label="file")
    event(check(text, fmt, file=f"fuzz.{fmt}"))


@FUZZ
@given(st.sampled_from(sorted(FILES)).flatmap(file_text))
def test_a_hostile_file_with_its_format_detected_is_refused_or_round_trips(text):
    event(check(text, None, file="fuzz.detected"))
