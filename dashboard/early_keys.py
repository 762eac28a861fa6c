"""← / → on the pages that step (Replay, Guide, Explorer): one listener clicks the page's button.

Streamlit's own button ``shortcut`` is registered only once the browser has mounted that button, which
on a page's first load happens about a second after the rest of the run's output is drawn (the
button's code is fetched lazily), and again whenever a rerun mounts it anew: the Replay page's heading
"Request 0 of n" was visible before its buttons, a key pressed then went nowhere, and in CI a Guide
step was lost the same way. So the pages give their buttons no ``shortcut``, and this listener, drawn
by the app before any page (its code is fetched on the first load, whichever page that is), handles
every press: it clicks the button if it is mounted and enabled, drops the press if the button is
mounted but disabled (the first or last step, as a shortcut would), and otherwise keeps the latest
press and clicks the button as soon as it is mounted. One handler, so a press is applied once.

It is installed when the browser has fetched the ``st.html`` element's code, which it does with the
page's first elements; a press before that (a few hundred milliseconds after the first paint, on a
cold browser) is not seen. ``window.__prunerEarlyKeys`` is true once it listens.
"""

from __future__ import annotations

import json

import streamlit as st

_SCRIPT = """<script>
(() => {
  const pages = %(pages)s, flag = "__prunerEarlyKeys";
  if (window[flag]) return;  // one listener per window, whatever the reruns and page changes
  window[flag] = true;
  let pending = null, observer = null;
  const button = key => document.querySelector(`.st-key-${key} button`);
  const here = () => {
    const path = window.location.pathname.replace(/\\/+$/, "");
    return Object.keys(pages).find(name => path.endsWith("/" + name));
  };
  // a checkbox or toggle (the Guide's "Present") keeps focus after a click: arrows still step there
  const typing = el => el && (el.isContentEditable || ["TEXTAREA", "SELECT"].includes(el.tagName)
    || (el.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(el.type)));
  const flush = () => {
    if (pending === null || here() !== pending.page) return;
    const b = button(pending.key);
    if (!b) return;
    pending = null; observer.disconnect(); observer = null;
    if (!b.disabled) b.click();
  };
  window.addEventListener("keydown", event => {
    const page = here(), key = page && pages[page][event.key];
    if (!key || typing(event.target) || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();  // the page steps; the pane does not scroll sideways
    const b = button(key);
    if (b) { pending = null; if (!b.disabled) b.click(); return; }
    pending = {page, key};
    if (!observer) {
      observer = new MutationObserver(flush);
      observer.observe(document.body, {childList: true, subtree: true, attributes: true});
    }
  }, true);
})();
</script>"""


#: URL path of a page → ``event.key`` → the widget key of the button that key presses (drawn without a
#: Streamlit ``shortcut``: this listener is the one handler).
STEPPERS = {
    "explorer": {"ArrowLeft": "inspect_prev", "ArrowRight": "inspect_next"},
    "guide": {"ArrowLeft": "guide_prev", "ArrowRight": "guide_next"},
    "replay": {"ArrowLeft": "replay_prev", "ArrowRight": "replay_next"},
}


def keep_early_presses(pages: dict[str, dict[str, str]] = STEPPERS) -> None:
    """On each page of ``pages`` (URL path → ``event.key`` → the button's widget key): a press of one
    of its keys made before that button is mounted clicks it once it is. Drawn once, by the app."""
    st.html(_SCRIPT % {"pages": json.dumps(pages, sort_keys=True)}, unsafe_allow_javascript=True,
            width="content")
