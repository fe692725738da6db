"""Notes the app writes for the model, never for the user: the mark left in history
where the user interrupted a reply. What shows a conversation takes them out
(`without_notes`), so they are never shown as the companion's words, even when a
model repeats one back; and how the long-term memory's note begins in the user's
message of an embedded model (`memory_note_start`, after the time: `app.agent.moment`)."""

from __future__ import annotations

import re

# In the companion's own message, so in its person: "you" is the one it talks with (a
# note that says "the user" there has a small model speak of "the user" to them).
INTERRUPTED_NOTE = "[You interrupted me here; you heard only the words above.]"
# How earlier versions wrote it: still in stored conversations, still taken out.
OLD_INTERRUPTED_NOTE = "[The user interrupted you here; they heard only the text above.]"

MODEL_NOTES = (INTERRUPTED_NOTE, OLD_INTERRUPTED_NOTE)
# A note as written, or as a model repeats it (case, spacing and the final dot may vary).
_NOTE = re.compile(
    "|".join(
        r"\s*".join(re.escape(word) for word in note.rstrip(".]").split()) + r"\.?\s*\]?"
        for note in MODEL_NOTES
    ),
    re.IGNORECASE,
)


def without_notes(text: str) -> str:
    """`text` with every note for the model taken out."""
    kept, found = _NOTE.subn("", text)
    return kept.strip() if found else text


__all__ = [
    "INTERRUPTED_NOTE",
    "MODEL_NOTES",
    "OLD_INTERRUPTED_NOTE",
    "without_notes",
]
