"""What the stream parsers share: the assembler they drive, the `WireParser` ends
(`fail`, `cancel`, `terminated`), their failures in words, reading token counts, and
putting thinking signatures on finished blocks (Anthropic and Bedrock)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.llm.errors import (
    ModelResponseFailed,
    ProviderConnectionError,
    ProviderError,
    inside,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import ThinkingBlock
from app.llm.wire.assembler import StreamAssembler

__all__ = ["SignedThinking", "StreamParserBase", "count", "started_index"]


def count(value: Any) -> int | None:
    """A token count as the provider sent it; None when it is missing or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def started_index(out: list[ModelStreamEvent], start: int) -> int:
    """The index of the block a call just opened (from its `block.started` event)."""
    for event in out[start:]:
        if event.kind == "block.started":
            return event.block.index
    return -1


class SignedThinking:
    """Signatures (and redactions) of thinking blocks by block index, put on the finished
    blocks (`block.completed` and the reply), which the assembler builds from text alone."""

    __slots__ = ("_by_index",)

    def __init__(self) -> None:
        self._by_index: dict[int, ThinkingBlock] = {}

    def __contains__(self, index: int) -> bool:
        return index in self._by_index

    def add(self, index: int, block: ThinkingBlock) -> None:
        """`block` carries the `signature` (and `redacted`) for the block at `index`."""
        self._by_index[index] = block

    def apply(self, out: list[ModelStreamEvent]) -> list[ModelStreamEvent]:
        if not self._by_index:
            return out
        for event in out:
            if event.kind == "block.completed" and event.block.index in self._by_index:
                event.content = self._signed(event.block.index, event.content)
            elif event.kind == "response.completed":
                content = [self._signed(i, c) for i, c in enumerate(event.response.content)]
                event.response = event.response.model_copy(update={"content": content})
        return out

    def _signed(self, index: int, content: Any) -> Any:
        signed = self._by_index.get(index)
        if signed is None or not isinstance(content, ThinkingBlock):
            return content
        return content.model_copy(
            update={
                "signature": signed.signature,
                "redacted": signed.redacted,
                "text": "" if signed.redacted else content.text,
            }
        )


class StreamParserBase:
    """The part of a `WireParser` every wire writes the same way. A parser subclasses
    it and adds `feed_sse` and `finish`; after a terminal event every call returns []."""

    def __init__(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
    ) -> None:
        self.assembler = StreamAssembler(emitter)
        self._label = label
        self._secrets = tuple(secrets)

    @property
    def terminated(self) -> bool:
        return self.assembler.terminated

    @property
    def _provider(self) -> str:
        return self.assembler.emitter.scope.provider

    def fail(self, error: ProviderError) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        self.assembler.fail(out, error)
        return out

    def cancel(self, error: ProviderError | None = None) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        self.assembler.cancel(out, error)
        return out

    def _failed(self, out: list[ModelStreamEvent], why: str, *, code: str | None = None) -> None:
        """End with `response.failed`: the provider's label, then `why`."""
        error = ModelResponseFailed(f"{self._label} {why}", provider=self._provider, code=code)
        self.assembler.fail(out, error)

    def _not_json(self, data: str | bytes) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        shown = redact(str(data)[:120], self._secrets)
        self._failed(out, f"sent stream data that is not JSON: {shown!r}")
        return out

    def _ended_early(
        self,
        out: list[ModelStreamEvent],
        *,
        done: bool,
        incomplete: str = "ended the reply without saying why it stopped.",
    ) -> None:
        """The body ended with no way to finish the reply: cut short (`done=False`), empty,
        or with output but without the protocol's end."""
        if not done:
            why = f"The connection to {inside(self._label)} closed before the reply finished."
            self.assembler.fail(out, ProviderConnectionError(why, provider=self._provider))
        elif not self.assembler.started:
            self._failed(out, "sent an empty reply.")
        else:
            self._failed(out, incomplete)
