"""Voice activity: Silero VAD (ONNX, 512-sample frames at 16 kHz) and endpointing.

`SileroVad` turns frames into speech probabilities. `Endpointer` turns
probabilities into utterances with hysteresis, a pre-speech pad, a minimum
speech length and an end-of-turn silence.
"""

from __future__ import annotations

import collections
import enum
import importlib.util
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from app.audio.format import FRAME_BYTES, FRAME_MS, FRAME_SAMPLES

if TYPE_CHECKING:
    from app.config import VadSettings

_CONTEXT = 64
# A frame quieter than this (RMS, dBFS) is not speech: the model is not run for it,
# which keeps always-on listening on a silent line cheap.
SILENCE_DBFS = -65.0


@dataclass(slots=True)
class GateConfig:
    """When `SileroVad` may skip the model for a frame that is only room noise.

    The gate tracks the room's noise floor: it follows a quieter frame at once and
    rises by `rise_db_per_s` while frames are louder (so a fan that starts, or a
    louder room, becomes the floor within seconds). A frame is skipped (probability
    0.0) only when all of these hold: it is within `margin_db` of the floor, below
    `ceiling_dbfs`, and the model's last `hangover_frames` answers were all below
    `quiet_probability` (so speech, and the pauses inside it, always run the model).
    When a skipped stretch ends, the model first hears the last `lead_in_frames`
    skipped frames, then the frame that opened the gate: its recurrent state goes on
    from where it settled on the room's noise (the gate closes only after
    `hangover_frames` quiet answers), through the most recent noise, as if it had
    listened throughout. Digital silence below `SILENCE_DBFS` is never scored, and is
    not the room's floor. The floor is measured around the frame's mean: a DC offset
    is not sound.
    """

    enabled: bool = True
    margin_db: float = 6.0
    ceiling_dbfs: float = -45.0
    rise_db_per_s: float = 1.0
    quiet_probability: float = 0.1
    hangover_frames: int = 8
    lead_in_frames: int = 3


