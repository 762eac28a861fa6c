"""A long session's first view: the timeline first, the sections below it once the browser has drawn it.

Profiled on the 2,000-turn link (11,964 messages; docs/reference/dashboard.md, "Long sessions"): the
server's warm run takes 0.4-0.7 s, but the browser then spends 2 s and more on one main thread,
loading and running plotly.js and the data grid's code and drawing everything the run sent. The
timeline waited for the two context charts (drawn by plotly in the same burst) and for the message
table's grid; drawn without them it appears sooner (in a new tab 2.97-4.17 s instead of 3.72-4.86 s,
at load 4). So the first run that shows a long session draws, in their place, a line saying they
follow and a button that draws them; a script clicks that button as soon as the timeline is on
screen (without a browser, as in AppTest, anyone can click it), and every later run draws them at
once. Short sessions draw everything at once.
"""

from __future__ import annotations

import json

import streamlit as st

#: Sessions with more messages than this draw the sections below the timeline one run later.
DEFER_ABOVE_MESSAGES = 2_000
BUTTON_KEY = "draw_below_timeline"
_DRAWN_FOR = "below_timeline_drawn_for"
#: Clicks the button once the timeline's legend is drawn (plotly draws the legend last), after the
#: next frame is painted; after ``give_up_ms`` it clicks anyway (a timeline that never draws must not
#: keep the rest of the page away). It stops when the button is gone (another rerun drew the rest).
_SCRIPT = """<script>
(() => {
  const timelineKey = %(timeline)s, buttonKey = %(button)s, started = performance.now();
  const button = () => document.querySelector(`.st-key-${buttonKey} button`);
  const drawn = () => [...document.querySelectorAll(`.st-key-${timelineKey} .js-plotly-plot`)]
    .some(el => el._fullData && el.querySelector('.legendtext'));
  let seen = false;
  const tick = () => {
    const b = button();
    if (b) seen = true;
    else if (seen) return;  // drawn by another run
    if (b && (drawn() || performance.now() - started > %(give_up_ms)d)) {
      requestAnimationFrame(() => setTimeout(() => { if (!b.disabled) b.click(); }, 0));
      return;
    }
    setTimeout(tick, 50);
  };
  tick();
})();
</script>"""


def draw_now(session_key: str, messages: int) -> bool:
    """Whether this run draws the sections below the timeline: always for a short session, and for a long
    one from the second run that shows it on (the first draws ``later`` in their place)."""
    if messages <= DEFER_ABOVE_MESSAGES or st.session_state.get(_DRAWN_FOR) == session_key:
        return True
    st.session_state[_DRAWN_FOR] = session_key  # whatever the next run is (the click, a key), it draws them
    return False


def later(timeline_key: str, what: str, *, give_up_ms: int = 15_000) -> None:
    """In place of the sections: says they follow, and the button the page's script clicks once the
    timeline ``timeline_key`` (its widget key) is drawn."""
    st.caption(f"Long session: {what} are drawn as soon as the timeline is on screen.")
    st.button(f"Draw {what} now", key=BUTTON_KEY)
    st.html(_SCRIPT % {"timeline": json.dumps(timeline_key), "button": json.dumps(BUTTON_KEY),
                       "give_up_ms": give_up_ms}, unsafe_allow_javascript=True, width="content")
