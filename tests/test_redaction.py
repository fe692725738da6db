"""One redaction for every layer: each key shape is masked in a provider error, in a speech
error and in a log record; secret values given to a `Redactor` are masked in the logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from app import logs
from app.llm.errors import error_from_http
from app.redaction import MASK, Redactor, redact
from app.speech.adapters.dashscope_funasr import task_failed_error
from app.speech.adapters.openai_transcribe import error_for_response

# (name, text holding the secret, the secret part that must not survive). Keys are
# written in two pieces so no committed line looks like a key.
SHAPES = [
    ("openai", "Incorrect API key provided: {}.", "sk-" + "0123456789abcdefABCDEFghijklmnop"),
    ("openai project", "key {} was revoked", "sk-" + "proj-Ab12Cd34Ef56Gh78Ij90Kl12"),
    ("openai half-masked", "Incorrect API key provided: {}.", "sk-" + "proj-********abcd"),
    ("anthropic", "invalid x-api-key {}", "sk-" + "ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3"),
    ("google", "API key not valid: {}", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOp"),
    ("groq", "bad key {}", "gsk_" + "a1B2c3D4e5F6g7H8i9J0kLmN"),
    ("xai", "bad key {}", "xai-" + "Q1w2E3r4T5y6U7i8O9p0AsDf"),
    ("bearer", "sent Authorization: Bearer {} twice", "eyJhbGci" + "OiJIUzI1NiJ9.payload.sig"),
    ("key= query", "GET https://example.test/v1/models?key={}&alt=sse", "opaque" + "Value12345"),
    ("api_key= query", "GET https://example.test/v1?x=1&api_key={}", "opaque" + "Value67890"),
    ("json field", 'the body was {{"api_key": "{}"}}', "plain" + "FieldSecret99"),
    ("header field", "headers: x-goog-api-key: {}", "plain" + "HeaderSecret77"),
    ("access key header", "X-Api-Access-Key: {} refused", "volc" + "AccessToken55"),
]


def _llm(text: str) -> str:
    body = json.dumps({"error": {"message": text, "type": "invalid_request_error"}})
    return str(error_from_http(400, body, label="OpenAI", provider="openai", model="gpt-4o"))


def _speech_http(text: str) -> str:
    response = httpx.Response(400, json={"error": {"message": text}})
    return str(error_for_response(response, "api.example.test", "some-other-key-1234"))


def _speech_socket(text: str) -> str:
    return str(task_failed_error({"error_code": "InvalidParameter", "error_message": text}, []))


@pytest.fixture
def log_record(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    path = logs.setup_logging(logging.WARNING, tmp_path / "logs", redactor=Redactor())
    assert path is not None

    def record(text: str) -> str:
        logging.getLogger("companion.test").warning("%s", text)
        for handler in logging.getLogger().handlers:
            handler.flush()
        return path.read_text(encoding="utf-8").splitlines()[-1]

    yield record
    _remove_our_handlers()


def _remove_our_handlers() -> None:
    for handler in list(logging.getLogger().handlers):
        if getattr(handler, "_companion", False):
            logging.getLogger().removeHandler(handler)
            handler.close()


LAYERS = {"llm error": _llm, "speech http error": _speech_http, "speech socket": _speech_socket}


@pytest.mark.parametrize("layer", [*LAYERS, "log record"])
@pytest.mark.parametrize(("shape", "template", "secret"), SHAPES, ids=[s[0] for s in SHAPES])
def test_every_layer_masks_every_key_shape(
    layer: str,
    shape: str,
    template: str,
    secret: str,
    log_record: Callable[[str], str],
) -> None:
    shown = (log_record if layer == "log record" else LAYERS[layer])(template.format(secret))
    assert secret not in shown, shown
    assert MASK in shown
    # Only the key goes: the words around it stay.
    assert template.split("{")[0].strip().split()[0] in shown


def test_the_prefix_of_a_masked_value_stays() -> None:
    assert redact("Bearer abcdefghijklmnop") == "Bearer ***"
    assert redact("https://x.test/v1?key=abcdefgh&alt=sse") == "https://x.test/v1?key=***&alt=sse"
    assert redact('{"api_key": "abcdefghij"}') == '{"api_key": "***"}'


def test_ordinary_words_are_not_masked() -> None:
    text = "Task-1234 failed on disk-usage: the bearer of bad news, sk-1 and AIza alone."
    assert redact(text) == text


def test_given_secrets_are_masked_longest_first() -> None:
    assert redact("pass hunter2hunter2 or hunter2", ["hunter2", "hunter2hunter2"]) == (
        "pass *** or ***"
    )
    assert redact("tiny abc stays", ["abc"]) == "tiny abc stays"  # too short to mask


def test_configured_secrets_are_masked_in_the_logs(tmp_path: Path) -> None:
    redactor = Redactor()
    path = logs.setup_logging(logging.WARNING, tmp_path / "logs", redactor=redactor)
    assert path is not None
    try:
        log = logging.getLogger("companion.test")
        log.warning("before: %s", "hunter2-" + "plain")
        redactor.add("hunter2-" + "plain")  # the settings were read: the keys join
        log.warning("after: %s", "hunter2-" + "plain")
        for handler in logging.getLogger().handlers:
            handler.flush()
        before, after = path.read_text(encoding="utf-8").splitlines()[-2:]
    finally:
        _remove_our_handlers()
    assert "hunter2-plain" in before  # no key shape: unknown until configured
    assert after.endswith("after: ***")


def test_two_redactors_do_not_share_secrets() -> None:
    one, other = Redactor(["secret-one-value"]), Redactor()
    assert one("a secret-one-value") == "a ***"
    assert other("a secret-one-value") == "a secret-one-value"
