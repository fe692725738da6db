"""One turn of the chat model and its tools (`AgentCore.turn`): iterate it for what the
reply streams (answer text, typed reasoning, tool statuses, in order), then read the
turn's `messages` and its `outcome` (`TurnOutcome`).

When the model asks for tools they run (concurrently within a round, each with its
timeout), a `ToolStatus` is yielded while they run, the assistant's calls and the tool
results join the turn, and the model is called again: at most `max_tool_rounds`
rounds, then once more with `tool_choice="none"` for a final answer. A model offered no
tools may still get a tool's result: `app_tool_calls` are run before it answers (the
screenshot a question about the screen needs, `agent.looking`). A call is tried again
without tools if the model rejects them, and trimmed harder if the prompt overflowed
(never after output was streamed). A reply the guard stopped inside a sentence is
followed by a `ReplyCut`; a reply with no words is asked for once more, then answered
with a short fallback line, so the user never waits on silence.

The turn records nothing. However it ends (finished, failed, cut short, closed) its
`messages` are then complete, for the owner of the conversation to record
(`app.agent.recording`); `on_end` is told at that moment.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.agent.commit import TurnCommit
from app.agent.masking import mask_message
from app.agent.model_call import CallOutcome, ModelCallStream
from app.agent.outputs import SentenceBreak, ThinkingDelta, ToolStatus
from app.agent.reply_guard import ReplyCut, ReplyGuard, fallback_reply, has_words, nudged
from app.agent.streams import OutcomeStream
from app.agent.tool_budget import ToolBudget
from app.llm import Msg, Role, TextBlock, ToolChoice, ToolUseBlock, is_context_overflow
from app.llm.transform import NO_RESULT

if TYPE_CHECKING:
    from app.agent.core import AgentCore

log = logging.getLogger(__name__)

__all__ = ["CANCELLED_TOOL", "AgentTurn", "AgentTurnError", "TurnOutcome", "rejects_tools"]

CANCELLED_TOOL = NO_RESULT  # the words a tool call the user cut short is answered with
# How servers say they cannot take tools (llama.cpp builds, older vLLM, Ollama models).
_TOOLS_REJECTED = re.compile(
    r"(does not|doesn't|do not|cannot|can't) support (tools|tool[ _-]?(use|calling|calls)"
    r"|function[ _-]?calling|functions)"
    r"|(tools?|tool[ _-]?(use|calling|choice)|function[ _-]?calling)\W+(is|are) not supported"
    r"|unsupported\W+(parameter\W+)?\W*(tools|tool_choice|functions)"
    r"|unrecognized request argument supplied: tools",
    re.IGNORECASE,
)

TurnItem = str | ThinkingDelta | SentenceBreak | ToolStatus | ReplyCut


def rejects_tools(error: object) -> bool:
    """Whether a provider error says the model or server cannot take tools."""
    return bool(_TOOLS_REJECTED.search(str(error)))


class AgentTurnError(Exception):
    """The model could not answer; the message is the provider's complaint in words,
    `cause` the typed error behind it (a `ProviderError`), when there was one."""

    def __init__(self, words: str, *, cause: BaseException | None = None) -> None:
        super().__init__(words)
        self.cause = cause


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a turn went (what is known so far, while it runs). Stamps are perf_counter().

    `unsaved` and `save_problem` are the recording's: messages and changes not written
    to history yet (a full disk) and why, in words; a turn that was not recorded (yet)
    has none."""

    request_sent: float | None = None
    first_token: float | None = None
    finished: float | None = None
    text: str = ""  # the answer's words, as streamed
    interrupted: bool = False
    error: str | None = None  # what went wrong, in words (masked)
    cause: BaseException | None = None  # the typed error behind it
    tool_rounds: int = 0
    model_calls: int = 0
    unsaved: int = 0
    save_problem: str | None = None


