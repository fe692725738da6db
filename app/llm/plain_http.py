"""A key is never sent where anyone on the way can read it: over plain `http://` to a
server outside this computer. A server on loopback (Ollama, llama-server, LM Studio on
this computer) is fine; one elsewhere on the network needs `https://`, or the user's
own say-so (`chat.allow_plain_http`), since its key would cross the network readable.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from app.llm.errors import InvalidRequestError

__all__ = ["check_key_transport", "is_loopback_host"]


def is_loopback_host(host: str) -> bool:
    """`localhost` (and `*.localhost`), 127.0.0.0/8, ::1."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_key_transport(url: str, *, key: bool, allowed: bool, provider: str = "") -> None:
    """Raise `InvalidRequestError`, before anything is sent, when a key would go over
    plain HTTP to a host outside loopback and the user has not allowed it."""
    parts = urlsplit(url)
    if not key or allowed or parts.scheme != "http" or is_loopback_host(parts.hostname or ""):
        return
    raise InvalidRequestError(
        f"Your key was not sent: {parts.scheme}://{parts.netloc} is plain HTTP, so anyone on "
        "the network could read it. Use the server's https:// address, or, on a network "
        "you trust, allow it with chat.allow_plain_http = true.",
        provider=provider,
    )
