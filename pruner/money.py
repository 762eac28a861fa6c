"""Dollars as every view prints them: one spelling for the CLI, the reports and the dashboard.

Cents for a dollar or more (and for zero), four places below a dollar, where cents would round a
strategy's difference away; thousands separated; the sign before the dollar sign.

>>> [money(x) for x in (42.5959, 1234.5, 0.00421, 0.42, 0, -3.5)]
['$42.60', '$1,234.50', '$0.0042', '$0.4200', '$0.00', '-$3.50']
"""

from __future__ import annotations

__all__ = ["money"]


def money(dollars: float) -> str:
    """``dollars`` as text: ``$1,234.50``, ``$0.0042``, ``$0.00``, ``-$3.50``."""
    sign, size = ("-" if dollars < 0 else ""), abs(dollars)
    return f"{sign}${size:,.2f}" if size >= 1 or size == 0 else f"{sign}${size:,.4f}"
