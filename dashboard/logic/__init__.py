"""One logic module per dashboard page: what the page decides, separate from how it draws.

A page file in ``dashboard/app_pages/`` reads like a description of the UI and
calls its module here for everything else (loading, selection, what a button
does), so tests call that logic directly, without a browser.
"""
