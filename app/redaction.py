"""Masking secrets in text: anything shaped like an API key or a token, and the exact
secret values we were given. Error messages from services, every log record and
everything a model or a tool says pass through here, so one list of key shapes covers
every layer. `StreamMasker` does the same for text that arrives in pieces.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

import regex

MASK = "***"
# A shorter value would mask ordinary words wherever it occurs.
MIN_SECRET_LENGTH = 4

# Where a pattern has a group, the group (a `Bearer `, `key=` or `"api_key": ` prefix)
# stays and only the value after it is masked.
KEY_SHAPES: tuple[re.Pattern[str], ...] = (
    # OpenAI `sk-…`/`sk-proj-…`, Anthropic `sk-ant-…`, DeepSeek, OpenRouter `sk-or-…`,
    # also the half-masked form a service echoes back (`sk-proj-****abcd`); a dot ends
    # it unless more of the key follows.
    re.compile(r"(?<![A-Za-z0-9])sk-(?=[A-Za-z0-9_\-*.]{4,})[A-Za-z0-9_\-*.]*[A-Za-z0-9_\-*]"),
    # Groq `gsk_…`, xAI `xai-…`, `sk_…`/`pk-…` style keys.
    re.compile(r"(?<![A-Za-z0-9])(?:sk|gsk|xai|pk)[-_][A-Za-z0-9_\-]{12,}"),
    # Google `AIza…`.
    re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{20,}"),
    # AWS access key ids (long-term `AKIA…`, temporary `ASIA…`).
    re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    # AWS session tokens by their shape (STS tokens start with these base64 prefixes).
    re.compile(
        r"(?<![A-Za-z0-9/+])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE|AQoDYXdzE|AQoEXAMPLE)"
        r"[A-Za-z0-9/+=]{16,}"
    ),
    # AWS secret keys and session tokens where they are named: credentials files,
    # environment lines, JSON from STS, the `X-Amz-Security-Token` header or query.
    re.compile(
        r"(?i)(?<![A-Za-z0-9_])(\"?(?:aws_secret_access_key|secret_?access_?key|aws_session_token|"
        r"session_?token|aws_security_token|x-amz-security-token)\"?\s*[:=]\s*\"?)"
        r"[A-Za-z0-9/+=%]{16,}"
    ),
    # Amazon Bedrock API keys (long-term `ABSK…`, short-term `bedrock-api-key-…`).
    re.compile(r"(?<![A-Za-z0-9])ABSK[A-Za-z0-9+/=]{20,}"),
    re.compile(r"(?<![A-Za-z0-9])bedrock-api-key-[A-Za-z0-9+/=._\-]{20,}"),
    # Bearer tokens (Authorization headers).
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*"),
    # Keys in query parameters (`?key=…`, `&api_key=…`).
    re.compile(r"(?i)([?&](?:key|api_key|apikey|access_token|token)=)[^&\s\"']{6,}"),
    # Keys in JSON fields and headers (`"api_key": "…"`, `x-api-key: …`).
    re.compile(
        r"(?i)(?<![A-Za-z0-9_])(\"?(?:api[_-]?key|x-api-key|x-goog-api-key|x-api-access-key|"
        r"authorization)"
        r"\"?\s*[:=]\s*\"?)[^\s\"',}]{8,}"
    ),
)


def _mask(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.re.groups else None
    return (prefix or "") + MASK


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every given secret and everything shaped like a key replaced by `***`."""
    given = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
    for secret in sorted(given, key=len, reverse=True):  # a longer secret may hold a shorter
        text = text.replace(secret, MASK)
    for pattern in KEY_SHAPES:
        text = pattern.sub(_mask, text)
    return text


class Redactor:
    """The secret values of this run (the keys in the settings), masked together with the
    key shapes in every text passed through it. Made where logging is set up; the log
    filter holds it, and `add` is called as the settings are read."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        for secret in secrets:
            self.add(secret)

    def add(self, value: str | None) -> None:
        """Mask this exact value from now on."""
        if value and len(value) >= MIN_SECRET_LENGTH:
            with self._lock:  # replaced, never changed in place: readers need no lock
                self._secrets = self._secrets | {value}

    @property
    def secrets(self) -> frozenset[str]:
        return self._secrets

    def __call__(self, text: str) -> str:
        return redact(text, self._secrets)


def _shapes_that_may_continue() -> regex.Pattern[str]:
    """Every key shape in one pattern for `regex`'s partial matching, which tells whether
    the end of a text may still grow into a key (kept in step with `KEY_SHAPES`)."""
    parts = []
    for shape in KEY_SHAPES:
        source = shape.pattern
        if source.startswith("(?i)"):  # a flag for the whole of one alternative only
            source = f"(?i:{source[4:]})"
        parts.append(f"(?:{source})")
    return regex.compile("|".join(parts))


_MAY_CONTINUE = _shapes_that_may_continue()
# An unbroken run longer than this is let through in part (no key is this long); what
# is held back never grows without bound.
MAX_HELD_CHARS = 2048


class StreamMasker:
    """Masks text that arrives in pieces (a model's streamed tokens) as the redactor
    masks it whole: a key cut across two pieces is still masked. Only what may still
    grow into a key is held back until a later piece shows what it is (the start of a
    secret, "sk-pro", "Bearer" and the word after it); other words pass at once.
    `flush()` gives the rest when the stream ends."""

    __slots__ = ("_held", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def _safe_end(self, text: str) -> int:
        """Where the text that can be masked now ends: before anything that may still
        grow into a key shape ("Bearer", "sk-pro", "AIz", "?ke") or a secret, and never
        inside one (a cut there would leave its halves unmasked)."""
        end = len(text)
        last = text[-1]
        spans: list[tuple[int, int]] = []
        for secret in self._redactor.secrets:
            at = secret.rfind(last, 0, len(secret) - 1)  # the text may end in its start
            while at >= 0 and not text.endswith(secret[: at + 1]):
                at = secret.rfind(last, 0, at)
            if at >= 0:
                end = min(end, len(text) - at - 1)
            found = text.find(secret)
            while found >= 0:
                spans.append((found, found + len(secret)))
                found = text.find(secret, found + 1)
        for match in _MAY_CONTINUE.finditer(text, partial=True):
            spans.append(match.span())
            if match.end() == len(text):  # a key may be half written, or go on
                end = min(end, match.start())
        moved = True
        while moved:
            moved = False
            for start, stop in spans:
                if start < end < stop:
                    end, moved = start, True
        if end == 0 and len(text) > MAX_HELD_CHARS:
            end = len(text) - MAX_HELD_CHARS // 2
        return end

    def feed(self, piece: str) -> str:
        """The masked text that is settled now (all of it, unless it may end in a key)."""
        if not piece:
            return ""
        text = self._held + piece
        end = self._safe_end(text)
        self._held = text[end:]
        return self._redactor(text[:end]) if end else ""

    def flush(self) -> str:
        """Everything still held, masked: the stream has ended."""
        text, self._held = self._held, ""
        return self._redactor(text) if text else ""
