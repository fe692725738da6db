"""What the Gemini API sends back, turned into stream events: the
`GenerateContentResponse` chunks of `streamGenerateContent?alt=sse` (a whole
`generateContent` body is one such chunk). Its error bodies are read in `gemini_errors`.

`gemini.py` is the module face; it re-exports `GeminiStreamParser`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jiter

from app.llm.errors import InvalidRequestError, redact
from app.llm.events import BlockStarted, EventEmitter, ModelStreamEvent, ResponseCompleted
from app.llm.messages import ContentBlock, NativeBlock, ThinkingBlock
from app.llm.response import FinishReason, Usage
from app.llm.wire._stream_shared import StreamParserBase, count
from app.llm.wire.gemini_errors import error_from_body

__all__ = [
    "FINISH_REASONS",
    "GENERATED_ID_PREFIX",
    "GeminiStreamParser",
    "parse_usage",
]

logger = logging.getLogger(__name__)

WIRE_FORMAT = "gemini"
# Gemini's calls usually carry no id: ours start with this, and are never sent back.
GENERATED_ID_PREFIX = "gcall_"

FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
}


# ------------------------------------------------------------------ usage ----


def parse_usage(raw: Mapping[str, Any]) -> Usage | None:
    """`usageMetadata` as `Usage`, or None when it holds no counts (early chunks).

    `output` is `candidatesTokenCount`, which leaves out the thinking tokens;
    those are `reasoning` (and part of `total`).
    """
    usage = Usage(
        input=count(raw.get("promptTokenCount")),
        output=count(raw.get("candidatesTokenCount")),
        cache_read=count(raw.get("cachedContentTokenCount")),
        total=count(raw.get("totalTokenCount")),
        reasoning=count(raw.get("thoughtsTokenCount")),
    )
    return usage if usage.known else None


# --------------------------------------------------- streamed tool arguments ----

_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def _parse_path(json_path: Any) -> list[str | int]:
    """`$.a.b[0]['c d']` as `["a", "b", 0, "c d"]`; [] when it is not a path we know."""
    if not isinstance(json_path, str) or not json_path.startswith("$"):
        return []
    segments: list[str | int] = []
    position = 1
    for match in _PATH_TOKEN.finditer(json_path, 1):
        if match.start() != position:
            return []
        key, index, quoted, double = match.groups()
        segments.append(int(index) if index is not None else key or quoted or double or "")
        position = match.end()
    return segments if position == len(json_path) else []


class _StreamedArguments:
    """A call's arguments built from Gemini's `partialArgs` (one value per JSON path,
    strings possibly in several pieces), written out as append-only JSON text so the
    assembler can parse it while it grows."""

    __slots__ = ("_open_path", "text", "value")

    def __init__(self) -> None:
        self.value: dict[str, Any] = {}
        self.text = ""
        self._open_path: list[str | int] | None = None

    def add(self, partial_args: list[Any]) -> str:
        """Apply one chunk's `partialArgs`; the new JSON text (may be "")."""
        for arg in partial_args:
            if not isinstance(arg, dict):
                continue
            path = _parse_path(arg.get("jsonPath"))
            if not path:
                continue
            piece = arg.get("stringValue")
            if isinstance(piece, str) and path == self._open_path:
                self._set(path, str(self._get(path) or "") + piece)
            elif isinstance(piece, str):
                self._set(path, piece)
            elif "numberValue" in arg or "boolValue" in arg:
                self._set(path, arg.get("numberValue", arg.get("boolValue")))
            elif "nullValue" in arg:
                self._set(path, None)
            else:
                continue
            self._open_path = path if isinstance(piece, str) and arg.get("willContinue") else None
        rendered = json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))
        rendered = rendered.rstrip("}]")
        if self._open_path is not None and rendered.endswith('"'):
            rendered = rendered[:-1]
        return self._advance(rendered)

    def close(self) -> str:
        """The rest of the JSON text once the call is complete."""
        self._open_path = None
        return self._advance(json.dumps(self.value, ensure_ascii=False, separators=(",", ":")))

    def _advance(self, rendered: str) -> str:
        # Only appended text can go out; a value changed in the middle stays in `value`.
        if not rendered.startswith(self.text):
            return ""
        delta, self.text = rendered[len(self.text) :], rendered
        return delta

    def _get(self, path: list[str | int]) -> Any:
        node: Any = self.value
        for segment in path:
            if isinstance(segment, int):
                if not isinstance(node, list) or segment >= len(node):
                    return None
                node = node[segment]
            else:
                if not isinstance(node, dict):
                    return None
                node = node.get(segment)
        return node

    def _set(self, path: list[str | int], value: Any) -> None:
        node: Any = self.value
        for segment, following in zip(path, [*path[1:], None], strict=True):
            fresh: Any = value if following is None else ([] if isinstance(following, int) else {})
            if isinstance(segment, int):
                if not isinstance(node, list):
                    return
                while len(node) <= segment:
                    node.append(None)
                if following is None or not isinstance(node[segment], list | dict):
                    node[segment] = fresh
            else:
                if not isinstance(node, dict):
                    return
                if following is None or not isinstance(node.get(segment), list | dict):
                    node[segment] = fresh
            node = node[segment]


