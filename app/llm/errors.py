"""Typed errors of the provider layer; every message is a sentence a user can read.

The tree::

    ProviderError                     anything that stops a model call
     ├── AuthenticationError          missing, wrong or refused API key (401/403)
     ├── RateLimitError               429; `retry_after` seconds when the provider says
     ├── OverloadedError              502/503/504/529: the provider is busy
     ├── ContextOverflowError         the prompt does not fit the model's context window
     ├── InvalidRequestError          400/404/422: the provider refused the request
     ├── ProviderConnectionError      could not connect, or the connection dropped
     ├── ProviderTimeoutError         no answer in time (408 or a client timeout)
     ├── ModelResponseFailed          the reply was broken: bad stream data, unknown stop
     │                                reason, a server error, an error inside the stream
     ├── ModelNotInstalledError       the embedded model (or llama-cpp-python) is missing
     ├── ValidationError              (also a ValueError) content or options the chosen
     │                                protocol cannot carry; raised before any network
     └── ProviderStreamError          what a `response.failed` event carries: the cause
                                      (one of the above, in `.cause`) and whether output
                                      was already streamed (`semantic_output_emitted`)

A `ProviderStreamError` is also an instance of its cause's class: the one for a rate
limit is a `RateLimitStreamError`, which is both a `ProviderStreamError` and a
`RateLimitError`, so `isinstance(event.error, RateLimitError)` and `except
RateLimitError` keep working on what a stream (or `complete()`) reports.

`str(error)` never contains an API key: provider messages pass through `redact`
before an error is built, and callers never put keys into messages.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from app.redaction import redact

__all__ = [
    "AuthenticationError",
    "ContextOverflowError",
    "InvalidRequestError",
    "ModelNotInstalledError",
    "ModelResponseFailed",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ValidationError",
    "error_for_status",
    "error_from_http",
    "error_from_payload",
    "inside",
    "is_context_overflow",
    "parse_retry_after",
    "redact",
]


class ProviderError(Exception):
    """Base of every provider-layer error. `str()` is the human sentence."""

    retryable_by_default = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status_code: int | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status_code = status_code
        self.code = code
        self.retry_after = retry_after
        self.retryable = self.retryable_by_default if retryable is None else retryable

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class AuthenticationError(ProviderError):
    pass


class RateLimitError(ProviderError):
    retryable_by_default = True


class OverloadedError(ProviderError):
    retryable_by_default = True


class ContextOverflowError(ProviderError):
    pass


class InvalidRequestError(ProviderError):
    pass


class ProviderConnectionError(ProviderError):
    retryable_by_default = True


class ProviderTimeoutError(ProviderError):
    retryable_by_default = True


class ModelResponseFailed(ProviderError):
    pass


class ModelNotInstalledError(ProviderError):
    pass


class ValidationError(ProviderError, ValueError):
    pass


class ProviderStreamError(ProviderError):
    """The error of a failed stream: `cause` is the typed error that ended it and
    `semantic_output_emitted` says whether text or tool output had been streamed.

    Made with `ProviderStreamError.of(cause, ...)`, which picks the subclass that is
    also of the cause's class (`RateLimitStreamError` for a `RateLimitError`): real
    subclasses rather than a wrapper, because `except RateLimitError` matches by class
    and ignores `__instancecheck__`. The message, status, code, `retry_after` and
    `retryable` are the cause's.
    """

    def __init__(self, cause: ProviderError, *, semantic_output_emitted: bool) -> None:
        super().__init__(
            cause.message,
            provider=cause.provider,
            status_code=cause.status_code,
            code=cause.code,
            retry_after=cause.retry_after,
            retryable=cause.retryable,
        )
        self.cause = cause
        self.semantic_output_emitted = semantic_output_emitted
        self.__cause__ = cause

    @classmethod
    def of(cls, cause: ProviderError, *, semantic_output_emitted: bool) -> ProviderStreamError:
        """The stream error for `cause`, of the subclass that is also of `cause`'s class
        (for a class of someone else's, its nearest class of ours: `.cause` keeps it)."""
        if isinstance(cause, ProviderStreamError):
            if cause.semantic_output_emitted == semantic_output_emitted:
                return cause
            cause = cause.cause
        kind = next(
            (_STREAM_CLASSES[c] for c in type(cause).__mro__ if c in _STREAM_CLASSES),
            ProviderStreamError,
        )
        return kind(cause, semantic_output_emitted=semantic_output_emitted)

    def __reduce__(self) -> tuple[Any, ...]:
        flag = self.semantic_output_emitted
        return (_rebuild_stream_error, (self.cause, flag))


def _rebuild_stream_error(cause: ProviderError, flag: bool) -> ProviderStreamError:
    return ProviderStreamError.of(cause, semantic_output_emitted=flag)


class AuthenticationStreamError(ProviderStreamError, AuthenticationError):
    pass


class RateLimitStreamError(ProviderStreamError, RateLimitError):
    pass


class OverloadedStreamError(ProviderStreamError, OverloadedError):
    pass


class ContextOverflowStreamError(ProviderStreamError, ContextOverflowError):
    pass


class InvalidRequestStreamError(ProviderStreamError, InvalidRequestError):
    pass


class ConnectionStreamError(ProviderStreamError, ProviderConnectionError):
    pass


class TimeoutStreamError(ProviderStreamError, ProviderTimeoutError):
    pass


class ResponseFailedStreamError(ProviderStreamError, ModelResponseFailed):
    pass


class NotInstalledStreamError(ProviderStreamError, ModelNotInstalledError):
    pass


class ValidationStreamError(ProviderStreamError, ValidationError):
    pass


# Each cause class with the stream error that is also of it (read-only after import).
_STREAM_CLASSES: Mapping[type[ProviderError], type[ProviderStreamError]] = {
    AuthenticationError: AuthenticationStreamError,
    RateLimitError: RateLimitStreamError,
    OverloadedError: OverloadedStreamError,
    ContextOverflowError: ContextOverflowStreamError,
    InvalidRequestError: InvalidRequestStreamError,
    ProviderConnectionError: ConnectionStreamError,
    ProviderTimeoutError: TimeoutStreamError,
    ModelResponseFailed: ResponseFailedStreamError,
    ModelNotInstalledError: NotInstalledStreamError,
    ValidationError: ValidationStreamError,
}


def inside(label: str) -> str:
    """A provider's label inside a sentence: "The server at …" becomes "the server at …"
    (a name such as "OpenAI" stays as it is)."""
    return "the" + label[3:] if label.startswith("The ") else label


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# Wordings providers use when the prompt is larger than the context window.
_OVERFLOW_PATTERNS = re.compile(
    "|".join(
        [
            r"prompt is too long",  # Anthropic
            r"input length and `?max_tokens`? exceed context limit",  # Anthropic
            r"input is too long for requested model",  # Amazon Bedrock
            r"too large for model with \d+ maximum context length",  # Mistral
            r"exceeds the context window",  # OpenAI
            r"maximum context length is \d+",  # OpenAI chat, OpenRouter, vLLM
            r"input token count.*exceeds the maximum",  # Gemini
            r"exceeds the maximum number of tokens",  # Gemini
            r"maximum prompt length is \d+",  # xAI
            r"reduce the length of the messages",  # Groq
            r"exceeds the limit of \d+",  # GitHub Copilot
            r"exceeds the available context size",  # llama.cpp server
            r"exceed context window of \d+",  # llama-cpp-python in-process
            r"greater than the context length",  # LM Studio
            r"context window exceeds limit",  # MiniMax
            r"exceeded model token limit",  # Kimi
            r"context[_ ]length[_ ]exceeded",  # OpenAI code, generic
            r"too many tokens",
            r"token limit exceeded",
        ]
    ),
    re.IGNORECASE,
)


def looks_like_context_overflow(message: str) -> bool:
    return bool(_OVERFLOW_PATTERNS.search(message))


def is_context_overflow(error_or_response: Any, *, context_window: int | None = None) -> bool:
    """Whether a failure (or a reply) means the prompt did not fit the context window.

    Takes a `ProviderError`, any exception, a plain message, or an `LLMResponse`:
    a reply is a silent overflow when its reported input tokens reach
    `context_window` (some servers truncate instead of failing).
    """
    if isinstance(error_or_response, ContextOverflowError):
        return True
    if isinstance(error_or_response, ProviderError):
        if error_or_response.code and looks_like_context_overflow(error_or_response.code):
            return True
        return looks_like_context_overflow(error_or_response.message)
    if isinstance(error_or_response, BaseException | str):
        return looks_like_context_overflow(str(error_or_response))
    usage = getattr(error_or_response, "usage", None)
    if usage is not None and context_window:
        used = getattr(usage, "input", None)
        return used is not None and used >= context_window
    return False


def error_for_status(
    status: int,
    message: str,
    *,
    label: str,
    provider: str,
    model: str,
    base_url: str = "",
    code: str | None = None,
    kind: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error, in words, for an HTTP error status; `message` must be redacted already.

    `label` names the provider in a sentence ("OpenAI", "The server at http://...").
    """
    if message and message[-1] not in ".!?":
        message += "."
    detail = f": {message}" if message else "."
    common: dict[str, Any] = {"provider": provider, "status_code": status, "code": code}
    if status == 401:
        return AuthenticationError(f"{label} rejected the API key (HTTP 401){detail}", **common)
    if status == 403:
        return AuthenticationError(
            f"{label} refused access with this API key (HTTP 403){detail}", **common
        )
    if status == 404:
        where = f" at {base_url}" if base_url else ""
        return InvalidRequestError(
            f"{label}{where} has no model named {model!r} (HTTP 404){detail} "
            "Check the model name and the base URL.",
            **common,
        )
    if status == 429 and "insufficient_quota" in (code or "", kind or ""):
        return RateLimitError(
            f"{label} says the account is out of credit (HTTP 429){detail}",
            retryable=False,
            **common,
        )
    if status == 429:
        return RateLimitError(
            f"{label} is limiting how fast requests may be sent (HTTP 429){detail}",
            retry_after=retry_after,
            **common,
        )
    if status in (400, 413, 422):
        if looks_like_context_overflow(message) or looks_like_context_overflow(code or ""):
            return ContextOverflowError(
                f"The conversation is too long for {model} (HTTP {status}){detail}", **common
            )
        return InvalidRequestError(f"{label} refused the request (HTTP {status}){detail}", **common)
    if status == 408:
        return ProviderTimeoutError(f"{label} timed out (HTTP 408){detail}", **common)
    if status in (502, 503, 504, 529):
        return OverloadedError(
            f"{label} is overloaded or unavailable (HTTP {status}){detail}",
            retry_after=retry_after,
            **common,
        )
    if status == 409 or status >= 500:
        return ModelResponseFailed(
            f"{label} had a server error (HTTP {status}){detail}",
            retry_after=retry_after,
            retryable=True,
            **common,
        )
    return InvalidRequestError(f"{label} answered with HTTP {status}{detail}", **common)


def _error_fields(payload: Any) -> tuple[str, str | None, str | None]:
    """(message, code, type) from an error body in any of the usual shapes:
    `{"error": {"message", "code", "type"}}`, `{"error": "text"}`, `{"detail": ...}`."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, str):
        return error, None, None
    if not isinstance(error, dict):
        return "", None, None
    message = error.get("message") or error.get("detail") or ""
    code, kind = error.get("code"), error.get("type") or error.get("status")
    return str(message), None if code is None else str(code), None if kind is None else str(kind)


_HTML = re.compile(r"<\s*(!doctype\s+html|html|head|body)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(
    r"<script.*?</script\s*>|<style.*?</style\s*>|<[^>]+>", re.IGNORECASE | re.DOTALL
)


def _plain_text(text: str, limit: int = 300) -> str:
    """A non-JSON error body in a few words: an HTML page (a proxy's or a load
    balancer's) by its title, or its text without tags."""
    if _HTML.search(text):
        title = _TITLE.search(text)
        text = title.group(1) if title and title.group(1).strip() else _TAGS.sub(" ", text)
        text = f"an HTML page ({' '.join(html.unescape(text).split())[:limit]})"
    return " ".join(text.split())[:limit]


def error_from_http(
    status: int,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    label: str,
    provider: str,
    model: str,
    base_url: str = "",
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """The typed error for an HTTP error reply; keys are redacted from the provider's message."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        message, code, kind = _error_fields(json.loads(text))
    except ValueError:
        message, code, kind = _plain_text(text), None, None
    return error_for_status(
        status,
        redact(message, secrets).strip(),
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        code=code,
        kind=kind,
        retry_after=parse_retry_after(headers or {}),
    )


def error_from_payload(
    payload: Any, *, label: str, provider: str, model: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """The typed error for an error object sent inside a 200 stream."""
    message, code, kind = _error_fields(payload)
    message = redact(message, secrets).strip()
    if code and code.isdigit() and int(code) >= 400:
        return error_for_status(
            int(code), message, label=label, provider=provider, model=model, code=code, kind=kind
        )
    common: dict[str, Any] = {"provider": provider, "code": code}
    message = message or "no details given"
    if "insufficient_quota" in (code or "", kind or ""):
        return RateLimitError(
            f"{label} says the account is out of credit: {message}", retryable=False, **common
        )
    if looks_like_context_overflow(message) or looks_like_context_overflow(code or ""):
        return ContextOverflowError(
            f"The conversation is too long for {model}: {message}", **common
        )
    return ModelResponseFailed(f"{label} reported an error during the reply: {message}", **common)
