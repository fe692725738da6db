"""The voice session: `VoiceSession` conducts listening, turns, barge-in and
conversations over parts built from the settings.

    conductor.py      VoiceSession: lifecycle, public controls, the one interruption
    turn_desk.py      one turn at a time: the one in flight is interrupted first
    host_port.py      what hosts other than the window use (turn results, figures, idle)
    assembly.py       the parts built from Settings (starts nothing)
    listening.py      mic gate, level meter, VAD, barge-in detection → events
    listen_events.py  the events the listening side yields
    turn_taking.py    one listening loop's turn-taking: detector + turn model + hearing
    endpointing.py    when the user's turn is over (a pure state machine)
    hearing.py        transcribing the turn while the user speaks
    wording.py        what the words say: finished, a backchannel, the same words
    user_turns.py     partial words, speculative replies, the spoken turn when it ends
    speculation.py    a reply held until the turn is confirmed (or thrown away)
    barge_in.py       detected → words or timeout → resume or stand down
    turn.py           one turn: agent → sentences → TTS look-ahead → playback, what was heard
    conversations.py  the conversation list the window uses
    interruption.py   the one interruption: the generation counter every stage checks
    speaking.py       who is speaking, told one way: typed signals and each part's view
    strategies.py     barge-in, half-duplex, push-to-talk: when the user may interrupt
    captures.py       screenshots the user sees (and confirms)
"""

from app.agent.building import build_character, build_provider, build_vision, chat_model_facts
from app.session.assembly import build_speech, build_tts
from app.session.conductor import VoiceSession
from app.session.listening import trim_to_speech
from app.session.turn import TurnResult

__all__ = [
    "TurnResult",
    "VoiceSession",
    "build_character",
    "build_provider",
    "build_speech",
    "build_tts",
    "build_vision",
    "chat_model_facts",
    "trim_to_speech",
]
