"""A reply the app has begun, gone on with by the embedded model.

When a request carries how its reply begins (`LLMRequest.reply_start`; nothing in the
app gives one since the keyword answers were retired, issue 37), that start is streamed
at once and the
model is given it as the beginning of its own message: the prompt is the conversation
as the model's chat template writes it, ready for the reply, then the start. The model
goes on after it (another sentence, or the end of its turn at once), so the reply is
one message, its first words heard without waiting for the model to decode them (1.2-1.4 s
on 2 cores for "[neutral] 12 plus 7 is 19.").

llama-cpp-python has no such call; its chat handler formats the prompt with a formatter,
so the handler used here is llama-cpp-python's own around a formatter that adds the
start (the prompt is the same text as without it, up to the start: what was read ahead
stays read). Only a model whose file carries its chat template can be continued this way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["begun_chunk", "can_continue", "continued"]


def begun_chunk(start: str) -> dict[str, Any]:
    """The reply's known start as the first chunk of its stream (before the model's)."""
    delta = {"role": "assistant", "content": start}
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


def _template(llama: Any) -> str | None:
    metadata = getattr(llama, "metadata", None) or {}
    template = metadata.get("tokenizer.chat_template")
    return template if isinstance(template, str) and template.strip() else None


def can_continue(llama: Any) -> bool:
    """Whether `llama` can be given the start of its reply: it formats chats with the
    template its file carries (not a handler or a named format of its own)."""
    return (
        _template(llama) is not None
        and getattr(llama, "chat_handler", None) is None
        and getattr(llama, "chat_format", None) == "chat_template.default"
    )


def _token_text(llama: Any, token: int) -> str:
    return str(llama._model.token_get_text(token)) if token != -1 else ""


@contextlib.contextmanager
def continued(llama: Any, start: str) -> Iterator[None]:
    """While inside, `llama.create_chat_completion` writes its reply after `start`."""
    from llama_cpp import llama_chat_format as chat_format

    template = _template(llama)
    assert template is not None, "can_continue(llama) is checked first"
    eos = llama.token_eos()
    base = chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=_token_text(llama, eos),
        bos_token=_token_text(llama, llama.token_bos()),
        stop_token_ids=[eos],
    )

    class _Begun(chat_format.ChatFormatter):
        def __call__(self, **kwargs: Any) -> Any:
            result = base(**kwargs)
            return chat_format.ChatFormatterResponse(
                prompt=result.prompt + start,
                stop=result.stop,
                stopping_criteria=result.stopping_criteria,
                added_special=result.added_special,
            )

    llama.chat_handler = chat_format.chat_formatter_to_chat_completion_handler(_Begun())
    try:
        yield
    finally:
        llama.chat_handler = None
