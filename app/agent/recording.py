"""Recording a finished turn (`AgentTurn`) in its conversation, once: into the history
list its owner keeps, to the long-term memory and to storage. A reply the user cut off
is recorded as they heard it (`as_heard`), so the model is told on the next turn and
the stored line is never rewritten."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.agent.notes import INTERRUPTED_NOTE
from app.agent.read_ahead import schedule_read_ahead
from app.agent.storage import HistoryNotSaved, write_problem_words
from app.llm import Msg, Role, TextBlock

if TYPE_CHECKING:
    from app.agent.agent_turn import AgentTurn
    from app.agent.commit import TurnCommit
    from app.agent.core import AgentCore

log = logging.getLogger(__name__)

__all__ = ["Saved", "as_heard", "record_turn", "recorder"]


@dataclass(frozen=True, slots=True)
class Saved:
    """How far the history is written after a turn was recorded."""

    unsaved: int = 0  # messages and changes not written yet (a full disk)
    problem: str | None = None  # why not, in words


def as_heard(turn: Sequence[Msg], heard: str) -> list[Msg]:
    """`turn` (the user's message first) as the user heard it: the last reply becomes
    `heard` and a note that it was cut off. What was heard covers the whole turn, so
    the text of earlier rounds (before a tool call) is folded into it; their tool calls
    stay. A turn without a reply is as it was."""
    messages = list(turn)
    replies = [i for i, msg in enumerate(messages) if i and msg.role == Role.ASSISTANT]
    if not replies:
        return messages
    heard = heard.strip()
    for index in replies[:-1]:
        msg = messages[index]
        kept = [b for b in msg.blocks if not isinstance(b, TextBlock)]
        if len(kept) != len(msg.blocks):
            messages[index] = msg.model_copy(update={"content": kept})
    index = replies[-1]
    old = messages[index]
    messages[index] = Msg.assistant(
        f"{heard}\n{INTERRUPTED_NOTE}" if heard else INTERRUPTED_NOTE,
        metadata={**old.metadata, "interrupted": True, "heard": heard},
        timestamp=old.timestamp,
    )
    return messages


def record_turn(
    core: AgentCore, history: list[Msg], turn: AgentTurn, heard: str | None = None
) -> Saved:
    """Add the ended `turn` to `history` (whole, or as far as it was `heard`), hand it to
    the long-term memory and write it to the turn's conversation in storage."""
    messages = turn.messages if heard is None else as_heard(turn.messages, heard)
    start = len(history)
    history.extend(messages)
    if core.memory is not None:
        try:
            failed = turn.outcome.error is not None
            core.memory.after_turn(history, start, turn.history_uid, failed=failed)
            schedule_read_ahead(core, core.memory, history)
        except Exception:  # the memory must never cost the user a turn
            log.exception("the long-term memory could not take the turn")
    storage = core.storage
    try:
        storage.append(turn.conf_uid, turn.history_uid, messages)
    except OSError as exc:
        log.info("could not save the turn (%s); it stays in memory", exc)  # told in words
        unsaved = exc.unsaved if isinstance(exc, HistoryNotSaved) else len(messages)
        return Saved(unsaved, write_problem_words(exc))
    if core.held is not None:  # written: the user's message need not be held any more
        core.held.release(turn.conf_uid, turn.history_uid)
    # Written, with whatever waited from before; or still waiting elsewhere.
    problem = storage.write_problem
    return Saved(storage.unsaved(), write_problem_words(problem) if problem else None)


def recorder(
    core: AgentCore,
    history: list[Msg],
    commit: TurnCommit | None,
    saved: Callable[[Saved], None] | None = None,
) -> Callable[[AgentTurn], None]:
    """What a turn's end is told (`AgentCore.turn(on_end=...)`): record it into
    `history` now, or when `commit` allows (confirmed, and settled with what was
    heard), never if it was discarded; `saved` hears how far it was written."""

    def ended(turn: AgentTurn) -> None:
        def record(heard: str | None) -> None:
            written = record_turn(core, history, turn, heard)
            if saved is not None:
                saved(written)

        if commit is None:
            record(None)
        else:
            commit.record(record, turn.outcome)

    return ended
