"""What a chat model client can be asked besides `stream()`, declared once with the
answer of a client that has nothing to do for it (as httpx's `AsyncBaseTransport.aclose`).

Every client the app builds (`HttpWireClient`, `LocalModelClient`) inherits
`ModelClient` and overrides what it really does: the embedded model loads its weights,
counts tokens without the tools it is never offered, and reads a prompt ahead. A
provider the app did not build (a host's, a test's) becomes one through
`app.llm.adapted.model_client`. The app then calls these methods as they are, never
asking first whether a client has them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from app.llm.events import ModelStreamEvent
from app.llm.request import LLMRequest, estimate_input_tokens

__all__ = ["ModelClient", "Progress"]

# How far a long first load is: (what it is doing, steps done, steps in all).
Progress = Callable[[str, int, int], None]


class ModelClient:
    """A chat model client: `stream()` is its own; the rest have defaults."""

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        """The reply as events ending in exactly one terminal event; `aclose()` the
        generator to stop a reply early."""
        raise NotImplementedError

    @property
    def needs_preparing(self) -> bool:
        """Whether the first `load()` has long work to report (`progress`)."""
        return False

    async def load(self, progress: Progress | None = None) -> None:
        """Get ready to answer (the embedded model loads its weights); a hosted model
        has nothing to load."""
        return None

    async def aclose(self) -> None:
        """Let go of what the client holds (connections, threads)."""
        return None

    def drain_notices(self) -> list[str]:
        """What the user should be told about the client since the last call, once (the
        embedded model fell back from the graphics card to the processor)."""
        return []

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        """About how many tokens `request` costs to read."""
        return estimate_input_tokens(request)

    @property
    def reads_ahead(self) -> bool:
        """Whether `read_ahead` is worth calling: the model keeps what it read, so a turn
        that begins the same way reads only the rest (a client that has its own
        `read_ahead` does)."""
        return type(self).read_ahead is not ModelClient.read_ahead

    @property
    def continues_replies(self) -> bool:
        """Whether a request's `reply_start` is honoured: streamed at once, and the model
        goes on from it (the embedded one; a hosted API has no way to be given it)."""
        return False

    async def read_ahead(self, request: LLMRequest) -> None:
        """Read `request`'s prompt now, ahead of the turn it begins (nothing to gain for a
        model that does not keep what it read)."""
        return None
