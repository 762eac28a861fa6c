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

from ..model import Message
from ..rules import Removal, declaration, placeholder_text
from ..tokens import get_counter

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.index import SessionIndex
    from ..analysis.config import PruneConfig

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
    i = r.index
    owner = index.call_owner[i]
    if owner < 0:
        return True  # not a result: nothing takes its place
    msgs = index.messages
    a = msgs[owner]
    if config.orphan_policy == "drop_pair" and len(a.tool_calls) == 1 and not a.content.strip() and not a.defines:
        return True
    counter = get_counter(config.encoding)
    size = index.tokens(counter)[i]
    related = msgs[r.related] if r.related is not None else None
    # A token of an exact counter covers at least one UTF-8 byte: a message with more tokens than the
    # placeholder can have bytes pays without the text being made (most removed results are far longer).
    bound = _bytes_bound(r.rule, related) if getattr(counter, "is_exact", False) else None
    if bound is not None and size > bound:
        return True
    return counter.count(placeholder_text(r.rule, related, msgs[i], r.detail)) < size


#: What a template's fields can add, in bytes, besides the related message's id: " at turn T (id )" with
#: a turn of up to 20 digits, a share ("100 %") or an expiry turn.
_FIELD_BYTES = 64


def _bytes_bound(rule_name: str, related: Message | None) -> int | None:
    """At most how many UTF-8 bytes the placeholder of ``rule_name`` pointing at ``related`` has, or None
    when its template could hold anything (a function, or a field of the message other than its expiry)."""
    p = declaration(rule_name).placeholder
    if callable(p):
        return None
    own = _TEMPLATE_BYTES.get(p)
    if own is None:
        own = _TEMPLATE_BYTES[p] = (-1 if "{message" in p.replace("{message.expires_after_turn}", "")
                                    else len(p.encode("utf-8")) + _FIELD_BYTES)
    if own < 0:
        return None
    return own + (len(related.id.encode("utf-8")) if related is not None else 0)


_TEMPLATE_BYTES: dict[str, int] = {}  # template -> its bytes plus _FIELD_BYTES (-1: no bound)