def silero_model_path() -> Path:
    """The Silero v6 ONNX file that faster-whisper ships (in a frozen app:
    `<bundle>/faster_whisper/assets/silero_vad_v6.onnx`)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        frozen = Path(bundle) / "faster_whisper" / "assets" / "silero_vad_v6.onnx"
        if frozen.is_file():
            return frozen
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("faster-whisper is not installed: pip install faster-whisper")
    path = Path(spec.origin).parent / "assets" / "silero_vad_v6.onnx"
    if not path.is_file():
        raise FileNotFoundError(f"Silero VAD model missing at {path}; reinstall faster-whisper")
    return path


class SileroVad:
    """Streaming Silero VAD; `probability(frame)` for consecutive 512-sample frames.

    The model is not run for digital silence (below `silence_dbfs`), nor, with the
    gate (`GateConfig`), for frames that are only the room's steady noise; both
    score 0.0. `model_calls` counts the frames the model actually ran on.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        silence_dbfs: float = SILENCE_DBFS,
        gate: GateConfig | None = None,
    ) -> None:
        import onnxruntime

        self._silence_ms = (10 ** (silence_dbfs / 20)) ** 2  # mean square, full scale = 1
        self.gate = gate if gate is not None else GateConfig()
        self._rise_db = self.gate.rise_db_per_s * FRAME_MS / 1000
        self._floor_db: float | None = None
        self._recent: collections.deque[float] = collections.deque(
            maxlen=max(1, self.gate.hangover_frames)
        )
        # Skipped noise frames the model may hear as a lead-in, each with the context
        # (the previous frame's last samples) it had.
        self._skipped: collections.deque[tuple[np.ndarray, np.ndarray]] = collections.deque(
            maxlen=max(1, self.gate.lead_in_frames)
        )
        self.model_calls = 0
        self.frames_seen = 0

        opts = onnxruntime.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 4
        # One 512-sample frame at a time: the arena would keep its peak for good, and
        # a plain allocation per call is nothing next to the model's own work.
        opts.enable_cpu_mem_arena = False
        opts.enable_mem_pattern = False
        self._session = onnxruntime.InferenceSession(
            str(model_path or silero_model_path()),
            providers=["CPUExecutionProvider"],
            sess_options=opts,
        )
        self.reset()

    def reset(self) -> None:
        """Forget the stream (the model's state); the room's noise floor is kept."""
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(_CONTEXT, dtype=np.float32)
        self._recent.clear()
        self._skipped.clear()

    @property
    def noise_floor_dbfs(self) -> float | None:
        """The tracked noise floor (frame RMS, dBFS), once a non-silent frame was heard."""
        return self._floor_db

    def probability(self, frame: bytes | np.ndarray) -> float:
        if isinstance(frame, bytes | bytearray | memoryview):
            samples = np.frombuffer(frame, dtype="<i2").astype(np.float32) / 32768.0
        else:
            samples = frame.astype(np.float32, copy=False)
        if samples.size != FRAME_SAMPLES:
            raise ValueError(f"Silero VAD needs {FRAME_SAMPLES}-sample frames, got {samples.size}")
        self.frames_seen += 1
        # The frame's power around its mean: a DC offset is not sound.
        mean = float(samples.mean())
        mean_square = max(0.0, float(np.dot(samples, samples)) / FRAME_SAMPLES - mean * mean)
        if mean_square < self._silence_ms:
            # Digital silence: never run, never a lead-in, and not the room's floor.
            self._skipped.clear()
            self._context = samples[-_CONTEXT:]
            return 0.0
        if self._room_noise(10 * math.log10(max(mean_square, 1e-12))):
            self._skipped.append((samples.copy(), self._context))
            self._context = samples[-_CONTEXT:]
            return 0.0
        # The gate opens: the model first hears the noise it skipped last, so its
        # recurrent state continues from the room, not from before the skipped stretch.
        for lead, context in self._skipped:
            self._context = context
            self._run(lead)
        self._skipped.clear()
        probability = self._run(samples)
        self._recent.append(probability)
        return probability

    def _room_noise(self, level_db: float) -> bool:
        """Track the floor; True when this frame is only room noise (skip the model)."""
        gate = self.gate
        floor = self._floor_db
        if floor is None or level_db < floor:
            self._floor_db = level_db
        else:
            self._floor_db = min(level_db, floor + self._rise_db)
        if not gate.enabled or floor is None:
            return False
        return (
            level_db < floor + gate.margin_db
            and level_db < gate.ceiling_dbfs
            and len(self._recent) == self._recent.maxlen
            and max(self._recent) < gate.quiet_probability
        )

    def _run(self, samples: np.ndarray) -> float:
        batch = np.concatenate([self._context, samples])[None, :]
        out, self._h, self._c = self._session.run(
            None, {"input": batch, "h": self._h, "c": self._c}
        )
        self._context = samples[-_CONTEXT:]
        self.model_calls += 1
        return float(np.asarray(out).reshape(-1)[0])


class VadEventKind(enum.Enum):
    SPEECH_STARTED = "speech_started"
    SPEECH_ENDED = "speech_ended"


@dataclass(slots=True)
class Utterance:
    """One finished stretch of speech: PCM including the pre-speech pad."""

    pcm: bytes
    speech_ms: float
    cut: bool = False  # True when `max_utterance_s` ended it, not silence


@dataclass(slots=True)
class EndpointerConfig:
    start_threshold: float = 0.5
    stop_threshold: float = 0.35
    end_silence_ms: int = 640
    pre_speech_pad_ms: int = 300
    min_speech_ms: int = 250
    max_utterance_s: float = 30.0

    @classmethod
    def from_settings(cls, vad: VadSettings, **overrides: Any) -> EndpointerConfig:
        """The endpointing part of the voice-detection settings, with `overrides` on top."""
        config = cls(
            start_threshold=vad.start_threshold,
            stop_threshold=vad.stop_threshold,
            end_silence_ms=vad.end_silence_ms,
            pre_speech_pad_ms=vad.pre_speech_pad_ms,
            min_speech_ms=vad.min_speech_ms,
            max_utterance_s=vad.max_utterance_s,
        )
        return replace(config, **overrides)


