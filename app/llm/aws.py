"""Reaching AWS for the Bedrock wire: the region, credentials from the standard sources
and SigV4 request signing, all by botocore (AWS's own library).

Credentials come the way the AWS CLI finds them: the environment (`AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), the shared credentials and config files
(`~/.aws/credentials`, `~/.aws/config`, their `AWS_SHARED_CREDENTIALS_FILE` and
`AWS_CONFIG_FILE`), a profile (from the settings or `AWS_PROFILE`) with its SSO login,
role or `credential_process`. The EC2 instance-metadata service is not asked: a desktop
app without credentials says so at once instead of waiting on a network address.

Secrets never leave this module in words: errors name the source, never a value, and
the values are handed to the client only to be masked.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any

import httpx

from app.llm.errors import AuthenticationError, ValidationError, redact

__all__ = [
    "AwsSigner",
    "SigV4Auth",
    "regional_url",
    "resolve_region",
    "sign_request",
]

SERVICE = "bedrock"
# Headers a proxy or the HTTP layer may change or add on the way: not signed.
_UNSIGNED = frozenset(
    {
        "authorization",
        "connection",
        "accept-encoding",
        "content-length",
        "expect",
        "transfer-encoding",
        "user-agent",
        "x-amzn-trace-id",
    }
)
_NO_CREDENTIALS = (
    "Amazon Bedrock needs AWS credentials and none were found. Set AWS_ACCESS_KEY_ID "
    "and AWS_SECRET_ACCESS_KEY, add them to ~/.aws/credentials, choose a profile "
    "(chat.aws_profile or AWS_PROFILE), or enter a Bedrock API key in the settings "
    "(or AWS_BEARER_TOKEN_BEDROCK)."
)


def region_missing(profile: str | None = None) -> ValidationError:
    where = f" (the profile {profile!r} names none)" if profile else ""
    return ValidationError(
        f"Amazon Bedrock needs an AWS region{where}: set chat.aws_region in the settings "
        "or the AWS_REGION environment variable, for example us-east-1.",
        provider=SERVICE,
    )


def _session(profile: str | None) -> Any:
    from botocore.session import Session

    return Session(profile=profile or None)


def resolve_region(region: str | None, profile: str | None = None) -> str | None:
    """The region: the given one, else `AWS_REGION`, `AWS_DEFAULT_REGION`, then the
    profile's `region` in ~/.aws/config. None when none says."""
    for value in (region, os.environ.get("AWS_REGION"), os.environ.get("AWS_DEFAULT_REGION")):
        if value and value.strip():
            return value.strip()
    from botocore.exceptions import BotoCoreError

    try:
        found = _session(profile).get_config_variable("region")
    except BotoCoreError:
        return None  # a missing profile is reported with the credentials
    text = str(found).strip() if found else ""
    return text or None


def regional_url(region: str) -> str:
    """Bedrock's runtime endpoint in `region` (China's regions have their own domain)."""
    domain = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://bedrock-runtime.{region}.{domain}"


def sign_request(
    request: httpx.Request,
    credentials: Any,
    *,
    region: str,
    service: str,
    now: datetime | None = None,
) -> None:
    """Sign `request` in place with SigV4 (botocore's signer): `X-Amz-Date`, the session
    token if any, and `Authorization`. Every header is signed but those a proxy may
    change; the path is encoded once more in the canonical request, as AWS wants for
    every service but S3 (a model id's `:` is `%3A` on the wire, `%253A` when signed).

    botocore's public steps are used rather than its `add_auth`, which logs the
    canonical request (with the session token) at debug level; `now` is the signing
    time (the clock's by default)."""
    from botocore.auth import SIGV4_TIMESTAMP
    from botocore.auth import SigV4Auth as BotocoreSigV4
    from botocore.awsrequest import AWSRequest

    stamp = (now or datetime.now(UTC)).strftime(SIGV4_TIMESTAMP)
    aws = AWSRequest(method=request.method, url=str(request.url), data=request.content)
    for name, value in request.headers.multi_items():
        if name.lower() not in _UNSIGNED | {"x-amz-date", "x-amz-security-token"}:
            aws.headers[name] = value  # repeated names stay repeated, as signed
    aws.headers["X-Amz-Date"] = stamp
    if credentials.token:
        aws.headers["X-Amz-Security-Token"] = credentials.token
    aws.context["timestamp"] = stamp
    signer = BotocoreSigV4(credentials, service, region)
    signature = signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)
    signed = signer.signed_headers(signer.headers_to_sign(aws))
    request.headers["X-Amz-Date"] = stamp
    if credentials.token:
        request.headers["X-Amz-Security-Token"] = credentials.token
    request.headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={signer.scope(aws)}, SignedHeaders={signed}, "
        f"Signature={signature}"
    )


class SigV4Auth(httpx.Auth):
    """An `httpx.Auth` that signs each request (and each retry) with `credentials`."""

    requires_request_body = True

    def __init__(self, credentials: Any, region: str, service: str = SERVICE) -> None:
        self._credentials = credentials
        self._region = region
        self._service = service

    def __repr__(self) -> str:
        return f"SigV4Auth(region={self._region!r}, service={self._service!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        sign_request(request, self._credentials, region=self._region, service=self._service)
        yield request


class AwsSigner:
    """Signs Bedrock requests with the standard AWS credentials (a `RequestSigner`).

    Credentials are looked up on the first request, off the event loop (a profile may
    run a program or refresh an SSO login), and kept: botocore refreshes temporary ones
    before they expire.
    """

    def __init__(self, *, region: str | None, profile: str | None = None) -> None:
        self.region = region
        self.profile = profile or None
        self._lock = threading.Lock()
        self._provider: Any = None

    def __repr__(self) -> str:
        return f"AwsSigner(region={self.region!r}, profile={self.profile!r})"

    async def authorizer(self) -> tuple[httpx.Auth, tuple[str, ...]]:
        if not self.region:
            raise region_missing(self.profile)
        frozen = await asyncio.to_thread(self._frozen_credentials)
        secrets = tuple(s for s in (frozen.secret_key, frozen.token, frozen.access_key) if s)
        return SigV4Auth(frozen, self.region), secrets

    def _frozen_credentials(self) -> Any:
        from botocore import exceptions as aws

        with self._lock:
            try:
                if self._provider is None:
                    resolver = _session(self.profile).get_component("credential_provider")
                    resolver.remove("iam-role")  # the EC2 metadata service: see above
                    self._provider = resolver.load_credentials()
                if self._provider is None:
                    raise AuthenticationError(_NO_CREDENTIALS, provider=SERVICE)
                return self._provider.get_frozen_credentials()
            except aws.ProfileNotFound:
                name = self.profile or os.environ.get("AWS_PROFILE", "")
                raise AuthenticationError(
                    f"The AWS profile {name!r} is in neither ~/.aws/config nor "
                    "~/.aws/credentials. Check chat.aws_profile (or AWS_PROFILE).",
                    provider=SERVICE,
                ) from None
            except aws.BotoCoreError as exc:
                self._provider = None  # try the sources again next time
                raise AuthenticationError(
                    f"The AWS credentials could not be loaded: {redact(str(exc))}",
                    provider=SERVICE,
                ) from None
