"""What one visitor has open: the loaded session, the pruning settings and the last load error.

The settings are the library's own ``PruneConfig`` (the form changes some of
its fields with ``dataclasses.replace``), so the dashboard never restates a
default the library owns. On a visitor's first run, whatever page it is, the
URL (``links``) says what to open; afterwards every page writes what is open
back into the URL, so a reload or a copied link reopens the same view.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, MutableMapping

import streamlit as st

from pruner import PruneConfig
from pruner.errors import FormatError, InvalidSessionError

from . import links, ui
from .logic import corpus as corpus_logic
from .loading import DEFAULT_SAMPLE, LoadedFile, LoadedSession, list_samples, load_sample

LOADED = "pruner_loaded"  # the session_state key holding the LoadedSession
FILE = "pruner_dialogue_file"  # the LoadedFile whose dialogues the picker lists (several dialogues only)
ERROR = "load_error"  # the last load's ui.Problem, or None
_SETTINGS = "pruner_settings"
_LINK_READ = "pruner_link_read"
_SOURCE_SEEN = "pruner_link_source"  # the URL's source parameters when the app last read or wrote them
_LINK_PROBLEM = "pruner_link_problem"  # the ui.Problem of a link whose session could not be opened
ss = st.session_state


def current() -> LoadedSession | None:
    return ss.get(LOADED)


def set_current(loaded: LoadedSession) -> None:
    ss[LOADED] = loaded
    ss[_LINK_PROBLEM] = None  # something is open now: the failed link no longer describes the page


def link_problem() -> ui.Problem | None:
    """Why the session the URL names could not be opened (then no other session is shown in its place)."""
    return ss.get(_LINK_PROBLEM)


def dialogue_file() -> LoadedFile | None:
    return ss.get(FILE)


def settings() -> PruneConfig:
    return ss.get(_SETTINGS) or PruneConfig()


def set_settings(value: PruneConfig) -> None:
    ss[_SETTINGS] = value


def load_error() -> ui.Problem | None:
    return ss.get(ERROR)


def open_file(file: LoadedFile, dialogue: int | None, *, check: Callable[[LoadedSession], object]) -> None:
    """Show ``file``: its only dialogue, dialogue ``dialogue``, or (several, none chosen) the picker.

    ``check`` is called on the session before it replaces the current one (the
    explorer prunes it, so a session the pruner rejects never replaces a good one).
    """
    several = len(file.sessions) > 1
    if several and dialogue is None:
        ss[FILE], ss[ERROR] = file, None
        return
    loaded = file.dialogue(dialogue)
    check(loaded)
    set_current(loaded)
    ss[FILE] = file if several else None
    ss[ERROR] = None


def attempt(action: Callable[[], None]) -> bool:
    """Run a load; on any error keep what is open and remember the problem to show."""
    try:
        action()
    except Exception as exc:
        ss[ERROR] = ui.describe_load_error(exc)
        return False
    return True


def _source_in(params: Mapping[str, str]) -> dict[str, str]:
    return {k: params[k] for k in links.SOURCE_KEYS if k in params}


def read_link(check: Callable[[LoadedSession], object]) -> None:
    """Apply the settings and open the source the URL names: on a visit's first run, and whenever the URL
    names another source than the app last read or wrote there (a link followed inside the app, such as a
    sample on the Start page), unless that is what is open."""
    params = st.query_params.to_dict()
    source = _source_in(params)
    if ss.get(_LINK_READ):
        loaded = current()
        if (not links.names_a_source(params) or source == ss.get(_SOURCE_SEEN)
                or (loaded is not None and source == links.source_params(loaded))):
            return
    ss[_LINK_READ], ss[_SOURCE_SEEN] = True, source
    if any(k in params for k in links.SETTING_KEYS):
        attempt(lambda: set_settings(links.settings_from(params)))
    if not links.names_a_source(params):
        return

    def open_linked() -> None:
        opened = links.open_source(params)
        if opened.loaded is None:
            ss[FILE], ss[ERROR] = opened.file, None
            return
        check(opened.loaded)
        set_current(opened.loaded)
        ss[FILE], ss[ERROR] = opened.file, None
    if not attempt(open_linked):
        # The link named a session this server cannot open (an upload from another run, say): say so,
        # and show no other session in its place (a reload must never silently swap sessions).
        ss[_LINK_PROBLEM] = ss[ERROR]


def link_was_read() -> bool:
    return bool(ss.get(_LINK_READ))


def ensure_session(check: Callable[[LoadedSession], object] = lambda loaded: None) -> LoadedSession | None:
    """The current session: what the URL names (see ``read_link``), else what is open, else the demo."""
    read_link(check)
    loaded = current()
    if loaded is not None or dialogue_file() is not None or link_problem() is not None:
        return loaded
    names = list_samples()
    ordered = ([DEFAULT_SAMPLE] if DEFAULT_SAMPLE in names else []) + [n for n in names if n != DEFAULT_SAMPLE]
    for name in ordered:
        try:
            loaded = load_sample(name)
        except (FormatError, InvalidSessionError, OSError):
            continue
        set_current(loaded)
        return loaded
    return None


#: The explorer's settings-form widgets: cleared when another page sets the settings, so the form shows them.
SETTINGS_WIDGETS = ("set_expire", "set_deduplicate", "set_restore", "set_threshold", "set_encoding")
EXPLORER_PAGE = "app_pages/explorer.py"


def show_in_explorer(loaded: LoadedSession, config: PruneConfig | None = None) -> None:
    """Open ``loaded`` (with ``config``, if given) on the Session explorer page: for other pages' links."""
    if config is not None:
        set_settings(config)
        for key in SETTINGS_WIDGETS:
            ss.pop(key, None)
    set_current(loaded)
    ss[FILE], ss[ERROR] = None, None
    st.switch_page(EXPLORER_PAGE)


