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
from app.checks.outcome import (
    CheckFailed,
    CheckResult,
    Found,
    Said,
    Warn,
    Words,
    in_words,
    run_check,
)
from app.config import Settings, config_path, data_dir

# -- what the first-run guide looks for -----------------------------------------------
# Each says what it found twice (`Found`): in plain words a newcomer can act on, and
# the technical detail (a device's or a model's name and size) for the guide's Details.
# A failure's words already say what to do; `plain` adds the part of the app it affects.

CHAT_MISSING = Words("The chat model is missing: reinstall Companion, or choose a hosted model.")
TURNS_AFTER_PAUSE = Words("Knowing when you have finished speaking: after a short pause")


def check_microphone(settings: Settings) -> Found:
    try:
        name = MicrophoneSource.check_available(settings.audio.input_device)
    except MicrophoneUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    return Found(Words("Microphone: ready — try it below"), name)


def check_speaker(settings: Settings) -> Found:
    try:
        name = SoundDeviceSink.check_available(settings.audio.output_device)
    except PlaybackError as exc:
        raise CheckFailed(str(exc)) from exc
    except Exception as exc:
        raise CheckFailed(in_words(exc)) from exc
    return Found(Words("Speaker: ready — play a voice below"), name)


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


def check_chat_model_file(settings: Settings) -> Found:
    ready = Words("The chat model is ready (works offline)")
    path = settings.chat.local_model_path
    if path is not None:
        if not path.is_file():
            raise CheckFailed(
                Words("The chat model file {path} is missing.", {"path": path}),
                plain=Words(
                    "The chat model file you chose is missing: choose another in the "
                    "settings, or a hosted model."
                ),
            )
        return Found(ready, _own_file(path))
    try:
        from app.llm.wire.local_files import (
            DEFAULT_EMBEDDED,
            embedded_model,
            locate_parts,
            prepared_file,
        )

        provider, _, name = settings.chat.model.partition("/")
        model = embedded_model(name if provider == "local" else DEFAULT_EMBEDDED)
        prepared = prepared_file(model)
        if prepared is not None:
            return Found(ready, _installed(model.label, prepared))
        parts = locate_parts(model)
    except Exception as exc:
        raise CheckFailed(in_words(exc), plain=CHAT_MISSING) from exc
    return Found(
        Words("The chat model is here (works offline); it gets ready during this first start"),
        Words(
            "{model}: {count} parts installed ({size} MB), joined at the first start",
            {"model": model.label, "count": len(parts), "size": model.size // 1_000_000},
        ),
    )


def check_vad_model(settings: Settings) -> Found:
    try:
        from app.audio.vad import silero_model_path

        installed = _installed("Silero", silero_model_path())
    except Exception as exc:
        raise CheckFailed(
            in_words(exc),
            plain=Words(
                "Hearing when you speak: not possible — reinstall Companion, or type your messages"
            ),
        ) from exc
    return Found(Words("Hearing when you speak: ready"), installed)


def check_turn_model(settings: Settings) -> Found:
    if settings.turn.endpointing != "turn_model":
        return Found(TURNS_AFTER_PAUSE, Words("not used (turns end after a silence)"))
    try:
        from app.audio.turn_model import smart_turn_model_path

        installed = _installed("Smart Turn", smart_turn_model_path())
    except Exception as exc:
        raise CheckFailed(in_words(exc), plain=TURNS_AFTER_PAUSE) from exc
    return Found(Words("Knowing when you have finished speaking: ready"), installed)


def check_speech_model_files(settings: Settings) -> Found:
    speech = settings.speech
    offline = Words("Speech recognition is ready (works offline)")
    missing = Words("Speech recognition is missing: reinstall Companion, or type your messages")
    if speech.adapter != "whisper_local":
        service = SPEECH_SERVICES.get(speech.adapter, speech.adapter)
        return Found(
            Words(
                "Speech recognition: through an online service ({service})", {"service": service}
            ),
            Words("an online service, {service}", {"service": service}),
        )
    if speech.model_path is not None:
        if not speech.model_path.exists():
            raise CheckFailed(
                Words("The speech model {path} is missing.", {"path": speech.model_path}),
                plain=missing,
            )
        return Found(offline, Words("your own model {folder}", {"folder": speech.model_path.name}))
    from app.speech.languages import default_model

    # The model this language uses (`auto` follows the windows' language).
    name = speech.model or default_model(speech.language, settings.ui.language)
    try:
        from app.assets import frozen_path
        from app.llm.wire.local_files import locate_parts, prepared_file
        from app.speech.whisper_models import (
            FROZEN_FOLDERS,
            MULTILINGUAL_MODEL,
            WHISPER_BASE,
            base_cache_dir,
            builtin_model_dir,
            is_builtin,
        )

        if name == MULTILINGUAL_MODEL:
            # In the bundle, joined already, or its parts are there: the join itself is
            # the session's, at the first start (with its progress shown).
            bundled = frozen_path(FROZEN_FOLDERS[name])
            in_bundle = bundled is not None and (bundled / "model.bin").is_file()
            if not in_bundle and prepared_file(WHISPER_BASE, base_cache_dir()) is None:
                locate_parts(WHISPER_BASE)  # raises, in words, when a part is missing
        elif is_builtin(name):
            builtin_model_dir(name)  # raises when the built-in model is not installed
    except Exception as exc:
        raise CheckFailed(in_words(exc), plain=missing) from exc
    return Found(offline, whisper_words(name))


SystemCheck = tuple[Said, Callable[[Settings], Said | Found]]

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
