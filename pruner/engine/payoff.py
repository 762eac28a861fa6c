"""Whether a removal pays for itself: a tool result removed while its call is kept is answered at
export by a placeholder (``pruner.rules.placeholder_text``), so removing a result no longer than
its placeholder makes the context larger ("1 failed, 3 passed", 6 tokens, replaced by an
18-token "[superseded by the result at turn 1 (id c0000011)]").

Such a removal is not made: the message is kept, with the reason ``PLACEHOLDER_LONGER``. The
check reads only the removal, the message and the one it points at (never what else is kept),
so ``prune`` and ``IncrementalPruner`` make it alike, and a later rule of the same pass may still
remove the message with a placeholder that is shorter. With ``orphan_policy="drop_pair"`` a result
whose call's message holds only that call goes with its call, no placeholder sent: it always pays.
Tokens are the pruner's own counts (``PruneConfig.encoding``), the ones ``PruneStats`` reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import Removal, placeholder_text
from ..tokens import get_counter

if TYPE_CHECKING:  # pragma: no cover
    from .index import SessionIndex
    from .prune import PruneConfig

#: The reason a kept message's decision gives when a rule's removal would not have paid.
PLACEHOLDER_LONGER = "placeholder would be longer"


def placeholder_tokens(index: SessionIndex, r: Removal, encoding: str, orphan_policy: str) -> int | None:
    """Tokens of the placeholder that would answer ``r``'s message, or None when none would: it is
    not a tool result, or (``drop_pair``) its call goes with it, the call's message holding nothing
    else (``pruner.engine.result.settle_orphans``)."""
    i = r.index
    owner = index.call_owner[i]
    if owner < 0:
        return None
    msgs = index.messages
    a = msgs[owner]
    if orphan_policy == "drop_pair" and len(a.tool_calls) == 1 and not a.content.strip() and not a.defines:
        return None
    related = msgs[r.related] if r.related is not None else None
    return get_counter(encoding).count(placeholder_text(r.rule, related, msgs[i], r.detail))


def pays(index: SessionIndex, r: Removal, config: PruneConfig) -> bool:
    """True when removing ``r``'s message makes the context smaller: it gets no placeholder, or its
    placeholder is shorter than the message (both in the pruner's tokens, ``config.encoding``)."""
    cost = placeholder_tokens(index, r, config.encoding, config.orphan_policy)
    return cost is None or cost < index.tokens(get_counter(config.encoding))[r.index]
