"""The one resampler (soxr): speech passes, what would alias is removed, chunks have no
seams, and a stream's output stays lined up with its input however late it comes out."""

from __future__ import annotations

import numpy as np
import pytest

from app.audio.format import SAMPLE_RATE as RATE
from app.audio.resample import StreamResampler, resample


def streamed(rs: StreamResampler, signal: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out, i = [], 0
    for size in sizes:
        out.append(rs.push(signal[i : i + size]))
        i += int(size)
        if i >= signal.size:
            break
    return np.concatenate([*out, rs.flush()])


@pytest.mark.parametrize("rate", [48_000, 44_100, 22_050, 8_000])
def test_the_resampler_keeps_speech_and_removes_what_would_alias(rate: int) -> None:
    """1 kHz and 6 kHz pass at full level; a tone above 8 kHz (which would fold back
    into the speech band) is gone; any chunking gives the same samples."""
    t = np.arange(rate) / rate

    def level(freq: float) -> float:
        rs = StreamResampler(rate)
        tone = np.sin(2 * np.pi * freq * t)
        out = np.concatenate([rs.push(tone), rs.flush()])[400:-400]
        return float(np.sqrt(2 * np.mean(out**2)))

    assert level(1000) == pytest.approx(1.0, abs=0.01)
    assert level(min(6000, 0.4 * rate)) == pytest.approx(1.0, abs=0.05)
    if rate > RATE:
        assert level(12_000) < 1e-3  # would fold back to 4 kHz
    signal = np.random.default_rng(0).normal(0, 0.1, rate).astype(np.float32)
    whole = resample(signal, rate)
    assert whole.size == RATE
    sizes = np.random.default_rng(1).integers(1, 2000, 10_000)
    np.testing.assert_allclose(streamed(StreamResampler(rate), signal, sizes), whole, atol=1e-5)


def test_the_resampler_has_no_seams_between_chunks() -> None:
    """The speaker's reference (int16 values, 22.05 kHz) in 40 ms chunks is the whole
    sentence resampled at once."""
    rng = np.random.default_rng(1)
    signal = (np.sin(np.arange(22_050) * 2 * np.pi * 300 / 22_050) * 8000).astype(np.int16)
    signal += rng.integers(-50, 50, signal.size).astype(np.int16)
    whole = resample(signal, 22_050)
    pieces = streamed(StreamResampler(22_050), signal, np.full(100, 882))
    assert pieces.size == whole.size == 16_000
    assert np.max(np.abs(whole - pieces)) < 0.5  # the same samples (float rounding aside)


@pytest.mark.parametrize("rate", [48_000, 44_100, 24_000, 22_050])
def test_a_stream_is_lined_up_with_its_input_and_says_what_it_still_owes(rate: int) -> None:
    """soxr hands output out in blocks: `pending` samples are owed at any moment, and
    they are the ones `flush` returns; output sample k is still input time k / 16 kHz."""
    impulse_at = rate // 4
    signal = np.zeros(rate // 2, np.float32)
    signal[impulse_at] = 1.0
    rs = StreamResampler(rate)
    step = rate // 100  # 10 ms, as the sound device sink publishes it
    out, owed = [], []
    for start in range(0, signal.size, step):
        out.append(rs.push(signal[start : start + step]))
        pushed = min(start + step, signal.size)
        owed.append(round(pushed * RATE / rate) - sum(o.size for o in out))
        assert abs(rs.pending - owed[-1]) <= 1
    tail = rs.flush()
    assert abs(tail.size - owed[-1]) <= 1
    assert 0 < np.mean(owed) <= 0.03 * RATE  # about 22 ms on average (measured)
    assert max(owed) <= 0.045 * RATE
    whole = np.concatenate([*out, tail])
    assert whole.size == RATE // 2
    assert int(np.argmax(whole)) == round(impulse_at * RATE / rate)
    assert rs.pending == 0  # flushed: the stream starts afresh


def test_the_same_rate_passes_through_as_a_copy() -> None:
    buffer = np.arange(512, dtype=np.float32)
    rs = StreamResampler(RATE)
    out = rs.push(buffer)
    buffer[:] = 0  # PortAudio reuses its buffer after the callback
    assert out[511] == 511 and rs.pending == 0 and rs.flush().size == 0
