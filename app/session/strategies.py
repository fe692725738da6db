"""When the user may interrupt the companion, and when the microphone is not heard at all
because the companion is speaking: small strategies behind one protocol (as Pipecat's
`turns/user_mute` strategies), each reading a `SpeakingView` kept from the signals.

    BargeIn           echo cancellation runs: speech over the voice (or while the reply
                      is prepared) pauses it and listens
    HalfDuplex        it does not: the microphone is not heard while the voice plays;
                      speech while the reply is prepared pauses it
    PushToTalkPress   pressing the talk key while it speaks or thinks interrupts it

The listener asks the strategy in force for each chunk (`mutes`, `cancels_echo`,
`may_interrupt`); the conductor asks `interrupts_on_press` when the key is pressed.
Whatever a strategy decides, the interruption itself is the session's one `interrupt()`
(a barge-in only pauses the voice until its words decide).
"""

from __future__ import annotations

from typing import Protocol

from app.config import AudioSettings
from app.session.speaking import SpeakingView


class MicState(Protocol):
    """What the strategies read of the microphone's gate (`MicGate`)."""

    @property
    def mode(self) -> str: ...


class EchoState(Protocol):
    """What the strategies read of the echo canceller."""

    @property
    def cancels(self) -> bool: ...


class InterruptionStrategy(Protocol):
    """One rule of who may speak over whom, asked for each microphone chunk."""

    def mutes(self, now: float) -> bool:
        """What the microphone hears now is dropped (it would be the companion's voice)."""
        ...

    def cancels_echo(self) -> bool:
        """The echo canceller processes the microphone now (its filter keeps up)."""
        ...

    def may_interrupt(self, now: float) -> bool:
        """The user's speech now, if long enough, pauses the companion's reply."""
        ...


class BargeIn:
    """Echo cancellation removes the companion's voice from the microphone, so the user
    can talk over it: while a turn runs the canceller processes the microphone, and
    speech over the voice pauses it (`BargeIns` then waits for words)."""

    def __init__(self, view: SpeakingView) -> None:
        self._view = view

    def mutes(self, now: float) -> bool:
        # Between turns the echo tail of the last reply is dropped as before: barge-in
        # listens through the voice only while a turn runs or a barge-in waits. When
        # the voice came back through the canceller this reply (`EchoLeaked`), the rest
        # of the reply is not listened through: half-duplex until it is over.
        view = self._view
        leaked = view.echo_leaked and not view.barge_pending
        return view.over_voice(now) and (leaked or not self.cancels_echo())

    def cancels_echo(self) -> bool:
        return self._view.busy or self._view.barge_pending

    def may_interrupt(self, now: float) -> bool:
        # Through the voice (the canceller removes it), and while the reply is prepared
        # or between its sentences: speech then is never dropped, it pauses the reply.
        view = self._view
        through_voice = view.over_voice(now)
        return view.busy and not view.barge_pending and not (through_voice and view.echo_leaked)


class HalfDuplex:
    """No echo cancellation (or barge-in is off): the microphone is not heard while the
    companion's voice plays and for its echo tail after."""

    def __init__(self, view: SpeakingView) -> None:
        self._view = view

    def mutes(self, now: float) -> bool:
        return self._view.over_voice(now)

    def cancels_echo(self) -> bool:
        return False

    def may_interrupt(self, now: float) -> bool:
        # Not over the voice (the microphone is not heard then); while the reply is
        # prepared or between its sentences the user's speech pauses it.
        view = self._view
        return view.busy and not view.barge_pending and not view.over_voice(now)


class PushToTalkPress:
    """With push-to-talk, pressing the key is the user's interruption: it stops the
    companion speaking or thinking."""

    def __init__(self, view: SpeakingView) -> None:
        self._view = view

    def interrupts_on_press(self) -> bool:
        return self._view.speaking or self._view.busy


class FloorRules:
    """The strategy in force: barge-in when it can work (on in the settings, the
    microphone always on, the canceller running, the sink feeding it), else half-duplex."""

    def __init__(
        self,
        audio: AudioSettings,
        gate: MicState,
        echo: EchoState,
        view: SpeakingView,
        *,
        continue_within_s: float = 0.0,
    ) -> None:
        self._audio = audio
        self._continue_within_s = continue_within_s
        self._gate = gate
        self._echo = echo
        self._view = view
        self._barge_in = BargeIn(view)
        self._half_duplex = HalfDuplex(view)
        self.push_to_talk = PushToTalkPress(view)

    @property
    def can_barge_in(self) -> bool:
        return (
            self._audio.barge_in
            and self._gate.mode == "always_on"
            and self._echo.cancels
            and self._view.has_far_end
        )

    def current(self) -> InterruptionStrategy:
        return self._barge_in if self.can_barge_in else self._half_duplex

    def continues(self, now: float) -> bool:
        """Speech heard at `now` goes on with the user's turn (the reply to it is
        withdrawn when it brings words) rather than interrupting a reply: the reply has
        not been heard for more than `turn.continue_within_s` yet."""
        return self._view.continuable(now, self._continue_within_s)


__all__ = [
    "BargeIn",
    "FloorRules",
    "HalfDuplex",
    "InterruptionStrategy",
    "PushToTalkPress",
]
