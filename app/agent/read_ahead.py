"""Reading the next turn's prompt ahead of it, on the embedded model.

llama.cpp reuses the longest common start of the last prompt it read, so a turn reads
only what changed since. On this machine's CPU the embedded model reads about 55 tokens
a second, and what changed is more than the user's words: the previous turn, sent
without its time note from then on (`app.agent.moment`), and the long-term memory's
note in front of the words (300 tokens of memories by default). Read at the turn, that
was seconds between the user's last word and the first audio.

So as soon as a turn ends, when no other turn runs, the model reads what the next turn
will begin with: the system prompt, the history as the next request sends it, and the
start of the next user message with the standing part of the memory note
(`app.memory.recall`), which does not depend on the words still to come. The next turn
then reads only the memories matched to its words, the words and the time. The memory's
writer runs it (`MemoryWriter.ahead`): before the turns queued for extraction, again
after each (a new memory changes the note), and only a turn stops it; reading stops
at once then, and what was read stays read (`LocalModelClient.read_ahead`). Hosted
models are never asked: they would bill for it, and cache prompts on their side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.llm import Msg

if TYPE_CHECKING:
    from app.agent.core import AgentCore, TurnMemory

__all__ = ["schedule_read_ahead"]


def schedule_read_ahead(core: AgentCore, memory: TurnMemory, history: list[Msg]) -> None:
    """After a turn: have `memory`'s writer read the next turn's start ahead, when the
    model is one that keeps what it read (the embedded one) and is told in the user's
    message (`AgentCore.time_notes`)."""
    provider = core.provider
    if not provider.reads_ahead or not core.time_notes:
        return

    async def work(standing_note: str) -> None:
        stub = Msg.user("")  # the next user message, before its words
        request = core.build_request(
            history, [stub], tools=core.offered_tools(), note=standing_note
        )
        await provider.read_ahead(request)

    memory.read_ahead(work)
