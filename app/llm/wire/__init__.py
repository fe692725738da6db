"""The wire protocols, one module each, all with the same shape: `to_wire(...)`, a
stream parser that turns the provider's chunks into `app.llm.events`, and an HTTP
error mapper. `openai_chat` is Chat Completions (also spoken by OpenRouter, DeepSeek,
Ollama and llama.cpp), `local` the embedded llama.cpp model, `sse` event-stream framing.

Beside them: `assembler` (stream pieces into events and a finished reply, driven by
every parser), `_stream_shared` (what the parsers share) and, here, `read_base64` for
media files. Only `app.llm` imports the wires; the rest of the app sees neutral types.
"""

from __future__ import annotations

import base64

from app.llm.errors import ValidationError
from app.llm.messages import AudioBlock, FileBlock, ImageFileRef

__all__ = ["read_base64"]


def read_base64(source: ImageFileRef | AudioBlock | FileBlock, what: str) -> str:
    """The file's bytes as base64, read now; a `ValidationError` in words if it is gone."""
    try:
        data = source.path.read_bytes()
    except OSError as exc:
        raise ValidationError(
            f"The {what} {source.path} cannot be read ({exc.strerror or exc}), "
            "so it cannot be sent to the model."
        ) from None
    return base64.b64encode(data).decode("ascii")