class AgentTurn(OutcomeStream[TurnItem]):
    """The reply to `user` after `history` (read, never written). A held `commit` (a
    speculative reply) keeps any tool from running until it is confirmed."""

    def __init__(
        self,
        core: AgentCore,
        history: Sequence[Msg],
        user: Msg,
        *,
        commit: TurnCommit | None = None,
        on_end: Callable[[AgentTurn], None] | None = None,
    ) -> None:
        self.core = core
        # The conversation the turn belongs to, whatever the agent moves on to meanwhile.
        self.conf_uid, self.history_uid = core.conf_uid, core.history_uid
        self._history = history
        self._user = user
        self._commit = commit
        self._on_end = on_end
        self._messages: list[Msg] = []
        self._calls: list[ModelCallStream] = []
        self._pending: list[ToolUseBlock] = []  # tool calls asked for, not answered yet
        self._parts: list[str] = []  # the answer's words of the calls that completed
        self._note = ""  # the long-term memory's note for this turn
        self._tool_rounds = 0
        self._budget = ToolBudget(core.max_tool_calls_per_round, core.max_tool_calls)
        self._interrupted = False
        self._error: str | None = None
        self._cause: BaseException | None = None
        self._text: str | None = None
        self._finished: float | None = None

    # ----- what the turn gives ------------------------------------------------------
    @property
    def messages(self) -> list[Msg]:
        """The turn as it is to be recorded: the user's message, then the calls, tool
        results and the reply, masked (complete once the turn ended)."""
        return list(self._messages)

    @property
    def outcome(self) -> TurnOutcome:
        calls = [call.outcome for call in self._calls]
        return TurnOutcome(
            request_sent=calls[0].request_sent if calls else None,
            first_token=next((c.first_token for c in calls if c.first_token), None),
            finished=self._finished,
            text=self._text if self._text is not None else self._said(),
            interrupted=self._interrupted,
            error=self._error,
            cause=self._cause,
            tool_rounds=self._tool_rounds,
            model_calls=len(calls),
        )

    # ----- the turn -----------------------------------------------------------------
    async def _items(self) -> AsyncGenerator[TurnItem, None]:
        core = self.core
        user = mask_message(self._user, core.redactor)
        self._hold(user)
        self._note = core.recall(user.text, self.history_uid, len(self._history))
        turn = self._messages = [user]
        asked_again = False
        try:
            await core.describe_images(user, question=user.text)
            calls = core.app_tool_calls(user) if core.app_tool_calls else []
            if calls and core.tools is not None and not core.offered_tools():
                turn.append(Msg(role=Role.ASSISTANT, content=list(calls)))
                calls = self._budget.take(calls)  # those over a limit answered, not run
                self._pending = calls
                for status in self._statuses(calls):
                    yield status
                turn.extend(await self._run_tools(calls, user.text))
            while True:
                final_round = self._tool_rounds >= core.max_tool_rounds or self._budget.spent
                answer = self._answer(final_round, nudge=asked_again)
                async with contextlib.aclosing(answer):  # closed early, the model stops
                    async for token in answer:
                        yield token
                call = self._calls[-1].outcome
                if call.message is not None:
                    self._parts.append(call.said)
                if call.cut is not None:
                    yield call.cut
                if call.cancelled:
                    self._interrupted = True
                    break
                if call.error is not None or call.message is None:
                    self._error = str(call.error or "The reply ended without a result.")
                    self._cause = call.error
                    break
                reply = call.message
                calls = reply.tool_calls if core.offered_tools() and not final_round else []
                if not calls:
                    if not has_words(reply.text):
                        if not asked_again:
                            log.info("the reply had no words (%r): asking once more", reply.text)
                            asked_again = True
                            continue
                        fallback = fallback_reply(user.text)
                        yield fallback
                        self._parts.append(fallback)
                        reply = Msg.assistant(fallback, metadata={"fallback": True})
                    if reply.tool_calls:  # asked not to, yet it did: no results will follow
                        reply.content = [b for b in reply.blocks if not isinstance(b, ToolUseBlock)]
                    turn.append(reply)
                    break
                turn.append(reply)
                calls = self._budget.take(calls)  # those over a limit answered, not run
                self._pending = calls
                for status in self._statuses(calls):
                    yield status
                if self._commit is not None:
                    await self._commit.confirmed()  # a tool's effects cannot be taken back
                turn.extend(await self._run_tools(calls, user.text))
                self._tool_rounds += 1
        except GeneratorExit:
            self._interrupted = True
            raise
        except BaseException as exc:
            # Cancellation or a bug: note what happened, then let it propagate.
            self._interrupted = True
            if isinstance(exc, Exception):
                self._error, self._cause = f"{type(exc).__name__}: {exc}", exc
            raise
        finally:
            self._finish()
        if self._error is not None:
            raise AgentTurnError(self._error, cause=self._cause) from self._cause

    async def _answer(
        self, final_round: bool, *, nudge: bool
    ) -> AsyncGenerator[str | ThinkingDelta | SentenceBreak, None]:
        """One model call, tried again without tools if the model rejects them and once
        trimmed harder if the prompt overflowed (never after output was streamed);
        `nudge` reminds the model to answer in words (its first answer had none)."""
        core = self.core
        shrink = retried_tools = False
        while True:
            tools = core.offered_tools()
            choice: ToolChoice | None = "none" if final_round and tools else None
            request = core.build_request(
                self._history, self._messages, tools=tools, tool_choice=choice, shrink=shrink,
                note=self._note,
            )
            if nudge:
                request = nudged(request)
            call = core.call_model(request, ReplyGuard(core.max_sentences))
            self._calls.append(call)
            async with contextlib.aclosing(call):
                async for token in call:
                    yield token
            error = call.outcome.error
            if error is None or call.outcome.emitted:
                return
            if tools and not retried_tools and rejects_tools(error):
                core.refuse_tools(error)
                retried_tools = True
                continue
            if not shrink and is_context_overflow(error):
                log.warning("the prompt was too long for %s; trimming and trying again", core.model)
                shrink = True
                continue
            return

    def _hold(self, user: Msg) -> None:
        """The user's message kept until the turn is recorded (`app.agent.held_words`);
        a speculative reply's only once it is confirmed (a discarded one leaves none)."""
        held = self.core.held
        if held is None:
            return
        conf_uid, history_uid = self.conf_uid, self.history_uid
        if self._commit is None or not self._commit.held:
            held.hold(conf_uid, history_uid, user)
        else:
            self._commit.on_confirm = lambda: held.hold(conf_uid, history_uid, user)

    def _statuses(self, calls: list[ToolUseBlock]) -> list[ToolStatus]:
        """What the user sees of a round's calls: each one run; those not run are
        counted in the log (the model reads why in their results)."""
        refused = [call.name for call in calls if call.refused is not None]
        if refused:
            log.info("%d tool calls not run (cut off, or over the limits): %s",
                     len(refused), ", ".join(refused[:8]))
        return [ToolStatus(c.name, f"[🔧 {c.name}]") for c in calls if c.refused is None]

    async def _run_tools(self, calls: list[ToolUseBlock], question: str) -> list[Msg]:
        results = await self.core.run_tools(
            calls, [*self._history, *self._messages], question, conversation=self.history_uid
        )
        self._pending = []
        return results

    def _last_call(self) -> CallOutcome:
        return self._calls[-1].outcome if self._calls else CallOutcome()

    def _said(self) -> str:
        """The answer's words so far: those of the calls that completed, and what the
        last one streamed if it did not."""
        last = self._last_call()
        return "".join(self._parts if last.message is not None else [*self._parts, last.said])

    def _finish(self) -> None:
        """The turn's messages as they are to be recorded, however it ended."""
        core, turn = self.core, self._messages
        self._finished = time.perf_counter()
        if self._error:
            self._error = core.redactor(self._error)
        self._text = self._said()
        last = self._last_call()
        answered = {r.tool_use_id for m in turn for r in m.tool_results}
        for tool_call in self._pending:
            if tool_call.id not in answered:
                turn.append(
                    Msg.tool_result(
                        tool_call.id, CANCELLED_TOOL, is_error=True, name=tool_call.name
                    )
                )
        said = last.said if last.message is None else ""
        # A failed turn keeps what was said and streamed, never an empty reply: the
        # next request would carry it, and a list would show a blank answer.
        if turn[-1].role != Role.ASSISTANT and (said.strip() or not self._error):
            turn.append(Msg.assistant(said))
        final = turn[-1]
        if self._interrupted:
            final.metadata["interrupted"] = True
        if self._error:
            final.metadata["error"] = self._error
        if final.role == Role.ASSISTANT and not final.blocks:
            final.content = [TextBlock(text="")]
        turn[:] = [mask_message(msg, core.redactor) for msg in turn]
        if self._on_end is not None:
            self._on_end(self)
