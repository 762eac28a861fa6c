"""MkDocs hook: put repository files the pages show into the site, without a second copy.

The dashboard's screenshots live in ``dashboard/screenshots/`` (the browser tests refresh
them there); a page refers to them as ``../assets/screenshots/NAME.png`` and this hook adds
each one to the build under ``assets/screenshots/``. ``CHANGELOG.md`` at the repository root
becomes the site's ``changelog.md`` page the same way; its links are written from the
repository root (``docs/bill.md``, as GitHub shows them), so on the site they lose the
``docs/`` prefix.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "dashboard" / "screenshots"
PAGES = {"changelog.md": ROOT / "CHANGELOG.md"}


def on_files(files, config):
    for png in sorted(SCREENSHOTS.glob("*.png")):
        files.append(File.generated(config, f"assets/screenshots/{png.name}", abs_src_path=str(png)))
    for uri, path in PAGES.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri in PAGES:
        return re.sub(r"\]\(docs/", "](", markdown)
    return markdown
