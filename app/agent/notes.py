"""Notes the app writes for the model, never for the user: the mark left in history
where the user interrupted a reply. What shows a conversation takes them out
(`without_notes`), so they are never shown as the companion's words, even when a
model repeats one back; and how the long-term memory's note begins in the user's
message of an embedded model (`memory_note_start`, after the time: `app.agent.clock`)."""

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


# The memory's note is written in the user's own words ("My cat is Nori", never "the
# user": a small model that reads "the user" in the user's message takes it for a third
# person and answers about "the user"). Not called "notes" either (with 300 memories a
# small model answered about "the notes you provided"). Every note starts the same way
# (the model can read that start ahead of the turn), with what it is and to whom the
# reply speaks:
IN_MESSAGE_OPEN = 'First what you remember about me, then my message. Answer me as "you".'


def memory_note_start(note: str) -> str:
    """How a user message with `note` in front of its words begins (the words follow
    after a blank line)."""
    return f"{IN_MESSAGE_OPEN}\n{note}"


__all__ = [
    "INTERRUPTED_NOTE",
    "IN_MESSAGE_OPEN",
    "MODEL_NOTES",
    "OLD_INTERRUPTED_NOTE",
    "memory_note_start",
    "without_notes",
]
