"""No echo to cancel (headphones, a speaker that does not reach the microphone): the
canceller passes the microphone on as it is, so a user who speaks over the voice is
heard from their first word; with an echo it cancels, and an echo that appears is
cancelled again within two seconds of voice. Real speech (espeak-ng), real AEC3."""

from __future__ import annotations

import numpy as np
import pytest

from app.audio.echo import WebRtcEchoCanceller
from app.audio.echo_path import EchoPath
from app.audio.vad import SileroVad
from app.audio.wav import read_wav_16k
from tests.conftest import speak_to_wav
from tests.test_echo import Clock

VOICE = (
    "Hello! It is lovely to meet you. I hope your day went well, and that we can talk "
    "about everything you like for as long as you want to."
)
USER = "I work as a nurse at the city hospital."


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, np.ndarray]:
    folder = tmp_path_factory.mktemp("speech")
    voice = np.frombuffer(read_wav_16k(speak_to_wav(VOICE, folder / "voice.wav")), "<i2")
    user = np.frombuffer(read_wav_16k(speak_to_wav(USER, folder / "user.wav")), "<i2")
    return voice[: voice.size - voice.size % 480].copy(), user.copy()


def _room(voice: np.ndarray, gain: float, delay: int = 800) -> np.ndarray:
    """What the microphone hears of `voice`: its echo at `gain`, `delay` samples late,
    over a little noise."""
    rng = np.random.default_rng(7)
    echo = np.zeros(voice.size, dtype=np.float32)
    echo[delay:] = voice[:-delay].astype(np.float32) * gain
    return np.clip(echo + rng.normal(0, 20, voice.size), -32768, 32767).astype(np.int16)


def _play(
    canceller: WebRtcEchoCanceller, clock: Clock, voice: np.ndarray, mic: np.ndarray
) -> bytes:
    canceller.far_end(voice, 16_000)
    out = []
    for i in range(0, mic.size, 480):
        clock.t += 0.03
        out.append(canceller.process(mic[i : i + 480].tobytes()))
    return b"".join(out)


def _vad(pcm: bytes) -> list[float]:
    vad = SileroVad()
    return [vad.probability(pcm[i : i + 1024]) for i in range(0, len(pcm) - 1024, 1024)]


def test_with_no_echo_the_user_over_the_voice_is_heard_as_they_said_it(
    speech: tuple[np.ndarray, np.ndarray],
) -> None:
    voice, user = speech
    clock = Clock()
    canceller = WebRtcEchoCanceller(clock=clock)
    _play(canceller, clock, voice, _room(voice, 0.0))
    assert canceller.path.absent and canceller.ready
    # The user goes on as the next reply's voice begins, which it pauses after 0.4 s:
    # their words come through whole.
    mic = _room(voice, 0.0)
    mic[: user.size] = np.clip(mic[: user.size].astype(np.int32) + user, -32768, 32767)
    out = _play(canceller, clock, voice[:6_400], mic)
    assert out == mic[: len(out) // 2].tobytes()
    heard = _vad(out[: user.size * 2])
    assert min(heard[2:8]) > 0.5, heard  # its first words, not suppressed
    assert canceller.path.absent  # half a second or two of the user is not an echo


def test_with_an_echo_it_is_cancelled_and_an_echo_that_appears_is_cancelled_again(
    speech: tuple[np.ndarray, np.ndarray],
) -> None:
    voice, _ = speech
    clock = Clock()
    canceller = WebRtcEchoCanceller(clock=clock)
    for gain in (0.3, 0.05, 0.01):  # a loud speaker, a quiet one, one 40 dB down
        out = _play(canceller, clock, voice, _room(voice, gain))
        assert not canceller.path.absent
        assert out != _room(voice, gain)[: len(out) // 2].tobytes()
    canceller.reset()
    _play(canceller, clock, voice, _room(voice, 0.0))
    assert canceller.path.absent
    # Headphones taken off: within 2 s of voice, it cancels again.
    clock.t += 1
    _play(canceller, clock, voice, _room(voice, 0.05)[:39_840])
    assert not canceller.path.absent


def test_silence_between_replies_decides_nothing() -> None:
    path = EchoPath()
    for _ in range(50):
        path.push(np.zeros(1600, dtype=np.int16), np.zeros(1600, dtype=np.int16))
    assert not path.absent
