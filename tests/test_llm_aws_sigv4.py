"""SigV4 signing (`app.llm.aws.sign_request`, botocore's signer) against AWS's published
Signature Version 4 test suite: each request of the suite, signed with the suite's
credentials at its time, gets exactly the `Authorization` header AWS publishes.

The vectors are the suite's own (docs.aws.amazon.com, "Signature Version 4 test
suite"; credentials AKIDEXAMPLE, region us-east-1, service "service", 2015-08-30
12:36:00 UTC). Left out: `get-space` and `get-utf8`, whose raw paths the suite encodes
once as S3 does, while every other service (Bedrock among them) wants the path encoded
twice — that rule has its own test below; and the two `x-www-form-urlencoded-parameters`
files, whose published header list and signature disagree with each other.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from botocore.credentials import ReadOnlyCredentials

from app.llm.aws import sign_request

WHEN = datetime(2015, 8, 30, 12, 36, 0, tzinfo=UTC)
CREDENTIALS = ReadOnlyCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None)
STS_TOKEN = (
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmx"
    "fpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0K"
    "PkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZb"
    "qBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
)
UNRESERVED = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
H = "host;x-amz-date"
H1 = "host;my-header1;x-amz-date"

# (name, method, path and query, extra headers, body, signed headers, signature)
VECTORS = [
    (
        "get-vanilla",
        "GET",
        "/",
        [],
        b"",
        H,
        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    ),
    (
        "get-vanilla-empty-query-key",
        "GET",
        "/?Param1=value1",
        [],
        b"",
        H,
        "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb",
    ),
    (
        "get-vanilla-query-order-key",
        "GET",
        "/?Param1=value2&Param1=Value1",
        [],
        b"",
        H,
        "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1",
    ),
    (
        "get-vanilla-query-order-key-case",
        "GET",
        "/?Param2=value2&Param1=value1",
        [],
        b"",
        H,
        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
    ),
    (
        "get-vanilla-query-order-value",
        "GET",
        "/?Param1=value2&Param1=value1",
        [],
        b"",
        H,
        "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694",
    ),
    (
        "get-vanilla-query-unreserved",
        "GET",
        f"/?{UNRESERVED}={UNRESERVED}",
        [],
        b"",
        H,
        "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
    ),
    (
        "get-vanilla-utf8-query",
        "GET",
        "/?\u1234=bar",
        [],
        b"",
        H,
        "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04",
    ),
    (
        "get-unreserved",
        "GET",
        f"/{UNRESERVED}",
        [],
        b"",
        H,
        "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
    ),
    (
        "get-slashes",
        "GET",
        "//example//",
        [],
        b"",
        H,
        "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84",
    ),
    (
        "get-slash-pointless-dot",
        "GET",
        "/./example",
        [],
        b"",
        H,
        "ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5",
    ),
    (
        "get-relative-relative",
        "GET",
        "/example1/example2/../..",
        [],
        b"",
        H,
        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    ),
    (
        "get-header-key-duplicate",
        "GET",
        "/",
        [("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")],
        b"",
        H1,
        "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
    ),
    (
        "get-header-value-order",
        "GET",
        "/",
        [("My-Header1", v) for v in ("value4", "value1", "value3", "value2")],
        b"",
        H1,
        "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01",
    ),
    (
        "get-header-value-trim",
        "GET",
        "/",
        [("My-Header1", " value1"), ("My-Header2", '"a   b   c"')],
        b"",
        "host;my-header1;my-header2;x-amz-date",
        "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
    ),
    (
        "post-vanilla",
        "POST",
        "/",
        [],
        b"",
        H,
        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
    ),
    (
        "post-vanilla-query",
        "POST",
        "/?Param1=value1",
        [],
        b"",
        H,
        "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
    ),
    (
        "post-header-key-sort",
        "POST",
        "/",
        [("My-Header1", "value1")],
        b"",
        H1,
        "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c",
    ),
    (
        "post-header-value-case",
        "POST",
        "/",
        [("My-Header1", "VALUE1")],
        b"",
        H1,
        "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
    ),
    (
        "post-x-www-form-urlencoded",
        "POST",
        "/",
        [("Content-Type", "application/x-www-form-urlencoded")],
        b"Param1=value1",
        "content-type;host;x-amz-date",
        "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
    ),
]
SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"


def _request(
    method: str, target: str, headers: list[tuple[str, str]], body: bytes
) -> httpx.Request:
    all_headers = [("Host", "example.amazonaws.com"), *headers, ("X-Amz-Date", "20150830T123600Z")]
    return httpx.Request(
        method, f"https://example.amazonaws.com{target}", headers=all_headers, content=body
    )


@pytest.mark.parametrize(
    ("method", "target", "headers", "body", "signed", "signature"),
    [pytest.param(*v[1:], id=v[0]) for v in VECTORS],
)
def test_a_suite_request_gets_the_published_authorization(
    method, target, headers, body, signed, signature
) -> None:
    request = _request(method, target, headers, body)
    sign_request(request, CREDENTIALS, region="us-east-1", service="service", now=WHEN)
    assert request.headers["authorization"] == (
        f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders={signed}, Signature={signature}"
    )
    assert request.headers["x-amz-date"] == "20150830T123600Z"


def test_the_session_token_vector_signs_the_token_header() -> None:
    request = _request("POST", "/", [], b"")
    credentials = ReadOnlyCredentials(CREDENTIALS.access_key, CREDENTIALS.secret_key, STS_TOKEN)
    sign_request(request, credentials, region="us-east-1", service="service", now=WHEN)
    assert request.headers["authorization"] == (
        f"AWS4-HMAC-SHA256 Credential={SCOPE}, "
        "SignedHeaders=host;x-amz-date;x-amz-security-token, "
        "Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
    )
    assert request.headers["x-amz-security-token"] == STS_TOKEN


def test_a_bedrock_path_is_encoded_once_on_the_wire_and_twice_when_signed() -> None:
    """AWS: "Each path segment must be URI-encoded twice (except for Amazon S3)". A
    model id's `:` travels as %3A; signing as if it were a literal ':' (or %3A) gives
    another signature, which Bedrock refuses."""
    model_path = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    right = _request("POST", model_path, [], b"{}")
    sign_request(right, CREDENTIALS, region="us-east-1", service="bedrock", now=WHEN)
    assert right.url.raw_path == model_path.encode()
    # The same signature as a by-hand canonical request with the path encoded twice.
    import hashlib
    import hmac

    canonical = "\n".join(
        [
            "POST",
            "/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse",
            "",
            "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n",
            "host;x-amz-date",
            hashlib.sha256(b"{}").hexdigest(),
        ]
    )
    scope = "20150830/us-east-1/bedrock/aws4_request"
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    to_sign = f"AWS4-HMAC-SHA256\n20150830T123600Z\n{scope}\n{digest}"
    key = f"AWS4{CREDENTIALS.secret_key}".encode()
    for part in ("20150830", "us-east-1", "bedrock", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    assert right.headers["authorization"].endswith(f"Signature={expected}")


def test_headers_a_proxy_may_change_are_not_signed() -> None:
    request = _request(
        "POST",
        "/",
        [("User-Agent", "x"), ("Accept-Encoding", "gzip"), ("Connection", "keep-alive")],
        b"{}",
    )
    sign_request(request, CREDENTIALS, region="us-east-1", service="bedrock", now=WHEN)
    assert "SignedHeaders=host;x-amz-date," in request.headers["authorization"]


def test_signing_again_replaces_the_old_signature() -> None:
    request = _request("POST", "/", [], b"{}")
    sign_request(request, CREDENTIALS, region="us-east-1", service="bedrock", now=WHEN)
    first = request.headers["authorization"]
    sign_request(request, CREDENTIALS, region="us-east-1", service="bedrock", now=WHEN)
    assert request.headers.get_list("authorization") == [first]