@dataclass
class Endpointer:
    """Frames in, utterances out. Feed 512-sample frames with their speech probability."""

    config: EndpointerConfig = field(default_factory=EndpointerConfig)
    in_speech: bool = False

    def __post_init__(self) -> None:
        pad_frames = max(1, round(self.config.pre_speech_pad_ms / FRAME_MS))
        self._pad: collections.deque[bytes] = collections.deque(maxlen=pad_frames)
        self._frames: list[bytes] = []
        self._speech_frames = 0
        self._silence_frames = 0

    def reset(self) -> None:
        self.in_speech = False
        self._pad.clear()
        self._frames = []
        self._speech_frames = 0
        self._silence_frames = 0

    def flush(self) -> Utterance | None:
        """End the current utterance now (the input ended mid-speech)."""
        if not self.in_speech:
            return None
        utterance = Utterance(b"".join(self._frames), self._speech_frames * FRAME_MS, cut=True)
        self.reset()
        return utterance

    def push(
        self, frame: bytes, probability: float
    ) -> tuple[VadEventKind | None, Utterance | None]:
        """Returns (event, utterance): SPEECH_STARTED once speech begins; SPEECH_ENDED with
        the utterance when the end silence has passed (or `None` for a too-short blip)."""
        cfg = self.config
        if not self.in_speech:
            if probability >= cfg.start_threshold:
                self.in_speech = True
                self._frames = [*self._pad, frame]
                self._pad.clear()
                self._speech_frames, self._silence_frames = 1, 0
                return VadEventKind.SPEECH_STARTED, None
            self._pad.append(frame)
            return None, None
        self._frames.append(frame)
        if probability >= cfg.stop_threshold:
            self._speech_frames += 1 + self._silence_frames
            self._silence_frames = 0
        else:
            self._silence_frames += 1
        too_long = len(self._frames) * FRAME_MS >= cfg.max_utterance_s * 1000
        if self._silence_frames * FRAME_MS >= cfg.end_silence_ms or too_long:
            speech_ms = self._speech_frames * FRAME_MS
            pcm = b"".join(self._frames)
            self.in_speech = False
            self._frames = []
            self._speech_frames = self._silence_frames = 0
            if speech_ms < cfg.min_speech_ms:
                return VadEventKind.SPEECH_ENDED, None
            return VadEventKind.SPEECH_ENDED, Utterance(pcm, speech_ms, cut=too_long)
        return None, None


def frames(pcm: bytes) -> list[bytes]:
    """Split PCM into whole 512-sample frames (a short tail is dropped)."""
    return [pcm[i : i + FRAME_BYTES] for i in range(0, len(pcm) - FRAME_BYTES + 1, FRAME_BYTES)]


@dataclass
class BargeInDetector:
    """Decides when speech over the companion's voice is long enough to interrupt it.

    Counts confident speech frames (probability ≥ `threshold`); frames between
    `stop_threshold` and `threshold` keep the count alive without adding to it, and
    a gap of `max_gap_ms` below `stop_threshold` starts it again, so a cough or an
    "mm-hm" shorter than `min_speech_ms` never interrupts, and neither do the
    scattered frames that echo left after cancellation may score. `push()` returns
    True once, on the frame where the speech reaches `min_speech_ms`.
    """

    min_speech_ms: float = 500
    threshold: float = 0.5
    stop_threshold: float = 0.35
    max_gap_ms: float = 200
    _speech_ms: float = 0.0
    _gap_ms: float = 0.0
    _fired: bool = False

    def reset(self) -> None:
        self._speech_ms = self._gap_ms = 0.0
        self._fired = False

    @property
    def speech_ms(self) -> float:
        return self._speech_ms

    def push(self, probability: float) -> bool:
        if self._speech_ms == 0.0:
            if probability >= self.threshold:
                self._speech_ms = FRAME_MS
        elif probability >= self.stop_threshold:
            if probability >= self.threshold:
                self._speech_ms += FRAME_MS
            self._gap_ms = 0.0
        else:
            self._gap_ms += FRAME_MS
            if self._gap_ms >= self.max_gap_ms:
                self._speech_ms = self._gap_ms = 0.0
                self._fired = False
        if not self._fired and self._speech_ms >= self.min_speech_ms:
            self._fired = True
            return True
        return False
