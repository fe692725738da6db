"""The speech contract's rules over one utterance's events, as a pure state machine.

`SpeechClient` feeds it every event an adapter yields and passes on only what the
contract allows: partial events with the whole current text (stripped, each text
once), and exactly one final, held back until the adapter's stream has ended
cleanly. What breaks the contract raises `SpeechAdapterError`:

- anything that is not a `TranscriptionEvent`;
- a second final, or any event after the final;
- a final before the audio has ended (the rest of the audio would go unheard);
- a stream that ends without a final;
- pieces of text instead of the whole text so far: three changes in a row, each to a
  text sharing no word with the one before. A real recognizer revises its whole text
  (whisper re-transcribes the growing utterance, a streaming service corrects its
  tail), so an unrelated revision happens (a word guessed from noise, then the real
  words), even two; three in a row is a recognizer sending fragments. Fewer pieces
  cannot be told from revisions, and losing a real utterance to a false alarm would
  be worse.
"""

from __future__ import annotations

import re

from app.speech.contract import TranscriptionEvent
from app.speech.errors import SpeechAdapterError

_UNRELATED_LIMIT = 3  # revisions in a row sharing no word with the text before
# A word: one CJK character (Chinese and Japanese are written without spaces, so a
# revision keeps characters, not space-separated runs), or a run of letters/digits.
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")


def words(text: str) -> frozenset[str]:
    """The words of `text`, case-folded, for telling a revision from a fragment."""
    return frozenset(_WORD.findall(text.casefold()))


class TranscriptRules:
    """One utterance's events checked against the contract; `name` names the adapter."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._shown: str | None = None  # the last text passed on
        self._final: TranscriptionEvent | None = None
        self._last_words: frozenset[str] = frozenset()
        self._unrelated_in_a_row = 0

    def _broken(self, what: str) -> SpeechAdapterError:
        return SpeechAdapterError(
            f"The speech recognizer {self.name} broke the speech contract: {what} "
            "(a bug in that adapter; nothing it said was used)"
        )

    def accept(self, event: object, *, audio_ended: bool) -> TranscriptionEvent | None:
        """The event to pass on now (None: nothing new, or the final, held back)."""
        if not isinstance(event, TranscriptionEvent):
            raise self._broken(f"it yielded a {type(event).__name__}, not a TranscriptionEvent")
        if self._final is not None:
            what = "a second final transcript" if event.is_final else "an event after its final"
            raise self._broken(f"it gave {what}")
        text = event.text.strip()
        self._check_whole_text(text)
        if event.is_final:
            if not audio_ended:
                raise self._broken("it gave its final transcript before the audio ended")
            self._final = event.model_copy(update={"text": text})
            return None
        if text == self._shown:
            return None
        self._shown = text
        return event.model_copy(update={"text": text})

    def _check_whole_text(self, text: str) -> None:
        current = words(text)
        if not current:
            return  # an empty revision (noise taken back) says nothing either way
        if self._last_words and not (current & self._last_words):
            self._unrelated_in_a_row += 1
            if self._unrelated_in_a_row >= _UNRELATED_LIMIT:
                raise self._broken("it sent pieces of text instead of the whole text heard so far")
        else:
            self._unrelated_in_a_row = 0
        self._last_words = current

    def finish(self) -> TranscriptionEvent:
        """The one final, once the adapter's stream has ended."""
        if self._final is None:
            raise self._broken("its stream ended without a final transcript")
        return self._final
