"""Records every attempt of this Python process to reach another host (loaded via PYTHONPATH).

The browser test starts the dashboard exactly as the README says, with this
directory on ``PYTHONPATH`` (an environment variable, not a flag), so Python
imports this module at start-up. It installs an audit hook (PEP 578) that
appends one line per name lookup or connection to a host other than this
machine to the file named by ``PRUNER_OUTBOUND_LOG``. The test fails when that
file is not empty.
"""

import os
import sys

_LOG = os.environ.get("PRUNER_OUTBOUND_LOG")
_LOCAL = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "::", "", None}


def _host(event, args):
    if event in ("socket.connect", "socket.sendto"):
        address = args[1] if event == "socket.connect" else args[-1]
        if isinstance(address, tuple) and address:
            return address[0]
        return None  # a Unix socket path
    if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "http.client.connect"):
        return args[1] if event == "http.client.connect" else args[0]
    if event == "urllib.Request":
        return args[0]
    return None


def _hook(event, args):
    if not event.startswith(("socket.", "http.client.", "urllib.")):
        return
    try:
        host = _host(event, args)
    except Exception:
        return
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host in _LOCAL or (isinstance(host, str) and host.startswith("127.")):
        return
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {event} {host!r}\n")


if _LOG:
    sys.addaudithook(_hook)
