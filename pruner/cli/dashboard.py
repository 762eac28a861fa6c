"""``pruner dashboard``: start the Streamlit dashboard this install ships, from any directory.

``streamlit run dashboard/app.py`` needs a checkout; this command finds the app wherever pruner
is installed (``app_path``) and runs ``streamlit run`` on it with this interpreter, so the app's
imports are the ones this install has. The server's options a user sets most are flags here;
anything else ``streamlit run`` accepts goes after ``--`` as it is.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ..errors import ConfigurationError
from .types import positive_int

NAME = "dashboard"
HELP = "open the dashboard in the browser (streamlit run on the app this install ships)"
EXTRA = "dashboard"  # checked by pruner.cli before run()

_PACKAGE = Path(__file__).resolve().parents[1]


def app_path(package: Path = _PACKAGE) -> Path:
    """The dashboard's ``app.py``: ``pruner/_app/dashboard/`` in an installed wheel (pyproject's package-dir),
    else the checkout's own ``dashboard/`` beside ``pruner/`` (an editable install, or running from a clone).

    Either way the folder above ``dashboard/`` holds ``sample_sessions/`` too, which the app reads.
    """
    for app, marker in ((package / "_app" / "dashboard" / "app.py", None),
                        (package.parent / "dashboard" / "app.py", package.parent / "pyproject.toml")):
        if app.is_file() and (marker is None or marker.is_file()):
            return app
    raise ConfigurationError(f"the dashboard's app.py is not installed beside {package} "
                             "(reinstall pruner: pip install 'pruner[dashboard]')")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (f"{HELP}. It runs until stopped (Ctrl+C). The app's own settings apply (its "
                     ".streamlit/config.toml): no usage statistics, localhost only unless --address says otherwise.")
    p.add_argument("--port", type=positive_int, default=None, metavar="N",
                   help="the port to serve on (default: Streamlit's, 8501, or the next free one)")
    p.add_argument("--address", default=None, metavar="HOST",
                   help="the address to listen on (default localhost; 0.0.0.0 serves other machines too)")
    p.add_argument("--headless", action="store_true",
                   help="do not open a browser (on a server, or when another program opens the page)")
    p.add_argument("streamlit_args", nargs=argparse.REMAINDER, metavar="-- STREAMLIT_OPTION",
                   help="after --: options passed to streamlit run as they are (e.g. -- --theme.base dark)")


def streamlit_command(args: argparse.Namespace, app: Path) -> list[str]:
    """The ``python -m streamlit run`` command line for ``args``."""
    extra = list(args.streamlit_args or [])
    if extra[:1] == ["--"]:
        extra = extra[1:]
    command = [sys.executable, "-m", "streamlit", "run", str(app),
               # Also in the app's config.toml; said here too, so no Streamlit version can send statistics.
               "--browser.gatherUsageStats", "false"]
    if args.port is not None:
        command += ["--server.port", str(args.port)]
    if args.address is not None:
        command += ["--server.address", args.address]
    if args.headless:
        command += ["--server.headless", "true"]
    return command + extra


def run(args: argparse.Namespace) -> int:
    command = streamlit_command(args, app_path())
    # The working directory stays the user's: the Corpus page opens folders relative to it.
    if os.name == "posix":
        # This process becomes Streamlit: a SIGTERM or Ctrl+C from whoever started `pruner dashboard` (a
        # terminal, a service manager, a test) reaches the server itself, and no server is left behind.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(command[0], command)
    return subprocess.call(command)  # Windows has no exec: wait for the server instead
