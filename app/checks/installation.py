"""Is everything the app needs on this computer: a microphone, a speaker, the
embedded models (the first-run guide's `SYSTEM_CHECKS`), and the folders, sound
library and screen capture the self-test looks at. Each check is blocking: run it
off a UI thread."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path

from app.audio.capture import MicrophoneSource, MicrophoneUnavailable
from app.audio.playback import PlaybackError, SoundDeviceSink
from app.checks.outcome import CheckFailed, CheckResult, Said, Warn, Words, in_words, run_check
from app.config import Settings, config_path, data_dir

# -- what the first-run guide looks for -----------------------------------------------


def check_microphone(settings: Settings) -> str:
    try:
        return MicrophoneSource.check_available(settings.audio.input_device)
    except MicrophoneUnavailable as exc:
        raise CheckFailed(str(exc)) from exc


def check_speaker(settings: Settings) -> str:
    try:
        return SoundDeviceSink.check_available(settings.audio.output_device)
    except PlaybackError as exc:
        raise CheckFailed(str(exc)) from exc
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc


def _megabytes(path: Path) -> int | None:
    try:
        return round(path.stat().st_size / 1e6)
    except OSError:
        return None


def _installed(name: str, path: Path) -> Words:
    """A built-in model by its name, not its file's: "Silero voice detection, installed
    (2 MB)"."""
    size = _megabytes(path)
    if size is None:
        return Words("{name}, installed", {"name": name})
    return Words("{name}, installed ({size} MB)", {"name": name, "size": size})


def _own_file(path: Path) -> Words:
    """A model file the user chose."""
    size = _megabytes(path)
    return Words("your own file {file} ({size} MB)", {"file": path.name, "size": size or 0})


# faster-whisper's model names in words ("tiny.en" -> "Whisper tiny, English").
SPEECH_SERVICES = {
    "openai_transcribe": "OpenAI",
    "doubao_asr": "Doubao (Volcengine)",
    "dashscope_funasr": "FunASR (Alibaba DashScope)",
}


def whisper_words(model: str) -> Words:
    """The built-in recognizer's model in words, as the settings name it."""
    size, _, language = model.partition(".")
    if language == "en":
        return Words("Built in: Whisper {size}, English", {"size": size})
    return Words("Built in: Whisper {size}, many languages", {"size": size})


def check_chat_model_file(settings: Settings) -> Said:
    path = settings.chat.local_model_path
    if path is not None:
        if not path.is_file():
            raise CheckFailed(Words("The chat model file {path} is missing.", {"path": path}))
        return _own_file(path)
    try:
        from app.llm.wire.local_files import (
            DEFAULT_EMBEDDED,
            embedded_model,
            locate_parts,
            prepared_file,
        )

        provider, _, name = settings.chat.model.partition("/")
        model = embedded_model(name if provider == "local" else DEFAULT_EMBEDDED)
        ready = prepared_file(model)
        if ready is not None:
            return _installed(model.label, ready)
        parts = locate_parts(model)
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc
    return Words(
        "{model}: {count} parts installed ({size} MB), joined at the first start",
        {"model": model.label, "count": len(parts), "size": model.size // 1_000_000},
    )


def check_vad_model(settings: Settings) -> Said:
    try:
        from app.audio.vad import silero_model_path

        return _installed("Silero", silero_model_path())
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc


def check_turn_model(settings: Settings) -> Said:
    if settings.turn.endpointing != "turn_model":
        return Words("not used (turns end after a silence)")
    try:
        from app.audio.turn_model import smart_turn_model_path

        return _installed("Smart Turn", smart_turn_model_path())
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc


def check_speech_model_files(settings: Settings) -> Said:
    speech = settings.speech
    if speech.adapter != "whisper_local":
        service = SPEECH_SERVICES.get(speech.adapter, speech.adapter)
        return Words("an online service, {service}", {"service": service})
    if speech.model_path is not None:
        if not speech.model_path.exists():
            raise CheckFailed(
                Words("The speech model {path} is missing.", {"path": speech.model_path})
            )
        return Words("your own model {folder}", {"folder": speech.model_path.name})
    try:
        from app.speech.adapters.whisper_local import bundled_model_dir

        bundled_model_dir()  # raises when the built-in model is not installed
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc
    return whisper_words(speech.model or "tiny.en")


SystemCheck = tuple[Said, Callable[[Settings], Said]]

SYSTEM_CHECKS: tuple[SystemCheck, ...] = (
    (Words("Microphone"), check_microphone),
    (Words("Speaker"), check_speaker),
    (Words("Embedded chat model"), check_chat_model_file),
    (Words("Voice detection model"), check_vad_model),
    (Words("Turn model"), check_turn_model),
    (Words("Speech recognition model"), check_speech_model_files),
)


def check_system(
    settings: Settings,
    checks: tuple[SystemCheck, ...] = SYSTEM_CHECKS,
    *,
    show: Callable[[Said], str] = str,
) -> list[CheckResult]:
    """Every system check, in order (blocking: run it off the UI thread)."""
    return [
        run_check(show(name), functools.partial(check, settings), show=show)
        for name, check in checks
    ]


# -- what the self-test looks for -----------------------------------------------------


def _writable(kind: str, folder: Path) -> str:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".selftest-", delete=True) as f:
            f.write(b"ok")
            f.flush()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CheckFailed(f"the {kind} folder {folder} is not writable: {reason}") from exc
    return str(folder)


def check_config_dir() -> str:
    return _writable("config", config_path().parent)


def check_data_dir() -> str:
    return _writable("data", data_dir())


def check_portaudio() -> str:
    try:
        import sounddevice
    except OSError as exc:
        raise CheckFailed(
            f"the PortAudio library could not be loaded ({exc}); install libportaudio2"
        ) from exc
    version = sounddevice.get_portaudio_version()[1]
    try:
        devices = sounddevice.query_devices()
        inputs = [d for d in devices if d["max_input_channels"] > 0]
        outputs = [d for d in devices if d["max_output_channels"] > 0]
    except Exception as exc:
        raise Warn(f"{version} loaded, but audio devices could not be listed: {exc}") from exc
    if not inputs or not outputs:
        raise Warn(
            f"{version} loaded; {len(inputs)} microphone(s), {len(outputs)} speaker(s) "
            "found: talking needs both"
        )
    return f"{version}: {len(inputs)} input(s), {len(outputs)} output(s)"


def check_mss() -> str:
    import mss

    return f"mss {getattr(mss, '__version__', '?')} imported"


def check_live2d() -> str:
    """The Live2D library (a user's own model) loads, with the shaders its renderer reads."""
    from app.avatar.live2d_library import Live2DUnavailable, live2d_library

    try:
        library = live2d_library()
    except Live2DUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    shaders = Path(library.__file__ or ".").parent / "FrameworkShaders"
    if not (shaders / "VertShaderSrc.vert").is_file():
        raise CheckFailed(f"the Live2D library's shaders are missing from {shaders.parent}")
    version = getattr(library, "__version__", "?")
    return f"live2d-py {version}, Cubism SDK {getattr(library, '__csm_version__', '?')}"
