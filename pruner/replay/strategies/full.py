"""``full``: no management; every request sends the whole conversation so far."""

from __future__ import annotations

from typing import Sequence

from ...model import Message
from ..requests import Request
from ..strategy import Step, Strategy, register_strategy


@register_strategy("full", order=10, summary="no management: every request sends the whole conversation so far "
                   "(the session's own prefix)")
class Full(Strategy):
    def step(self, request: Request, new: Sequence[Message]) -> Step:
        self.wire.extend(new)
        return Step()
