"""A long session's first view: the page's first charts, then the sections below them once the browser drew them.

The browser draws everything a script run sent in one burst on one main thread; sections below the
first charts (tables of thousands of rows, more charts) delay them. So the first run that shows a long
session draws, in their place, a line saying they follow and a button that draws them; a script
clicks that button as soon as the charts in the container ``box`` are drawn (after ``give_up_ms`` it
clicks anyway, so a chart that never draws does not keep the rest away; without a browser, as in
AppTest, anyone can click it), and every later run of that session draws them at once. Inside an
``st.fragment`` the click reruns only the fragment, not the charts above it.
"""

from __future__ import annotations

import json

import streamlit as st

#: Clicks the button once every mark of ``marks`` (a CSS selector each) is drawn in some plotly chart in
#: the container, after the next frame is painted; it stops when the button is gone (another run drew the rest).
_SCRIPT = """<script>
(() => {
  const box = %(box)s, buttonKey = %(button)s, marks = %(marks)s, started = performance.now();
  const button = () => document.querySelector(`.st-key-${buttonKey} button`);
  const drawn = () => {
    const plots = [...document.querySelectorAll(`.st-key-${box} .js-plotly-plot`)].filter(el => el._fullData);
    return marks.every(mark => plots.some(el => el.querySelector(mark)));
  };
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


def draw_now(state_key: str, session_key, long: bool) -> bool:
    """Whether this run draws the deferred sections: always for a short session, and for a long one from
    the second run that shows it on (the first draws ``later`` in their place). ``state_key`` names the
    page's own flag in the visitor's session state."""
    if not long or st.session_state.get(state_key) == session_key:
        return True
    st.session_state[state_key] = session_key  # whatever the next run is (the click, a key), it draws them
    return False


def later(box: str, button_key: str, what: str, *, caption: str, marks: tuple[str, ...],
          give_up_ms: int = 15_000) -> None:
    """In place of the sections: ``caption``, and the button (labelled with ``what``) the page's script
    clicks once ``marks`` are drawn in the container keyed ``box``."""
    st.caption(caption)
    st.button(f"Draw {what} now", key=button_key)
    st.html(_SCRIPT % {"box": json.dumps(box), "button": json.dumps(button_key), "marks": json.dumps(list(marks)),
                       "give_up_ms": give_up_ms}, unsafe_allow_javascript=True, width="content")
