"""Arrow keys pressed before a page's shortcut buttons are mounted: kept, and applied once they are.

Streamlit registers a button's ``shortcut`` only when the browser has mounted that button, which on a
page's first load happens about a second after the rest of the run's output is drawn (the button's
code is fetched lazily). The Replay page's heading "Request 0 of n" is visible before its ← / → buttons
exist, so a key pressed then went nowhere. This listener, drawn at the top of the page before the long
replay runs, keeps the latest such press and clicks the button as soon as it is mounted and enabled.
While the button is mounted it does nothing: Streamlit's own shortcut handles the key, once.
"""

from __future__ import annotations

import json

import streamlit as st

_SCRIPT = """<script>
(() => {
  const keys = %(keys)s, path = %(path)s, flag = "__prunerEarlyKeys_" + path;
  if (window[flag]) return;  // one listener per page, whatever the reruns
  window[flag] = true;
  let pending = null, observer = null;
  const button = key => document.querySelector(`.st-key-${key} button`);
  const onPage = () => window.location.pathname.replace(/\\/+$/, "").endsWith("/" + path);
  const typing = el => el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
  const flush = () => {
    if (pending === null || !onPage()) return;
    const b = button(pending);
    if (b && !b.disabled) { pending = null; observer.disconnect(); observer = null; b.click(); }
  };
  window.addEventListener("keydown", event => {
    const key = keys[event.key];
    if (!key || !onPage() || typing(event.target) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (button(key)) return;  // mounted: Streamlit's shortcut takes this press
    pending = key;
    if (!observer) {
      observer = new MutationObserver(flush);
      observer.observe(document.body, {childList: true, subtree: true, attributes: true});
    }
  }, true);
})();
</script>"""


def keep_early_presses(path: str, keys: dict[str, str]) -> None:
    """On the page at URL ``path``: a press of a key in ``keys`` (``event.key`` → the button's widget
    key) made before that button is mounted clicks it once it is."""
    st.html(_SCRIPT % {"keys": json.dumps(keys, sort_keys=True), "path": json.dumps(path)},
            unsafe_allow_javascript=True, width="content")
