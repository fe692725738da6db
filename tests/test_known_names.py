"""The recognizer is told the names the companion knows (issue 26): those in its
long-term memory, at the start and whenever the memory changes; not the character's
own ("Mika" biased in, "my cat" was heard as "Mika")."""

from __future__ import annotations

from pathlib import Path

from app.agent.storage import InMemoryStorage
from app.config import Settings
from app.events import EventHub
from app.memory import MemoryDraft
from app.session import VoiceSession
from tests.llm_servers import ScriptedChatServer


class ListeningFor:
    """A speech client's `set_known_words`, watched."""

    def __init__(self) -> None:
        self.told: list[list[str]] = []

    def __call__(self, words: object) -> bool:
        self.told.append(list(words))  # type: ignore[call-overload]
        return True


async def test_the_recognizer_listens_for_the_names_in_memory(tmp_path: Path) -> None:
    with ScriptedChatServer([]) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        session = VoiceSession(settings, storage=InMemoryStorage(), events=EventHub())
        told = ListeningFor()
        session.speech.set_known_words = told  # type: ignore[method-assign]
        session.memory.open()
        store = session.memory.store
        store.add(session.memory.character, MemoryDraft("Your cat is called Pepper."))
        session.known_names.refresh()  # as the session's start does, once memory is open
        assert "Pepper" in told.told[-1]
        assert session.character.name not in told.told[-1]
        # A memory remembered while it runs: the names are read again.
        session.memory.edit(store.all(session.memory.character)[0].id, "Your dog is Biscuit.")
        assert "Biscuit" in told.told[-1] and "Pepper" not in told.told[-1]
        await session.aclose()
