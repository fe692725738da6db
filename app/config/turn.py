"""The turn-taking settings: how the companion knows you have finished speaking, hears
you while you speak, and may start its answer before it is sure.

With `endpointing = "turn_model"` (the default) the turn model (Smart Turn v3.2) is asked
`first_check_ms` after your words stop and again every `recheck_ms` as the silence
grows; the turn ends when it says you are done and your words do not sound unfinished,
after `settle_ms` when only the words say so (`question_settle_ms` when they ask a
finished question), and after `fallback_ms` whatever they
say. `"silence"` ends it after `vad.end_silence_ms` of silence. Speech that comes
while the answer is prepared or within `continue_within_s` of it being heard (at least
`continue_speech_ms` of it) goes on with the turn: the answer stops and is withdrawn.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class TurnSettings(BaseModel):
    """Turn-taking: how the companion knows you have finished speaking, hears your
    words while you speak, and may start its answer before it is sure."""

    endpointing: Literal["turn_model", "silence"] = Field(
        "turn_model",
        description="How the companion knows you have finished: turn_model listens to "
        "how your sentence ends and to its words; silence waits for a fixed silence "
        "(Voice detection: end silence).",
    )
    first_check_ms: int = Field(
        200,
        ge=50,
        le=2000,
        description="Silence after your words, in milliseconds (50 to 2000), before the "
        "turn model is first asked whether you are done.",
    )
    recheck_ms: int = Field(
        200,
        ge=50,
        le=2000,
        description="While you stay silent and it is unsure, the turn model is asked "
        "again after this many more milliseconds (50 to 2000).",
    )
    threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="How sure the turn model must be (0 to 1) that you are done.",
    )
    doubt_ms: int = Field(
        0,
        ge=0,
        le=3000,
        description="Extra silence in milliseconds (0 to 3000) before the turn model's "
        "word ends your turn, scaled by how unsure it is: it waits this much longer when "
        "barely sure, hardly at all when certain.",
    )
    settle_ms: int = Field(
        1000,
        ge=100,
        le=10000,
        description="Silence in milliseconds (100 to 10000) after words that sound "
        "finished which ends your turn even when the turn model is unsure.",
    )
    question_settle_ms: int = Field(
        500,
        ge=100,
        le=10000,
        description="Silence in milliseconds (100 to 10000) after a question you "
        "finished asking which ends your turn: a question hands the turn over, so it is "
        "answered sooner (never later than after settle_ms).",
    )
    fallback_ms: int = Field(
        2500,
        ge=500,
        le=10000,
        description="The longest silence in milliseconds (500 to 10000) before your "
        "turn ends, however unfinished it sounds.",
    )
    live_transcript: bool = Field(
        True,
        description="Transcribe while you speak: your words appear as you say them, "
        "and the answer can start sooner.",
    )
    # 64 ms: on the espeak set of bench/latency/cutoffs.py, 35 pauses inside speech
    # last that long against 30 for 96 ms (and 92 for 32 ms): starting 32 ms sooner
    # costs next to nothing.
    pause_ms: int = Field(
        64,
        ge=32,
        le=1000,
        description="A pause in your speech this long, in milliseconds (32 to 1000), "
        "has what you said so far transcribed at once.",
    )
    # A user who pauses and goes on ("Hello, I'm Priya. [0.5 s] I work as a nurse.")
    # speaks again while the answer is prepared or just begun: that answer is withdrawn
    # and their words join the turn (LiveKit's resumed turn).
    continue_within_s: float = Field(
        2.0,
        ge=0.0,
        le=10.0,
        description="If you go on speaking while the answer is being prepared, or within "
        "this many seconds (0 to 10) of it being spoken, the answer stops and your new "
        "words join what you said before; 0 treats every new word as an interruption.",
    )
    continue_speech_ms: int = Field(
        160,
        ge=64,
        le=2000,
        description="How long you must speak, in milliseconds (64 to 2000), for the "
        "answer to stop because you went on.",
    )
    speculative_replies: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Let the model start its answer before it is sure you are done; "
        "the answer is used only if you were. auto: on for models that cost nothing "
        "(the embedded one, a server on this computer), off for hosted ones.",
    )