def show_no_session(what_to_do: str) -> None:
    """What a page shows without a session: why the link's session is missing, or ``what_to_do``."""
    problem = link_problem()
    if problem is not None:
        st.error(problem.text(still_loaded=False), icon=":material/link_off:")
        st.page_link("app_pages/start.py", label="Open a transcript or a sample on the Start page",
                     icon=":material/arrow_back:")
    else:
        st.info(what_to_do)


def restore_widget(key: str, default=None) -> None:
    """Before drawing widget ``key``: give it the value it had (Streamlit forgets a widget's value on another
    page). Draw it with ``on_change=lambda: remember_widget(key)``."""
    kept = f"{key}__kept"
    if kept in ss:
        ss[key] = ss[kept]
    elif default is not None and key not in ss:
        ss[key] = default


def remember_widget(key: str) -> None:
    ss[f"{key}__kept"] = ss.get(key)


_LAST_LINKED = "pruner_last_linked_page"


def _written_key(name: str) -> str:
    return f"pruner_link_written_{name}"


def linked_view(name: str, page_keys: tuple[str, ...]) -> dict[str, str] | None:
    """The page's own URL parameters when they came from outside this visit's last run of the page
    (a reload, a shared link, another page's link), to apply once; ``None`` when they are what the page
    itself last wrote. ``name`` is the page's, as given to ``write_link``."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k in page_keys}
    last, ss[_LAST_LINKED] = ss.get(_LAST_LINKED), name
    if last == name:
        # a rerun of the same page: the URL holds what this page wrote, or is about to (a key pressed while
        # the previous run was still writing must not bring back the link's old request)
        return None
    if ss.get(_written_key(name)) == params:
        return None
    ss[_written_key(name)] = params
    return params


def write_link(page: Mapping[str, str | None] | None = None, page_keys: tuple[str, ...] = (), *,
               name: str | None = None) -> None:
    """Put what is open (and the page's own view parameters) into the URL, if it changed.

    ``name``: the page's, so ``linked_view`` knows these parameters are its own doing."""
    if name is not None:
        ss[_written_key(name)] = {k: v for k, v in (page or {}).items() if v is not None and k in page_keys}
    file = dialogue_file()
    loaded = current()
    if loaded is None and file is None and link_problem() is not None:
        return  # the URL keeps naming what could not be opened, so the notice and the URL agree
    if file is not None and (loaded is None or loaded.digest != file.digest):
        # a many-dialogue file waiting for its dialogue: the link reopens the picker
        source = {"sample": file.name} if file.origin == "sample" else {"upload": file.digest}
        if not file.detected:
            source["format"] = file.format
        wanted = links.merged(st.query_params.to_dict(), loaded=None, config=settings(), page=page,
                              page_keys=page_keys) | source
    else:
        wanted = links.merged(st.query_params.to_dict(), loaded=loaded, config=settings(), page=page,
                              page_keys=page_keys)
    ss[_SOURCE_SEEN] = _source_in(wanted)
    if wanted != st.query_params.to_dict():
        st.query_params.from_dict(wanted)


#: The explorer's settings widgets: dropped when a session is opened from the Corpus page, so its form
#: shows the batch's settings instead of the ones typed before.
EXPLORER_SETTING_WIDGETS = ("set_expire", "set_deduplicate", "set_restore", "set_threshold", "set_encoding")


def open_in_explorer(corpus: corpus_logic.Corpus, session_id: str, state: MutableMapping[Any, Any]) -> LoadedSession:
    """Make ``session_id`` the explorer's session, pruned with the batch's settings (``state``: session state)."""
    loaded = replace(corpus_logic.open_session(corpus, session_id),  # a reload or a link reopens it from the batch
                     link=(("batch", str(corpus.folder)), ("batch_session", session_id)))
    set_settings(corpus_logic.batch_config(corpus))
    for key in EXPLORER_SETTING_WIDGETS:
        state.pop(key, None)
    set_current(loaded)
    return loaded
