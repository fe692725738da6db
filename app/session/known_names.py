"""The names the companion knows, given to the recognizer so it hears them right: the
names in its long-term memory (the user's, their people and pets), from the start and
again whenever the memory changes.

Not the character's own name: biased towards "Mika", whisper heard "my cat" as "Mika"
(tests/test_turn_taking.py); a user says the companion's name far less often than the
words it sounds like."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.events import MemoryChanged
from app.speech import SpeechClient
from app.speech.known_words import known_words

if TYPE_CHECKING:
    from app.memory import LongTermMemory

log = logging.getLogger(__name__)


class KnownNames:
    """Keeps `speech` listening for the names `memory` holds."""

    def __init__(self, speech: SpeechClient, memory: LongTermMemory) -> None:
        self._speech, self._memory = speech, memory
        self.words: list[str] = []
        memory.subscribe(self._changed)

    def _changed(self, event: object) -> None:
        if isinstance(event, MemoryChanged):
            self.refresh()

    def refresh(self) -> None:
        """Read the names again (after the memory opened, or changed)."""
        try:
            facts = [item.text for item in self._memory.items()] if self._memory.enabled else []
        except Exception:  # the memory's own notices tell what went wrong
            log.debug("the memory could not be read for names", exc_info=True)
            facts = []
        self.words = known_words(facts=facts)
        self._speech.set_known_words(self.words)
