"""The error a failed stream carries is a `ProviderStreamError` that keeps its cause:
the typed class (rate limit, overload, connection, ...) still matches with `isinstance`
and `except`, and whether output was already streamed travels with it."""

from __future__ import annotations

import pickle

import pytest

from app import llm
from app.llm import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    LLMRequest,
    ModelNotInstalledError,
    ModelResponseFailed,
    Msg,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    ValidationError,
    create_provider_client,
)
from app.llm.events import EventEmitter
from tests.llm_servers import Reply, ScriptedChatServer, assert_well_formed

CAUSES = [
    AuthenticationError,
    RateLimitError,
    OverloadedError,
    ContextOverflowError,
    InvalidRequestError,
    ProviderConnectionError,
    ProviderTimeoutError,
    ModelResponseFailed,
    ModelNotInstalledError,
    ValidationError,
]


def test_it_is_exported_from_app_llm() -> None:
    assert "ProviderStreamError" in llm.__all__
    assert issubclass(ProviderStreamError, ProviderError)


@pytest.mark.parametrize("cause_type", CAUSES, ids=lambda c: c.__name__)
def test_a_failed_event_carries_a_stream_error_of_its_cause_class(cause_type) -> None:
    cause = cause_type("It broke.", provider="p", status_code=503, code="c", retry_after=2.0)
    event = EventEmitter("p", "m").failed(cause)
    error = event.error
    assert isinstance(error, ProviderStreamError)
    assert isinstance(error, cause_type)
    assert error.cause is cause
    assert str(error) == "It broke."
    assert (error.provider, error.status_code, error.code) == ("p", 503, "c")
    assert error.retry_after == 2.0
    assert error.retryable is cause.retryable
    with pytest.raises(cause_type):
        raise error


def test_semantic_output_emitted_is_on_the_error_as_on_the_event() -> None:
    emitter = EventEmitter("p", "m")
    block = llm.BlockInfo(0, "b0", "text")
    emitter.delta(block, "text", "Hi", "Hi")
    event = emitter.failed(OverloadedError("Busy."))
    assert event.semantic_output_emitted is True
    assert event.error.semantic_output_emitted is True
    quiet = EventEmitter("p", "m").failed(OverloadedError("Busy."))
    assert quiet.error.semantic_output_emitted is False


def test_an_error_of_another_class_keeps_it_in_cause() -> None:
    class QuotaError(RateLimitError):
        pass

    cause = QuotaError("Out of quota.", retryable=False)
    error = ProviderStreamError.of(cause, semantic_output_emitted=False)
    assert isinstance(error, RateLimitError)
    assert isinstance(error.cause, QuotaError)
    assert error.retryable is False


def test_wrapping_a_stream_error_again_does_not_nest_it() -> None:
    first = ProviderStreamError.of(RateLimitError("Slow."), semantic_output_emitted=False)
    assert ProviderStreamError.of(first, semantic_output_emitted=False) is first
    later = ProviderStreamError.of(first, semantic_output_emitted=True)
    assert later.cause is first.cause
    assert later.semantic_output_emitted


def test_it_survives_pickling() -> None:
    error = ProviderStreamError.of(
        RateLimitError("Slow.", retry_after=3.0), semantic_output_emitted=True
    )
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, RateLimitError)
    assert copy.retry_after == 3.0
    assert copy.semantic_output_emitted


async def test_a_real_rate_limit_over_http_is_both_and_complete_raises_it() -> None:
    body = {"error": {"message": "Slow down", "type": "rate_limit_error"}}
    with ScriptedChatServer([Reply.error(429, body, {"retry-after": "90"})]) as server:
        client = create_provider_client(
            "openai-compatible/m", base_url=server.base_url, api_style="chat"
        )
        request = LLMRequest(model="openai-compatible/m", messages=[Msg.user("hi")], stream=True)
        events = [event async for event in client.stream(request)]
        assert_well_formed(events)
        error = events[-1].error
        assert isinstance(error, ProviderStreamError) and isinstance(error, RateLimitError)
        assert error.retry_after == 90.0
        with pytest.raises(RateLimitError) as raised:
            await client.complete(request.model_copy(update={"stream": False}))
        assert isinstance(raised.value, ProviderStreamError)
        await client.aclose()
