"""The result of one turn, as hosts read it and `companion turn --json` prints it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.agent import SentenceOutput

_STAGES = (
    "endpoint_ms",
    "transcript_ms",
    "request_sent_ms",
    "first_token_ms",
    "first_sentence_ms",
    "first_audio_ms",
    "total_ms",
)


def _stage_order(key: str) -> int:
    return _STAGES.index(key) if key in _STAGES else len(_STAGES)


@dataclass(slots=True)
class TurnResult:
    """What came of one turn: the user's words, the reply's sentences, the stage timings
    (ms since the end of the user's speech, or since they pressed send), and how it
    ended."""

    turn_id: int
    user_words: str
    sentences: list[SentenceOutput] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    interrupted: bool = False
    # Taken back: the user went on speaking, and these words were answered as part of a
    # longer turn (under the same number); nothing of this one was stored.
    withdrawn: bool = False
    # Messages and changes not written to history when the turn ended (a full disk):
    # they wait in memory and are written when there is room; `save_problem` says why.
    unsaved: int = 0
    save_problem: str | None = None

    @property
    def saved(self) -> bool:
        """Whether the history holds everything so far, this turn included."""
        return self.unsaved == 0
    # How the turn was decided, for a spoken turn: why it ended, whether its words were
    # heard while the user spoke, whether a speculative reply was used.
    endpointing: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "heard": self.user_words,  # (the key scripts read: what the app heard)
            "sentences": [
                {
                    "text": s.display_text,
                    "spoken": s.tts_text,
                    "expressions": list(s.actions.expressions),
                    "thinking": s.is_thinking,
                }
                for s in self.sentences
            ],
            "timings_ms": {
                k: round(v, 1)
                for k, v in sorted(self.timings_ms.items(), key=lambda kv: _stage_order(kv[0]))
            },
            "error": self.error,
            "interrupted": self.interrupted,
            "withdrawn": self.withdrawn,
            "saved": self.saved,
        }
        if self.endpointing:
            doc["endpointing"] = dict(self.endpointing)
        return doc


__all__ = ["TurnResult"]
