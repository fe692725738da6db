"""What the words said over the companion decide, in the simulated room (real Silero,
real WebRTC AEC3, real whisper on espeak-ng speech): an acknowledgement alone is not a
turn, and the companion speaks on; a request stands (tests/test_barge_in.py)."""

from __future__ import annotations

from pathlib import Path

from app.audio.simulated_room import SimulatedRoom
from tests.conftest import speak_to_wav
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_barge_in import LONG_REPLY, answered_in_room, in_room, transcripts, voice


async def test_an_acknowledgement_over_the_companion_is_not_a_turn_and_it_speaks_on(
    tmp_path: Path,
) -> None:
    nod = voice(speak_to_wav("Yeah, okay, sure.", tmp_path / "nod.wav"))
    with ScriptedChatServer([Reply.text_stream(LONG_REPLY[:2], delay=0.01)]) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = in_room(srv, room)
        room.say(nod, after_played_s=1.6)
        result = await answered_in_room(session, seen, room, 1)
    # It was long enough to pause the voice, and its words were heard ...
    assert session.barge.count == 1 and len(room.stopped_at) == 1
    # ... but they only acknowledged: the companion spoke on, nothing was asked again.
    assert session.barge.resumes == 1 and not result.interrupted
    assert transcripts(seen) == ["Tell me about the sea"] and len(srv.requests) == 1
    stored = session.agent.core.storage
    saved = stored.load("default", stored.list_histories("default")[0])
    assert "waves, tides and the moon" in saved[-1].text
    assert not saved[-1].metadata.get("interrupted")