# ----------------------------------------------------------------- stream ----


class GeminiStreamParser(StreamParserBase):
    """`GenerateContentResponse` chunks in, stream events out.

    Gemini has no end marker of its own: the chunk with `finishReason` is the last,
    and the body then ends. `thoughtSignature`s are kept for replay: on a thinking
    block as its `signature`; before a text or tool block as an empty
    `ThinkingBlock(signature=...)`; alone (an empty part) as a `NativeBlock`.
    """

    def __init__(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
    ) -> None:
        super().__init__(emitter, label=label, secrets=secrets)
        self._finish: str | None = None
        self._finish_message: str | None = None
        self._usage: Usage | None = None
        self._usage_final = False
        self._model_version: str | None = None
        self._calls = 0  # tool calls seen, the key of each in the assembler
        self._call_ids: set[str] = set()
        self._streamed_call: tuple[int, _StreamedArguments] | None = None
        self._text_block: tuple[str, int] | None = None  # the open text/thinking block
        self._tool_blocks: dict[int, int] = {}  # call key -> block index
        self._blocks = 0
        self._signatures: dict[int, str] = {}  # block index -> thoughtSignature
        self._loose_parts: list[tuple[int, dict[str, Any]]] = []  # (position, part)

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        """One SSE event's data: a JSON chunk. `event` names are not used by Gemini."""
        out: list[ModelStreamEvent] = []
        if self.assembler.terminated:
            return out
        data = data.strip()
        if not data or data == "[DONE]":  # [DONE] is not Gemini's, but replays add it
            return out
        try:
            chunk = jiter.from_json(data.encode())
        except ValueError:
            return self._not_json(data)
        return self.feed(chunk)

    def feed(self, chunk: Any) -> list[ModelStreamEvent]:
        """One parsed chunk (a JSON array of chunks is taken one by one)."""
        out: list[ModelStreamEvent] = []
        if isinstance(chunk, list):
            for item in chunk:
                out += self.feed(item)
            return out
        asm = self.assembler
        if asm.terminated:
            return out
        if not isinstance(chunk, dict):
            self._failed(out, "sent a stream chunk that is not an object.")
            return out
        if "error" in chunk:
            scope = asm.emitter.scope
            error = error_from_body(
                None,
                chunk,
                label=self._label,
                provider=scope.provider,
                model=scope.model,
                secrets=self._secrets,
            )
            asm.fail(out, error)
            return out
        asm.start(
            out, chunk.get("responseId") if isinstance(chunk.get("responseId"), str) else None
        )
        if isinstance(chunk.get("modelVersion"), str):
            self._model_version = asm.model = chunk["modelVersion"]
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = str(feedback["blockReason"])
            asm.fail(
                out,
                InvalidRequestError(
                    f"{self._label} blocked the prompt ({reason}) and gave no reply. "
                    "Try rewording the message.",
                    provider=self._provider,
                    code="content_filter",
                    retryable=False,
                ),
            )
            return out
        candidates = chunk.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            self._candidate(out, candidates[0])
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            parsed = parse_usage(usage)
            final = self._finish is not None
            # Counts repeat in every chunk: an event when they change, and once as final.
            if parsed is not None and (parsed != self._usage or final > self._usage_final):
                self._usage, self._usage_final = parsed, final
                asm.usage(out, parsed, final)
        return out

    def _candidate(self, out: list[ModelStreamEvent], candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                self._part(out, part)
        if isinstance(candidate.get("finishReason"), str):
            self._finish = candidate["finishReason"]
            if isinstance(candidate.get("finishMessage"), str):
                self._finish_message = redact(candidate["finishMessage"], self._secrets)

    def _part(self, out: list[ModelStreamEvent], part: dict[str, Any]) -> None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        start = len(out)
        call, text, thought = part.get("functionCall"), part.get("text"), part.get("thought")
        kind = "thinking" if thought is True else "text"
        index: int | None = None
        if isinstance(call, dict):
            index = self._function_call(out, call)
        elif isinstance(text, str):
            if text and kind == "thinking":
                self.assembler.thinking(out, text)
            elif text:
                self.assembler.text(out, text)
            self._note_started_blocks(out, start)
            # A text part (even an empty last one) signs the text block it belongs to.
            if self._text_block is not None and self._text_block[0] == kind:
                index = self._text_block[1]
        else:
            # Code execution, images and parts of later API versions are not ours to show.
            logger.debug("Ignoring a Gemini part with keys %s", sorted(part))
            return
        self._note_started_blocks(out, start)
        if signature is None:
            return
        if index is not None:
            self._signatures[index] = signature
        elif not isinstance(call, dict):
            # A signature on an empty part with nothing to hang on: kept as that part.
            loose: dict[str, Any] = {"text": "", "thoughtSignature": signature}
            if kind == "thinking":
                loose["thought"] = True
            self._loose_parts.append((self._blocks, loose))

    def _note_started_blocks(self, out: list[ModelStreamEvent], start: int) -> None:
        for event in out[start:]:
            if isinstance(event, BlockStarted):
                self._blocks = event.block.index + 1
                kind = event.block.kind
                self._text_block = (kind, event.block.index) if kind != "tool_use" else None

    def _function_call(self, out: list[ModelStreamEvent], call: dict[str, Any]) -> int | None:
        """One `functionCall` part, whole or a piece of a streamed one; its block index."""
        asm = self.assembler
        name = call.get("name") if isinstance(call.get("name"), str) else None
        if self._streamed_call is not None and not name:
            key, arguments = self._streamed_call
            partial = call.get("partialArgs")
            if isinstance(partial, list):
                delta = arguments.add(partial)
                if delta:
                    asm.tool_call(out, key, arguments=delta)
            if not call.get("willContinue"):
                self._streamed_call = None
                asm.tool_call(out, key, arguments=arguments.close())
            return self._tool_blocks.get(key)
        if not name:
            logger.debug("Ignoring a Gemini functionCall without a name")
            return None
        if self._streamed_call is not None:  # a new call ends an unfinished streamed one
            key, arguments = self._streamed_call
            self._streamed_call = None
            asm.tool_call(out, key, arguments=arguments.close())
        key = self._calls
        self._calls += 1
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if not call_id or call_id in self._call_ids:
            stream_id = asm.emitter.scope.model_stream_id[:12]
            call_id = f"{GENERATED_ID_PREFIX}{stream_id}_{key}"
        self._call_ids.add(call_id)
        start = len(out)
        args = call.get("args")
        if args is not None:
            text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
            asm.tool_call(out, key, call_id=call_id, name=name, arguments=text)
        elif call.get("willContinue"):
            arguments = _StreamedArguments()
            self._streamed_call = (key, arguments)
            asm.tool_call(out, key, call_id=call_id, name=name)
            partial = call.get("partialArgs")
            if isinstance(partial, list):
                delta = arguments.add(partial)
                if delta:
                    asm.tool_call(out, key, arguments=delta)
        else:
            asm.tool_call(out, key, call_id=call_id, name=name)
        for event in out[start:]:
            if isinstance(event, BlockStarted) and event.block.kind == "tool_use":
                self._tool_blocks[key] = event.block.index
        return self._tool_blocks.get(key)

    def finish(self, *, done: bool = True) -> list[ModelStreamEvent]:
        """The body ended (`done=False`: cut short). A `finishReason` already seen ends
        the reply normally either way."""
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        if self._streamed_call is not None and self._finish is not None:
            key, arguments = self._streamed_call
            self._streamed_call = None
            asm.tool_call(out, key, arguments=arguments.close())
        raw = self._finish
        if raw is not None:
            finish = FINISH_REASONS.get(raw)
            if finish == "stop" and self._tool_blocks:
                finish = "tool_use"
            if finish is None:
                why = f"stopped the reply ({raw})"
                why += f": {self._finish_message}" if self._finish_message else "."
                self._failed(out, why, code=raw)
                return out
            start = len(out)
            asm.complete(out, finish, self._usage, self._metadata(raw))
            for event in out[start:]:
                if isinstance(event, ResponseCompleted):
                    content = self._with_signatures(event.response.content)
                    event.response = event.response.model_copy(update={"content": content})
        else:
            self._ended_early(out, done=done)
        return out

    def _metadata(self, raw: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"finish_reason_raw": raw}
        if self._model_version:
            metadata["model_version"] = self._model_version
        if self._finish_message:
            metadata["finish_message"] = self._finish_message
        return metadata

    def _with_signatures(self, content: list[ContentBlock]) -> list[ContentBlock]:
        """The reply's blocks with the thought signatures put where replay finds them."""
        if not self._signatures and not self._loose_parts:
            return content
        result: list[ContentBlock] = []
        loose = list(self._loose_parts)
        for index, block in enumerate(content):
            while loose and loose[0][0] <= index:
                result.append(NativeBlock(format=WIRE_FORMAT, data=loose.pop(0)[1]))
            signature = self._signatures.get(index)
            if signature is not None and isinstance(block, ThinkingBlock):
                block = block.model_copy(update={"signature": signature})
            elif signature is not None:
                result.append(ThinkingBlock(signature=signature, provider=self._provider))
            result.append(block)
        result += [NativeBlock(format=WIRE_FORMAT, data=part) for _, part in loose]
        return result
