"""The dashboard page contract: one page is one file ``app_pages/<name>.py`` (with its logic in
``logic/<name>.py``) and one ``Page`` line in ``PAGES`` (``dashboard/app.py``), registered by name.

A page file is a Streamlit script, run top to bottom on every interaction, so its contract is where
it is found and how it is listed: ``name`` (the file, and the ``?page`` URL path), ``title`` (the
navigation label) and ``icon`` (a Material icon name). A second page under a taken name is refused,
naming both entries, instead of one of them silently disappearing from the navigation.

>>> [p.name for p in registered_pages([("start", "Start", "home"), ("guide", "Guide", "school")])]
['start', 'guide']
>>> try:
...     registered_pages([("start", "Start", "home"), ("start", "Begin", "flag")])
... except DuplicateRegistrationError as error:
...     print(error)
dashboard page 'start' is registered twice: by ('start', 'Start', 'home') and by ('start', 'Begin', 'flag')
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from pruner.registry import DuplicateRegistrationError, Registry  # noqa: F401 (the docstring's example)


class Page(NamedTuple):
    name: str  # app_pages/<name>.py, logic/<name>.py, and the page's URL path
    title: str
    icon: str  # a Material icon name (":material/<icon>:")


def registered_pages(entries: Iterable[tuple[str, str, str]]) -> tuple[Page, ...]:
    """``entries`` as ``Page``s in their order; a name given twice is a ``DuplicateRegistrationError``."""
    registry: Registry[Page] = Registry("dashboard page", origin=lambda page: repr(tuple(page)))
    for entry in entries:
        page = Page(*entry)
        registry.add(page.name, page)
    return tuple(registry.values())
