"""A long session's first view: the timeline first, the sections below it once the browser has drawn it.

Profiled on the 2,000-turn link (11,964 messages; docs/reference/dashboard.md, "Long sessions"): the
server's warm run takes 0.4-0.7 s, but the browser then spends 2 s and more on one main thread,
loading and running plotly.js and the data grid's code and drawing everything the run sent. The
timeline waited for the two context charts (drawn by plotly in the same burst) and for the message
table's grid; drawn without them it appears sooner (in a new tab 2.97-4.17 s instead of 3.72-4.86 s,
at load 4). So the first run that shows a long session draws, in their place, a line saying they
follow and a button that draws them; a script clicks that button as soon as the timeline is on
screen (without a browser, as in AppTest, anyone can click it), and every later run draws them at
once. Short sessions draw everything at once. The mechanism is ``dashboard/deferred.py``'s, which the
Replay page uses too.
"""

from __future__ import annotations

from dashboard import deferred

#: Sessions with more messages than this draw the sections below the timeline one run later.
DEFER_ABOVE_MESSAGES = 2_000
BUTTON_KEY = "draw_below_timeline"
_DRAWN_FOR = "below_timeline_drawn_for"


def draw_now(session_key: str, messages: int) -> bool:
    """Whether this run draws the sections below the timeline: always for a short session, and for a long
    one from the second run that shows it on (the first draws ``later`` in their place)."""
    return deferred.draw_now(_DRAWN_FOR, session_key, messages > DEFER_ABOVE_MESSAGES)


def later(timeline_key: str, what: str, *, give_up_ms: int = 15_000) -> None:
    """In place of the sections: says they follow, and the button the page's script clicks once the
    timeline ``timeline_key`` (its widget key) is drawn (plotly draws the legend last)."""
    deferred.later(timeline_key, BUTTON_KEY, what, caption=f"Long session: {what} are drawn as soon as the timeline "
                   "is on screen.", marks=(".legendtext",), give_up_ms=give_up_ms)
