"""AWS secrets are masked like every other key: access key ids, secret keys and
session tokens wherever they are named or recognisable, and Bedrock API keys, in
provider errors and in log records."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app import logs
from app.llm.wire.bedrock_stream import map_http_error
from app.redaction import MASK, Redactor, redact

# Written in pieces so no committed line looks like a key.
ACCESS = "AKIA" + "IOSFODNN7EXAMPLE"
TEMPORARY = "ASIA" + "Q3EGUPFSJ7XAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2Vj" + "EHoaCXVzLWVhc3QtMSJGMEQCIEXAMPLEtoken+/=="
OLD_TOKEN = "FwoGZXIvYXdzE" + "BYaDExampleOldStyleSessionToken0123"
BEDROCK_KEY = "ABSK" + "QmVkcm9ja0FQSUtleS1FWEFNUExFMDEyMzQ1Njc4OQ=="
SHORT_KEY = "bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3MuY29tLz9BY3Rpb249"

CASES = [
    ("access key id", "Credential={}/20250101/us-east-1/bedrock/aws4_request", ACCESS),
    ("temporary access key id", "key {} is not valid", TEMPORARY),
    ("credentials file", "aws_secret_access_key = {}", SECRET),
    ("environment line", "AWS_SECRET_ACCESS_KEY={}", SECRET),
    ("sts json", '{{"SecretAccessKey": "{}"}}', SECRET),
    ("session token header", "x-amz-security-token:{}", TOKEN),
    ("session token query", "?X-Amz-Security-Token={}&X-Amz-Date=1", TOKEN),
    ("session token by shape", "the token was {} and more", TOKEN),
    ("older session token", "token {}", OLD_TOKEN),
    ("named session token", "aws_session_token={}", OLD_TOKEN),
    ("bedrock api key", "Authorization {}", BEDROCK_KEY),
    ("short-term bedrock key", "key {} expired", SHORT_KEY),
]


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[c[0] for c in CASES])
def test_the_shape_is_masked_in_text(name, text, secret) -> None:
    out = redact(text.format(secret))
    assert secret not in out and MASK in out


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[c[0] for c in CASES])
def test_the_shape_is_masked_in_a_bedrock_error(name, text, secret) -> None:
    body = json.dumps({"message": text.format(secret)})
    error = map_http_error(
        403,
        body,
        {"x-amzn-ErrorType": "InvalidSignatureException"},
        label="Amazon Bedrock",
        provider="bedrock",
        model="m",
    )
    assert secret not in str(error)


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[c[0] for c in CASES])
def test_the_shape_is_masked_in_a_log_record(tmp_path: Path, name, text, secret) -> None:
    path = logs.setup_logging(logging.WARNING, tmp_path / "logs", redactor=Redactor())
    assert path is not None
    try:
        logging.getLogger("botocore.auth").warning("%s", text.format(secret))
        for handler in logging.getLogger().handlers:
            handler.flush()
        written = path.read_text()
    finally:
        logs.setup_logging(logging.WARNING, None, redactor=Redactor())
    assert secret not in written and MASK in written


def test_ordinary_text_and_hashes_are_left_alone() -> None:
    sha1 = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    text = f"commit {sha1} changed the ACCESS list and the session ended"
    assert redact(text) == text
