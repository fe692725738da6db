"""The one pass every wire's messages go through before they are translated (modelled on
pi-mono's `transform-messages`): every tool call answered, no result without its call,
call ids in the form the target accepts, and reasoning the target cannot replay turned
into text or left out. A wire module calls `prepare_messages` once, then only translates.

A custom provider handed to `AgentCore` directly gets the messages as the agent keeps
them; one that speaks a wire of its own can call `prepare_messages` too.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.llm.messages import (
    ContentBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "CALL_ID_RULES",
    "NO_RESULT",
    "PROVIDER_CALL_ID_RULES",
    "CallIdRule",
    "CallIds",
    "call_id_rule",
    "prepare_messages",
]

# What a call left without a result is answered with (the agent records an
# interrupted tool the same way).
NO_RESULT = "Cancelled: the user interrupted before this tool finished."

_ALNUM = string.ascii_letters + string.digits
_HASH_LENGTH = 8  # enough to keep the ids of one conversation apart


@dataclass(frozen=True, slots=True)
class CallIdRule:
    """The tool-call ids a target accepts: made only of the characters in `allowed`,
    from `min_length` to `max_length` of them."""

    allowed: str
    max_length: int
    min_length: int = 1

    def accepts(self, call_id: str) -> bool:
        return self.min_length <= len(call_id) <= self.max_length and all(
            c in self.allowed for c in call_id
        )

    def rewrite(self, original: str, salt: int = 0) -> str:
        """An id this rule accepts, made from `original`: its allowed characters (others
        as `_` where that is allowed), cut to fit, then a hash of the original, so ids
        that differ stay different. `salt` gives another hash for the same original."""
        alphabet = "".join(c for c in _ALNUM if c in self.allowed) or self.allowed
        digest = _digest(f"{salt}:{original}" if salt else original, alphabet)
        filler = "_" if "_" in self.allowed else ""
        cleaned = "".join(c if c in self.allowed else filler for c in original)
        size = min(_HASH_LENGTH, self.max_length)
        head = cleaned[: max(0, self.max_length - size - len(filler))]
        out = f"{head}{filler}{digest[:size]}" if head else digest[:size]
        if len(out) < self.min_length:
            out += digest[size : size + self.min_length - len(out)]
        return out


def _digest(text: str, alphabet: str) -> str:
    """A sha256 of `text` written with `alphabet`: 64 characters, the same every run."""
    number = int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    out: list[str] = []
    for _ in range(64):
        number, digit = divmod(number, len(alphabet))
        out.append(alphabet[digit])
    return "".join(out)


_ID_CHARS = _ALNUM + "_-"

# Call-id rules by wire protocol (`app.llm.wire.<name>`). A wire missing here puts no
# limit on ids: Gemini sends back only the ids it gave, the embedded model none at all.
CALL_ID_RULES: Mapping[str, CallIdRule] = {
    "anthropic": CallIdRule(_ID_CHARS, max_length=64),  # ^[a-zA-Z0-9_-]{1,64}$
    # OpenAI refuses ids over 40 characters; servers that copy its API take these too.
    "openai_chat": CallIdRule(_ID_CHARS, max_length=40),
    "openai_responses": CallIdRule(_ID_CHARS, max_length=64),
    "bedrock": CallIdRule(_ID_CHARS, max_length=64),  # toolUseId: ^[a-zA-Z0-9_-]+$, ≤ 64
}

# Providers stricter than their wire's rule, by provider name; these win.
PROVIDER_CALL_ID_RULES: Mapping[str, CallIdRule] = {
    # Mistral refuses any other id: "must be a-z, A-Z, 0-9, with a length of 9".
    "mistral": CallIdRule(_ALNUM, max_length=9, min_length=9),
}


def call_id_rule(wire: str, provider: str) -> CallIdRule | None:
    """The rule for `provider` speaking `wire`, or None when ids are not limited."""
    return PROVIDER_CALL_ID_RULES.get(provider) or CALL_ID_RULES.get(wire)


class CallIds:
    """Original call ids to ids `rule` accepts, within one request: an original always
    gets the same id (so a call and its result keep matching), two originals never get
    the same one, and an id the rule accepts already is kept."""

    def __init__(self, rule: CallIdRule) -> None:
        self._rule = rule
        self._ids: dict[str, str] = {}
        self._taken: set[str] = set()

    def __call__(self, original: str) -> str:
        known = self._ids.get(original)
        if known is not None:
            return known
        call_id, salt = original, 0
        while not self._rule.accepts(call_id) or call_id in self._taken:
            call_id = self._rule.rewrite(original, salt)
            salt += 1
        self._ids[original] = call_id
        self._taken.add(call_id)
        return call_id


def prepare_messages(messages: Sequence[Msg], *, wire: str, provider: str) -> list[Msg]:
    """`messages` ready for `wire` talking to `provider` (the names in `app.llm.wire`
    and `app.llm.routing`). Messages that need no change are passed on as they are."""
    rule = call_id_rule(wire, provider)
    ids = CallIds(rule) if rule is not None else None
    return [_for_target(msg, provider, ids) for msg in _pair_tool_calls(messages)]


# ------------------------------------------------------------ tool pairing ----


def _no_result(call: ToolUseBlock) -> ToolResultBlock:
    return ToolResultBlock(
        tool_use_id=call.id, content=[TextBlock(text=NO_RESULT)], is_error=True, name=call.name
    )


def _pair_tool_calls(messages: Sequence[Msg]) -> list[Msg]:
    """Every call of an assistant message answered by the results right after it, and
    no result anywhere else: every provider refuses both, and an interrupted turn, a
    crash or an old history file can leave either. A call without its result gets an
    error result; a result without its call (or a second one) is left out."""
    out: list[Msg] = []
    open_calls: dict[str, ToolUseBlock] = {}

    def answer_open_calls() -> None:
        for call in open_calls.values():
            out.append(Msg(role=Role.TOOL, content=[_no_result(call)]))
        open_calls.clear()

    for msg in messages:
        blocks = msg.content if isinstance(msg.content, list) else []
        if not any(isinstance(b, ToolResultBlock) for b in blocks):
            answer_open_calls()
            out.append(msg)
            if msg.role == Role.ASSISTANT:
                open_calls = {call.id: call for call in msg.tool_calls}
            continue
        results: list[ContentBlock] = [
            b
            for b in blocks
            if isinstance(b, ToolResultBlock) and open_calls.pop(b.tool_use_id, None) is not None
        ]
        rest = [b for b in blocks if not isinstance(b, ToolResultBlock)]
        if rest:
            # The message says more than results: the calls it leaves open end here,
            # and the results come first, as every protocol wants them.
            results += [_no_result(call) for call in open_calls.values()]
            open_calls.clear()
        content = results + rest
        unchanged = len(content) == len(blocks)
        if unchanged and all(a is b for a, b in zip(content, blocks, strict=True)):
            out.append(msg)
        elif content:
            out.append(msg.model_copy(update={"content": content}))
    answer_open_calls()
    return out


# --------------------------------------------------- ids and reasoning ----


def _downgraded(block: ThinkingBlock) -> TextBlock | None:
    """Another provider's reasoning: its signature means nothing here, so its words go
    on as text; redacted or empty reasoning is left out."""
    if block.redacted or not block.text.strip():
        return None
    return TextBlock(text=block.text)


def _for_target(msg: Msg, provider: str, ids: CallIds | None) -> Msg:
    if isinstance(msg.content, str):
        return msg
    blocks: list[ContentBlock] = []
    changed = False
    for block in msg.content:
        new: ContentBlock | None = block
        if isinstance(block, ThinkingBlock) and block.provider != provider:
            new = _downgraded(block)
        elif ids is not None and isinstance(block, ToolUseBlock):
            call_id = ids(block.id)
            if call_id != block.id:
                new = block.model_copy(update={"id": call_id})
        elif ids is not None and isinstance(block, ToolResultBlock):
            call_id = ids(block.tool_use_id)
            if call_id != block.tool_use_id:
                new = block.model_copy(update={"tool_use_id": call_id})
        changed = changed or new is not block
        if new is not None:
            blocks.append(new)
    return msg.model_copy(update={"content": blocks}) if changed else msg
