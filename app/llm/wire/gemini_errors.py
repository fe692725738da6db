"""Gemini's error bodies (`{"error": {"code", "message", "status", "details"}}`, from an
HTTP reply or inside a stream) as typed errors, with `RetryInfo` delays honoured."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.llm.errors import (
    AuthenticationError,
    ContextOverflowError,
    ModelResponseFailed,
    ProviderError,
    error_for_status,
    parse_retry_after,
    redact,
)

__all__ = ["error_from_body", "map_http_error"]


def _retry_delay(details: list[Any]) -> float | None:
    """Seconds from a `google.rpc.RetryInfo` detail (`"retryDelay": "13s"` or `"34.4s"`)."""
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("rpc.RetryInfo"):
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _reasons(details: list[Any]) -> list[str]:
    return [
        str(d["reason"])
        for d in details
        if isinstance(d, dict)
        and str(d.get("@type", "")).endswith("rpc.ErrorInfo")
        and d.get("reason")
    ]


def error_from_body(
    status: int | None,
    payload: Any,
    headers: Mapping[str, str] | None = None,
    *,
    label: str,
    provider: str,
    model: str,
    base_url: str = "",
    secrets: Sequence[str | None] = (),
) -> ProviderError:
    """The typed error for a Google error object, from an HTTP reply or inside a stream.

    `status` is the HTTP status, or None for an error sent inside a 200 stream (then
    the object's own `code` is used).
    """
    if isinstance(payload, list) and payload:  # non-SSE streams answer with a JSON array
        payload = payload[0]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, str):
        error = {"message": error}
    if not isinstance(error, dict):
        error = {}
    message = redact(str(error.get("message") or "").strip(), secrets)
    raw_details = error.get("details")
    details: list[Any] = raw_details if isinstance(raw_details, list) else []
    status_name = str(error.get("status") or "") or None
    reasons = _reasons(details)
    code = reasons[0] if reasons else status_name
    if status is None and isinstance(error.get("code"), int):
        status = error["code"]
    retry_after = parse_retry_after(headers or {})
    if retry_after is None:
        retry_after = _retry_delay(details)
    common: dict[str, Any] = {"provider": provider, "status_code": status, "code": code}
    shown = message or "no details given"
    if shown[-1] not in ".!?":
        shown += "."
    # Google answers a wrong key with 400 INVALID_ARGUMENT, not 401.
    if any(r.startswith("API_KEY_") for r in reasons) or status_name == "UNAUTHENTICATED":
        return AuthenticationError(
            f"{label} rejected the API key (HTTP {status}): {shown} "
            "Check the Gemini API key in the settings.",
            **common,
        )
    if "exceeds the maximum number of tokens" in message.lower():
        return ContextOverflowError(
            f"The conversation is too long for {model} (HTTP {status}): {shown}", **common
        )
    if status is None or status < 400:
        return ModelResponseFailed(f"{label} reported an error during the reply: {shown}", **common)
    return error_for_status(
        status,
        message,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        code=code,
        kind=status_name,
        retry_after=retry_after,
    )


def map_http_error(
    status: int,
    body: bytes,
    headers: Mapping[str, str],
    *,
    label: str,
    provider: str,
    model: str,
    base_url: str,
    secrets: Sequence[str | None],
) -> ProviderError:
    """The typed error, in words and redacted of `secrets`, for a Gemini HTTP error reply."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        payload: Any = json.loads(text)
    except ValueError:
        # A proxy's HTML page or plain text: its words, squeezed, as the message.
        payload = {"error": {"message": " ".join(text.split())[:300]}}
    return error_from_body(
        status,
        payload,
        headers,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        secrets=secrets,
    )
