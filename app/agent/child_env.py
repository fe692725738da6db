"""The environment a user's tool or MCP server runs with: not the app's. The app's
environment holds the providers' keys (`OPENAI_API_KEY` and the rest, whichever provider
is configured); a program the model can run gets only what any program needs — the
variables the MCP SDK passes on by default (HOME, LOGNAME, PATH, SHELL, TERM, USER, and
their Windows equivalents), the locale and time zone, the desktop session's address
(so a tool can show a notification or read the screen) and the network's proxy and
certificates — plus what its own config names (`env`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["INHERITED", "child_environment"]

_POSIX = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
_WINDOWS = (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
    "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
)  # fmt: skip
_SESSION = (
    "LANG", "LC_ALL", "LC_CTYPE", "TZ", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS", "TMPDIR",
    # the network the user set up (a proxy, a company's certificates)
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
    "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip
INHERITED = (_WINDOWS if sys.platform == "win32" else _POSIX) + _SESSION


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The inherited variables that are set (a bash function's `()` value is not
    passed on, as the MCP SDK does), then `extra` over them."""
    env = {
        name: value
        for name in INHERITED
        if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }
    return {**env, **(extra or {})}
