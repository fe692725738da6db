"""Checks that the app can work here, with no Qt: what the first-run guide looks for,
what the settings' "Test" buttons try, and `companion --self-test` (`app.checks.selftest`).

* `outcome`: `CheckFailed`, `Found`, `Warn`, `Words`, `CheckResult` and `run_check`.
* `installation`: is it all on this computer (devices, models, folders, libraries).
* `trials`: trying the parts for real (ask the model, record and play back, speak).
"""

from app.checks.installation import (
    SYSTEM_CHECKS,
    SystemCheck,
    check_chat_model_file,
    check_config_dir,
    check_data_dir,
    check_microphone,
    check_mss,
    check_portaudio,
    check_speaker,
    check_speech_model_files,
    check_system,
    check_vad_model,
)
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
from app.checks.trials import (
    MIC_TEST_S,
    MODEL_PROMPT,
    SAMPLE,
    SOUND_LEVEL,
    LevelCallback,
    MicTestResult,
    ask,
    ask_model,
    record,
    record_and_play_back,
    speak_sample,
    synthesize,
)

__all__ = [
    "MIC_TEST_S",
    "MODEL_PROMPT",
    "SAMPLE",
    "SOUND_LEVEL",
    "SYSTEM_CHECKS",
    "CheckFailed",
    "CheckResult",
    "Found",
    "LevelCallback",
    "MicTestResult",
    "Said",
    "SystemCheck",
    "Warn",
    "Words",
    "ask",
    "ask_model",
    "check_chat_model_file",
    "check_config_dir",
    "check_data_dir",
    "check_microphone",
    "check_mss",
    "check_portaudio",
    "check_speaker",
    "check_speech_model_files",
    "check_system",
    "check_vad_model",
    "in_words",
    "record",
    "record_and_play_back",
    "run_check",
    "speak_sample",
    "synthesize",
]
