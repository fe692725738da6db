"""The voice settings: speech recognition, voice detection, the microphone and the
speaker, and the companion's own voice."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator


class SpeechSettings(BaseModel):
    """Speech recognition. `model`/`endpoint` unset = the adapter's default (whisper_local:
    tiny.en for English, Whisper base for other languages and auto). `api_key` is the
    speech service's own key, never the chat model's; doubao_asr also needs `app_id`
    (Volcengine APP ID) and may take `resource_id`."""

    adapter: Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"] = (
        Field(
            "whisper_local",
            description="What turns your voice into text: whisper_local works offline, "
            "the others are online services.",
        )
    )
    model: str | None = Field(
        None,
        description="The recognition model's name; empty uses the recognizer's default "
        "(whisper_local: tiny.en for English, base for other languages).",
    )
    model_path: Path | None = Field(
        None,
        description="whisper_local only: a folder holding a faster-whisper model to use "
        "instead of the built-in one.",
    )
    language: str | None = Field(
        "auto",
        description="The language you speak, as a code such as en or zh; auto follows "
        "the language of the windows and hears another when it is sure.",
    )
    threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="whisper_local only: how many processor threads recognition may "
        "use, from 1 to 256; automatic uses all of them.",
    )
    endpoint: str | None = Field(
        None,
        description="The speech service's address; empty uses the service's usual address.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="Your secret key for the speech service (never the chat model's key).",
    )
    app_id: str | None = Field(None, description="doubao_asr only: your Volcengine APP ID.")
    resource_id: str | None = Field(
        None,
        description="doubao_asr only: the Volcengine resource ID; empty uses "
        "volc.bigasr.sauc.duration.",
    )
    # whisper_local re-transcribes the growing utterance after this much new audio.
    partial_interval_s: float = Field(
        1.0,
        ge=0.0,
        le=30.0,
        description="whisper_local only: seconds of new speech between live previews of "
        "your words while you talk, from 0 to 30; 0 turns the preview off.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0.0,
        le=600.0,
        description="How long to wait for the speech service, in seconds (more than 0, at "
        "most 600), before giving up.",
    )

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str | None) -> str | None:
        from app.speech.languages import language_problem

        problem = language_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value.strip() if value else value


class VadSettings(BaseModel):
    """Voice detection: when your speech starts and when your turn is over."""

    start_threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="How sure the detector must be, from 0 to 1, that you started speaking; "
        "higher ignores more background noise.",
    )
    stop_threshold: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Below this certainty, from 0 to 1, a moment counts as a pause in your "
        "speech; keep it under the start threshold.",
    )
    end_silence_ms: int = Field(
        640,
        ge=100,
        le=5000,
        description="Silence after speech, in milliseconds (100 to 5,000), before your "
        "turn ends.",
    )
    pre_speech_pad_ms: int = Field(
        300,
        ge=0,
        le=2000,
        description="Sound kept from just before your speech was noticed, in "
        "milliseconds (0 to 2,000), so the first word is not cut off.",
    )
    min_speech_ms: int = Field(
        250,
        ge=0,
        le=5000,
        description="Sounds shorter than this, in milliseconds (0 to 5,000), are ignored "
        "as noise (a cough, a click).",
    )
    max_utterance_s: float = Field(
        30.0,
        ge=1.0,
        le=300.0,
        description="The longest one turn of speech can be, in seconds (1 to 300); longer "
        "speech is cut and sent at that point.",
    )
    # Barge-in: user speech lasting this long while the companion speaks interrupts it.
    barge_in_ms: int = Field(
        500,
        ge=100,
        le=5000,
        description="How long you must speak over the companion, in milliseconds (100 to "
        "5,000), before it stops to listen.",
    )


class AudioSettings(BaseModel):
    """The microphone and the speaker, and how they get along while the companion talks."""

    input_device: str | int | None = Field(
        None,
        description="The microphone, by name or number; empty uses the system default.",
    )
    output_device: str | int | None = Field(
        None,
        description="The speaker or headphones for the companion's voice, by name or "
        "number; empty uses the system default.",
    )
    volume: float = Field(
        1.0,
        ge=0.0,
        le=2.0,
        description="How loud the companion's voice is, from 0 to 2: 1 is normal, 0 "
        "silent, 2 twice as loud.",
    )
    # Without headphones the mic hears the companion's voice and the room's echo of it.
    echo_tail_ms: int = Field(
        250,
        ge=0,
        le=2000,
        description="How long the room's echo of the companion's voice lasts, in "
        "milliseconds (0 to 2,000); the microphone ignores that echo.",
    )
    mic_mode: Literal["always_on", "push_to_talk", "muted"] = Field(
        "always_on",
        description="When the microphone listens: always, only while you hold the "
        "push-to-talk key or button, or never (muted).",
    )
    # Letting the user interrupt the companion by speaking over it (always-on mode).
    # It needs echo cancellation (echo_mode aec/auto with pywebrtc-audio): with
    # half_duplex the mic is ignored while the companion speaks, whatever this says.
    # On by default: in the simulated room (bench/bench_barge_in.py) 0 of 324
    # sentences interrupted themselves, warm-up included, and 324/324 users were heard.
    barge_in: bool = Field(
        True,
        description="Let you interrupt the companion by speaking over it (needs echo "
        "cancellation and the always-on microphone mode).",
    )
    # aec: WebRTC echo cancellation on the mic, with the played audio as reference;
    # half_duplex: the mic is ignored while the companion speaks; auto: aec when
    # pywebrtc-audio is installed, else half_duplex.
    echo_mode: Literal["aec", "half_duplex", "auto"] = Field(
        "auto",
        description="How the microphone avoids hearing the companion: aec cancels the "
        "echo, half_duplex ignores the mic while it speaks, auto picks aec when possible.",
    )
    # A barge-in stops the voice at once; when it brings no words (the user's speech
    # ends within this time with no utterance, or its transcript is empty), nothing
    # is stored as interrupted and the companion speaks on from where it stopped.
    resume_timeout_s: float = Field(
        1.5,
        ge=0.1,
        le=10.0,
        description="When you speak over the companion but say no words, it carries on "
        "where it stopped after this many seconds (0.1 to 10).",
    )


class TTSSettings(BaseModel):
    """The voice. `engine`: `auto` (the default: the offline neural voice hibari for
    sentences in the Latin alphabet, the system voice for other scripts such as Chinese,
    and for everything when hibari cannot load), `pyttsx3` (the system voice), `hibari`
    (the neural voice alone) or `openai_speech` (OpenAI or any server with an
    OpenAI-compatible `/audio/speech`). `voice` is an id from that engine's voice list
    (with `auto`, a system voice's id means the system voice speaks everything); `rate`
    is words per minute (175 = the engine's normal pace)."""

    engine: Literal["auto", "pyttsx3", "hibari", "openai_speech"] = Field(
        "auto",
        description="What speaks: auto uses the natural offline voice for English and the "
        "system's voice for other languages; pyttsx3 is the system's voice, hibari the "
        "natural voice alone, openai_speech an online speech service.",
    )
    voice: str | None = Field(
        None,
        description="The voice's ID from the engine's list of voices; empty uses the "
        "engine's default voice.",
    )
    rate: int = Field(
        175,
        ge=60,
        le=400,
        description="How fast the companion speaks, in words per minute, from 60 to 400; "
        "175 is the normal pace.",
    )
    lookahead: int = Field(
        2,
        ge=1,
        le=8,
        description="How many sentences are turned into sound ahead of the one being "
        "spoken (1 to 8).",
    )
    model_path: Path | None = Field(
        None,
        description="hibari only: another voice model file to use instead of the one "
        "that comes with it.",
    )
    endpoint: str = Field(
        "https://api.openai.com/v1",
        description="openai_speech only: the speech server's address (it ends in /v1).",
    )
    model: str | None = Field(
        None,
        description="openai_speech only: the speech model's name; empty uses gpt-4o-mini-tts.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="openai_speech only: your secret key for the speech server; empty "
        "uses OPENAI_API_KEY for OpenAI itself.",
    )
    audio_format: Literal["pcm", "wav"] = Field(
        "pcm",
        description="openai_speech only: the sound format asked of the server; choose "
        "wav if the server cannot send raw pcm.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        le=600,
        description="openai_speech only: how long to wait for the speech server, in "
        "seconds (more than 0, at most 600), before giving up.",
    )
