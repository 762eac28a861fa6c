"""``clear_tool_uses``: Anthropic's server-side context editing, ``clear_tool_uses_20250919``.

What an Anthropic user would pick instead of pruning. From the documentation
(https://platform.claude.com/docs/en/build-with-claude/context-editing,
retrieved 2026-11-30): "The ``clear_tool_uses_20250919`` strategy clears tool
results when conversation context grows beyond your configured threshold. When
activated, the API automatically clears the oldest tool results in
chronological order, replacing them with placeholder text". Defaults: ``trigger``
"100,000 input tokens"; ``keep`` "3 tool uses" ("how many recent tool use/result
pairs to keep after clearing occurs"); ``clear_at_least`` "None" ("If the API
can't clear at least the specified amount, the strategy will not be applied");
``exclude_tools`` "None" ("tool names whose tool uses and results should never
be cleared"). "Context editing is applied server-side before the prompt reaches
Claude. Your client application maintains the full, unmodified conversation
history", and on caching: "Tool result clearing: Invalidates cached prompt
prefixes when content is cleared ... You'll incur cache write costs each time
content is cleared".

Our reading, where the page is silent: the strategy activates when the input as
sent (after the clearings so far) exceeds the trigger, and then clears every tool
result but the newest ``keep`` tool uses. Between activations the edited prefix
stays the same, which is what "subsequent requests can reuse the newly cached
prefix" requires, and what makes ``clear_at_least`` ("each time the strategy
activates") a way to make each activation worth its cache write. (Were every
request edited on its own, the cleared part would move at every request and no
request would ever read more than the system prompt from the cache.) The
placeholder text is not documented; we send ``settings.clear_placeholder``
("[tool result cleared by context editing]").

Two more documented options (the SDKs' ``BetaClearToolUses20250919Edit``:
``trigger`` is ``BetaInputTokensTrigger`` or ``BetaToolUsesTrigger``;
``clear_tool_inputs``: "Whether to clear all tool inputs (bool) or specific tool
inputs to clear (list)"; the page: "By default, only tool results are cleared.
You can optionally clear both tool results and tool calls (the tool use
parameters) by setting clear_tool_inputs to true"; retrieved 2026-12-01):

* ``clear_trigger_type="tool_uses"``: the strategy activates when the context
  holds more than ``clear_trigger`` tool uses (instead of input tokens);
* ``clear_tool_inputs``: True clears the input of every call whose result is
  cleared (its arguments are sent empty), a tuple of tool names only theirs.

It is a feature of Anthropic's API only: on an OpenAI or Google session the
replay marks it not applicable and never ranks it.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import replace
from typing import Sequence

from ...model import Message
from ..requests import Request, scale_of
from ..strategy import Event, ReplayEnv, Step, Strategy, register_strategy


@register_strategy("clear_tool_uses", order=70,
                   summary="Anthropic's server-side clear_tool_uses_20250919: whenever the input exceeds the trigger "
                   "(100k), tool results older than the newest 3 tool uses are replaced by a placeholder")
class ClearToolUses(Strategy):
    providers = ("anthropic",)  # a feature of Anthropic's API: not applicable to OpenAI or Google sessions
    feature = "context editing"  # what the views call it where it does not apply

    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        s = env.settings
        self.trigger = s.clear_trigger
        self.keep = s.clear_keep
        self.at_least = s.clear_at_least
        self.excluded = frozenset(s.clear_exclude_tools)
        self.placeholder = s.clear_placeholder
        self.results: list[int] = []  # positions in the session of every tool result so far
        self.cleared = 0  # the oldest clearable results already cleared (a prefix of self.clearable)
        self.clearable: list[int] = []  # session positions of results a clearing may touch, in order
        self.trigger_type = s.clear_trigger_type
        self.clear_inputs = s.clear_tool_inputs
        self.tool_uses = 0  # tool uses in the context
        self.cleared_positions: list[int] = []  # session positions of the cleared results, in order

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        env, wire = self.env, self.wire
        session = env.session.messages
        start = request.position - len(new)
        for k, m in enumerate(new):
            self.tool_uses += len(m.tool_calls)
            if m.tool_call_id is not None:
                self.results.append(start + k)
                if (m.tool_name or "") not in self.excluded:
                    self.clearable.append(start + k)
        before = wire.tokens + env.book.total(new)
        wire.extend(new)
        over = self.tool_uses > self.trigger if self.trigger_type == "tool_uses" else \
            scale_of(request).provider(wire.tokens) > self.trigger
        if not over:
            return Step()
        # Clear every clearable result older than the newest `keep` tool uses.
        newest_kept = self.results[-self.keep] if self.keep and len(self.results) >= self.keep else request.position
        target = self.cleared
        while target < len(self.clearable) and self.clearable[target] < newest_kept:
            target += 1
        if target == self.cleared:
            return Step()
        fresh = self.clearable[self.cleared:target]
        gain = env.book.total(session[i] for i in fresh) - len(fresh) * env.book.text(self.placeholder)
        if scale_of(request).part(gain) < self.at_least:
            return Step()
        for i in fresh:  # the cleared ones precede it, so its place in the wire is shifted by their count
            position = i - self.cleared
            m = session[i]
            wire.delete(position, position + 1)
            assert m.tool_call_id is not None  # fresh holds tool results only, each answering a call
            wire.set_substitute(m.tool_call_id, self.placeholder, position)
            self.cleared += 1
            insort(self.cleared_positions, i)
        inputs = self._clear_inputs([session[i] for i in fresh]) if self.clear_inputs else 0
        what = f"cleared {len(fresh)} tool result(s)" + (f" and {inputs} call input(s)" if inputs else "")
        return Step(events=(Event("clear", before, wire.tokens, wire.changed_at,
                                  f"{what}; {self.cleared} cleared so far"),))

    def _clear_inputs(self, results: Sequence[Message]) -> int:
        """Send the calls of ``results`` with empty inputs (``clear_tool_inputs``); how many were emptied."""
        env, wire = self.env, self.wire
        wanted = self.clear_inputs
        by_owner: dict[int, set[str]] = {}
        for r in results:
            call_id = r.tool_call_id
            if call_id is None:  # a tool result answers a call; one that does not has no call to empty
                continue
            if wanted is True or (wanted is not False and (r.tool_name or "") in wanted):
                owner = env.call_owner.get(call_id)
                if owner is not None:
                    by_owner.setdefault(owner, set()).add(call_id)
        if not by_owner:
            return 0
        messages = list(wire.messages)
        count = 0
        for owner, ids in sorted(by_owner.items()):
            index = owner - bisect_left(self.cleared_positions, owner)  # cleared results before it are gone
            m = messages[index]
            calls = tuple(replace(c, arguments={}) if c.id in ids and c.arguments else c for c in m.tool_calls)
            count += sum(1 for a, b in zip(m.tool_calls, calls) if a is not b)
            if calls != m.tool_calls:
                messages[index] = replace(m, tool_calls=calls)
        if count:
            wire.replace(messages)
        return count
