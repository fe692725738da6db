"""One call of the chat model inside a turn: its streamed words masked as they come in,
then watched by the reply guard (enough said, or a loop, stops the model). Iterate a
`ModelCallStream` for the words and reasoning, then read its `outcome` (`CallOutcome`):
the message, the typed `ProviderError` of a failed call, usage and time stamps."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from app.agent.masking import ReplyMasking, mask_message
from app.agent.outputs import SentenceBreak, ThinkingDelta
from app.agent.reply_guard import ReplyCut, ReplyGuard, kept_message
from app.agent.streams import OutcomeStream
from app.llm import LLMRequest, Msg, ProviderError, StreamingProvider, Usage
from app.llm.reply_form import sentences_in
from app.redaction import Redactor

__all__ = ["CallOutcome", "ModelCallStream", "stream_call"]


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """How one model call ended (what is known so far, while it runs)."""

    message: Msg | None = None  # the reply, masked; after a guard's cut, what it kept
    error: ProviderError | None = None
    cancelled: bool = False  # the provider ended the reply (`response.cancelled`)
    emitted: bool = False  # output was streamed: the call is not tried again
    said: str = ""  # the answer's words as passed on (what the guard kept, after a cut)
    cut: ReplyCut | None = None  # the guard stopped it inside a sentence already streamed
    finish_reason: str | None = None
    usage: Usage | None = None
    request_sent: float | None = None  # perf_counter() stamps
    first_token: float | None = None
    finished: float | None = None


class ModelCallStream(OutcomeStream[str | ThinkingDelta | SentenceBreak]):
    """The model's answer to one request, as it streams: text and typed reasoning, and a
    `SentenceBreak` where the reply's start the app knew (`LLMRequest.reply_start`) ends."""

    def __init__(
        self,
        provider: StreamingProvider,
        request: LLMRequest,
        redactor: Redactor,
        guard: ReplyGuard,
    ) -> None:
        self.provider = provider
        self.request = request
        self._redactor = redactor
        self._guard = guard
        self._parts: list[str] = []
        self._message: Msg | None = None
        self._error: ProviderError | None = None
        self._cancelled = False
        self._emitted = False
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._request_sent: float | None = None
        self._first_token: float | None = None
        self._finished: float | None = None
        # Characters of the reply's known start still to come (the client streams it first).
        begun = request.reply_start if getattr(provider, "continues_replies", False) else None
        # (a start that is only the face is no sentence: it goes with the first one)
        self._begun_left = len(begun) if begun and sentences_in(begun) else 0
        self._begun_flushed = False

    def _passed(self, piece: str) -> list[str | SentenceBreak]:
        """`piece` as it is passed on: with a `SentenceBreak` where the known start ends."""
        self._parts.append(piece)
        left = self._begun_left
        if left <= 0 or len(piece) < left:
            self._begun_left -= len(piece)
            return [piece]
        self._begun_left = 0
        return [p for p in (piece[:left], SentenceBreak(), piece[left:]) if p]

    @property
    def outcome(self) -> CallOutcome:
        guard = self._guard
        cut = guard.cut
        return CallOutcome(
            message=self._message,
            error=self._error,
            cancelled=self._cancelled,
            emitted=self._emitted,
            said="".join(self._parts),
            cut=ReplyCut(cut) if cut is not None and guard.tail_unfinished else None,
            finish_reason=self._finish_reason,
            usage=self._usage,
            request_sent=self._request_sent,
            first_token=self._first_token,
            finished=self._finished,
        )

    async def _items(self) -> AsyncGenerator[str | ThinkingDelta | SentenceBreak, None]:
        self._request_sent = time.perf_counter()
        guard = self._guard
        # The model's words are masked as they come in (a key it repeats is never shown,
        # spoken or stored), then the guard sees them: enough said, or a loop, stops it.
        masking = ReplyMasking(self._redactor)
        stopped = False
        events = self.provider.stream(self.request)
        try:
            async for event in events:
                if event.kind == "block.delta":
                    channel, delta = event.channel, event.delta
                    if not delta or channel not in ("text", "thinking"):
                        continue
                    if self._first_token is None:
                        self._first_token = time.perf_counter()
                    self._emitted = True
                    for item in masking.feed(channel, delta):
                        if isinstance(item, ThinkingDelta):
                            yield item
                            continue
                        piece, stopped = guard.feed(item)
                        if piece:
                            for out in self._passed(piece):
                                yield out
                        if stopped:
                            break
                    if self._begun_left > 0 and not stopped and not self._begun_flushed:
                        # the known start's end held back by the masker ("again?" may
                        # begin "?key="): the app's own words, passed on now (once)
                        self._begun_flushed = True
                        for item in masking.flush():
                            if isinstance(item, ThinkingDelta):
                                yield item
                                continue
                            piece, stopped = guard.feed(item)
                            for out in self._passed(piece) if piece else ():
                                yield out
                    if stopped:
                        break  # the model stops here (the stream is closed below)
                elif event.kind == "response.completed":
                    self._message = mask_message(event.response.to_msg(), self._redactor)
                    self._finish_reason = event.response.finish_reason
                    self._usage = event.response.usage
                elif event.kind == "response.failed":
                    self._error = event.error
                    self._emitted = self._emitted or bool(event.semantic_output_emitted)
                elif event.kind == "response.cancelled":
                    self._cancelled = True
            if not stopped:
                for item in masking.flush():  # what the masker held back at the end
                    if isinstance(item, ThinkingDelta):
                        yield item
                        continue
                    piece, stopped = guard.feed(item)
                    if piece:
                        for out in self._passed(piece):
                            yield out
                    if stopped:
                        break
                if self._finish_reason is not None:
                    guard.finished(cut_by_length=self._finish_reason == "length")
        finally:
            await events.aclose()  # closing the stream stops the model generating
            self._finished = time.perf_counter()
        if guard.cut is not None and self._error is None and not self._cancelled:
            self._message = kept_message(self._message, guard)
            self._parts[:] = [guard.kept]


def stream_call(
    provider: StreamingProvider, request: LLMRequest, redactor: Redactor, guard: ReplyGuard
) -> ModelCallStream:
    """One call of `provider` with `request`, its words masked by `redactor` and watched
    by `guard`: iterate it, then read its `outcome`."""
    return ModelCallStream(provider, request, redactor, guard)
