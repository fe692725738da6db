"""The turn model: Smart Turn v3.2 (BSD-2-Clause), an ONNX model that hears the end of
what someone said and tells how likely it is that they have finished their turn.

The model file ships inside the `pipecat-ai` 1.14.0 wheel, which is installed without
its dependencies only for this file (`scripts/setup.sh`); it is found through the
package's metadata, and Pipecat itself is never imported. Its input is the last 8 s of
the turn's 16 kHz audio (zero-padded at the front), normalised to zero mean and unit
variance, as an 80-bin Whisper log-mel (`input_features` [1, 80, 800]); its output is
already a probability.
"""

from __future__ import annotations

import importlib.metadata
import sys
import threading
from pathlib import Path

import numpy as np

from app.audio.format import SAMPLE_RATE

MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
_PACKAGE = "pipecat-ai"
_IN_PACKAGE = f"pipecat/audio/turn/smart_turn/data/{MODEL_FILE}"
WINDOW_S = 8
_WINDOW = WINDOW_S * SAMPLE_RATE
_FRAMES = 800  # 10 ms hops over the 8 s window
INSTALL_HINT = 'pip install --no-deps "pipecat-ai==1.14.0"'


class TurnModelMissing(Exception):
    """The turn model file cannot be found; the message says how to install it."""


def smart_turn_model_path() -> Path:
    """Where the Smart Turn v3.2 ONNX file is: inside the installed `pipecat-ai`
    distribution (in a frozen app: `<bundle>/pipecat/audio/turn/smart_turn/data/`)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        frozen = Path(bundle) / _IN_PACKAGE
        if frozen.is_file():
            return frozen
    try:
        files = importlib.metadata.files(_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise TurnModelMissing(
            f"The turn model (Smart Turn) is not installed: {INSTALL_HINT}"
        ) from None
    for file in files:
        if str(file).replace("\\", "/") == _IN_PACKAGE:
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise TurnModelMissing(
        f"The turn model file {MODEL_FILE} is missing from {_PACKAGE}: "
        f"pip install --force-reinstall --no-deps \"pipecat-ai==1.14.0\""
    )


class SmartTurn:
    """Smart Turn v3.2 on onnxruntime; `probability(pcm)` for the turn so far.

    One decision takes about 65 ms on one thread; it is meant to run off the event
    loop. Calls are serialised (one session, one thread).
    """

    def __init__(self, model_path: Path | None = None, *, threads: int = 1) -> None:
        import onnxruntime
        from faster_whisper.feature_extractor import FeatureExtractor

        opts = onnxruntime.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = threads
        opts.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 4
        self._session = onnxruntime.InferenceSession(
            str(model_path or smart_turn_model_path()),
            providers=["CPUExecutionProvider"],
            sess_options=opts,
        )
        self._features = FeatureExtractor(feature_size=80, chunk_length=WINDOW_S)
        self._lock = threading.Lock()
        self.calls = 0

    def probability(self, pcm: bytes) -> float:
        """How likely (0..1) it is that the speaker has finished, from 16 kHz s16le
        `pcm` of the turn so far (its end included: the silence after the words is
        part of what the model hears)."""
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        audio = audio[-_WINDOW:]
        if audio.size < _WINDOW:
            audio = np.pad(audio, (_WINDOW - audio.size, 0))
        audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
        features = self._features(audio, padding=0)[:, :_FRAMES]
        with self._lock:
            out = self._session.run(
                None, {"input_features": features[None].astype(np.float32, copy=False)}
            )
            self.calls += 1
        return float(np.asarray(out[0]).reshape(-1)[0])
