"""Reading an HTTP reply's body (httpx) with a size limit: a server, or something
pretending to be one, must not make the app hold gigabytes for one answer."""

from __future__ import annotations

import httpx

__all__ = ["BodyTooLarge", "read_body"]


class BodyTooLarge(Exception):
    """The body is larger than the limit it was read with."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit:,} bytes")
        self.limit = limit


async def read_body(response: httpx.Response, limit: int, *, cut: bool = False) -> bytes:
    """The body of a streamed `response`, at most `limit` bytes: past it, the first `limit`
    bytes when `cut` (an error message is still worth reading), else `BodyTooLarge`."""
    length = response.headers.get("content-length", "")
    if not cut and length.isdigit() and int(length) > limit:
        raise BodyTooLarge(limit)
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            if cut:
                return b"".join(parts)[:limit]
            raise BodyTooLarge(limit)
    return b"".join(parts)
