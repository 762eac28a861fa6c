"""Argument types: each one turns a command-line string into a value or raises
``argparse.ArgumentTypeError``, which argparse reports as one line with exit status 2.

>>> fraction("0.8")
0.8
>>> fraction("5")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: '5' is not a number in (0, 1]
"""

from __future__ import annotations

import argparse
import math

#: Python refuses to convert integer strings longer than this (sys.int_info); no
#: setting here needs more than a handful of digits.
_MAX_DIGITS = 30


def _int(text: str) -> int:
    digits = text.strip().lstrip("+-").replace("_", "")
    if len(digits) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"{text[:20]!r}… is not a sensible whole number")
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _float(text: str) -> float:
    try:
        value = float(text) if len(text) <= 64 else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; expected 0 or more")
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def byte_count(text: str) -> int:
    """A size limit in bytes: positive and at most 2**53 (far above any file read here)."""
    value = positive_int(text)
    if value > 2**53:
        raise argparse.ArgumentTypeError(f"{text!r} is larger than any file this tool reads (max 2**53)")
    return value


def fraction(text: str) -> float:
    """A share in (0, 1]."""
    try:
        value = _float(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, 1]") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, 1]")
    return value


def positive_seconds(text: str) -> float:
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def base_url(text: str) -> str:
    """An endpoint's base URL: an absolute http:// or https:// address with a host."""
    from ..compaction.openai_summarizer import check_base_url
    from ..errors import ConfigurationError

    try:
        return check_base_url(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dask_address(text: str) -> str:
    """A Dask scheduler address: ``tcp://HOST:PORT`` (or another protocol), or ``HOST:PORT``."""
    rest = text.split("://", 1)[1] if "://" in text else text
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a scheduler address like tcp://HOST:PORT")
    return text


def positive_int_list(text: str) -> tuple[int, ...]:
    """Comma-separated positive whole numbers, e.g. ``1,2``."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r} holds no number; expected e.g. 1,2")
    return tuple(positive_int(x) for x in items)


def strategy_list(text: str) -> list[str]:
    """Comma-separated replay strategy names, each registered (``pruner.replay``)."""
    from ..replay import strategy_names

    names = [n.strip() for n in text.split(",") if n.strip()]
    known = strategy_names()
    if not names:
        raise argparse.ArgumentTypeError(f"no strategy named; choose from {', '.join(known)}")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown strateg{'y' if len(unknown) == 1 else 'ies'} "
                                         f"{', '.join(repr(n[:40]) for n in unknown)}; choose from {', '.join(known)}")
    return names
