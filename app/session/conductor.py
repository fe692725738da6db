"""VoiceSession: the conductor. It owns the session's lifecycle, its public controls and
the one interruption mechanism, and wires the parts together: the listener's events
become turns and barge-ins, turns run one at a time, and everything the presenters
need comes out as events (`app.events`); it never touches a presenter.

The Qt window and `companion turn` drive the same session, so every behaviour can be
tested without a screen or a sound card.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from app.agent.mcp import McpServer
from app.agent.storage import ConversationInfo, ConversationStorage
from app.audio.capture import AudioSource, MicrophoneSource, MicrophoneUnavailable
from app.audio.playback import AudioSink
from app.avatar.state import EXPRESSIONS
from app.config import Settings
from app.events import (
    EventHub,
    ExpressionChanged,
    MicLevel,
    MicStateChanged,
    Notice,
    PushToTalkChanged,
    Status,
    StatusChanged,
)
from app.heap import return_freed_memory
from app.llm import Msg
from app.media import ScreenGrabber
from app.session.assembly import assemble
from app.session.barge_in import BargeIns
from app.session.captures import CaptureDesk
from app.session.conversations import Conversations
from app.session.floor import Floor
from app.session.interruption import Interruptions, Scope
from app.session.listen_events import (
    BargeInHeard,
    ListenEvent,
    ListeningNote,
    MicBack,
    MicLost,
    PartialWords,
    SpeechResumed,
    SpeechStarted,
    UtteranceEnded,
    WordsCannotCome,
    WordsReady,
)
from app.session.listening import Listener, MicGate
from app.session.services import (
    load_all,
    load_chat_model,
    start_mcp_servers,
    vtube_studio_bridge,
)
from app.session.speaker import Speaker
from app.session.supervision import Supervisor
from app.session.turn import TurnResult, TurnRunner, transcribe
from app.session.user_turns import UserTurns
from app.speech import SpeechClient
from app.tts import TTSEngine

log = logging.getLogger(__name__)

TEST_SOUND_TAIL_S = 0.5  # a sound test's play-back still in the device's buffer
TESTING = "paused during a sound test"
_TurnMaker = Callable[[Scope], Coroutine[Any, Any, TurnResult]]


class VoiceSession:
    """One conversation with the companion, by voice or by typing."""

    expressions: tuple[str, ...] = EXPRESSIONS

    def __init__(
        self,
        settings: Settings,
        *,
        provider: Any = None,
        speech: SpeechClient | None = None,
        tts: TTSEngine | None = None,
        sink: AudioSink | None = None,
        source: AudioSource | None = None,
        storage: ConversationStorage | None = None,
        events: EventHub | None = None,
        history_uid: str | None = None,
    ) -> None:
        self.settings = settings
        self.events = events or EventHub()
        self.captures = CaptureDesk(self.events)
        self._grabber = ScreenGrabber()
        parts = assemble(
            settings,
            provider=provider,
            speech=speech,
            tts=tts,
            storage=storage,
            history_uid=history_uid,
            on_capture=self.captures.taken,
            confirm_capture=self.captures.confirm,
            grabber=self._grabber,
            on_notice=lambda text: self.events.emit(Notice(text)),
        )
        self.provider = parts.provider
        self.speech = parts.speech
        self.tts = parts.tts
        self.storage = parts.storage
        self.character = parts.character
        self.avatar_pack = parts.avatar_pack
        self.live2d_model = parts.live2d_model  # the user's own Live2D model, when chosen
        self.expressions = parts.expressions
        self.tools = parts.tools
        self.agent = parts.agent
        self.avatar = parts.avatar
        self.echo = parts.echo
        self.memory = parts.memory  # the character's long-term memory (the Memory page's)
        self.memory.subscribe(self.events.emit)
        self._vision_client = parts.vision_client
        self.notices = parts.notices  # told at start()
        self._source = source
        self.floor = Floor()
        self.interruptions = Interruptions()
        self.gate = MicGate(settings.audio.mic_mode)
        self.listener = Listener(settings, self.gate, self.floor, self.echo, self.speech)
        self.barge = BargeIns(
            self.floor, self.transcribe, resume_timeout_s=settings.audio.resume_timeout_s
        )
        self.turns = TurnRunner(
            settings,
            agent=self.agent,
            speech=self.speech,
            tts=self.tts,
            avatar=self.avatar,
            floor=self.floor,
            barge_ins=self.barge,
            events=self.events,
        )
        self.user_turns = UserTurns(
            settings,
            turns=self.turns,
            floor=self.floor,
            barge=self.barge,
            events=self.events,
            interruptions=self.interruptions,
            run_exclusive=self._run_exclusive,
            spawn=self._spawn,
        )
        self.conversation_list = Conversations(self.storage, self.agent, self.events)
        self.sink = sink
        self.speaker = Speaker(settings.audio, self.floor, self.events, self._use_sink)
        self._mcp_servers: list[McpServer] = []
        self._vts_unsubscribe: Callable[[], None] | None = None
        self.vtube_studio: Any = None  # the VTube Studio bridge, when it is the renderer
        self._supervisor = Supervisor(
            self.events.emit,
            lambda text: self.agent.core.redactor(text),
            lambda words: self._status(Status.ERROR),  # the notice has the words
        )
        self._tasks = self._supervisor.tasks
        self._listening = 0  # listen() loops running
        self._closed = False

    # ----- the parts' state, as presenters and tests read it ------------------------
    @property
    def sink(self) -> AudioSink | None:
        """Where replies are heard (None: shown only)."""
        return self.floor.sink

    @sink.setter
    def sink(self, sink: AudioSink | None) -> None:
        self.floor.sink = sink
        if sink is not None and hasattr(sink, "far_end"):
            sink.far_end = self.echo.far_end  # what it plays is the canceller's far end

    def _use_sink(self, sink: AudioSink) -> None:
        self.sink = sink

    @property
    def busy(self) -> bool:
        return self.floor.busy

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def can_barge_in(self) -> bool:
        return self.listener.can_barge_in

    @property
    def mic_mode(self) -> str:
        return self.gate.mode

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        """The user's answer to a `CaptureRequested`."""
        self.captures.answer(request_id, allowed)

    # ----- supervision ---------------------------------------------------------------
    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        return self._supervisor.spawn(coro, name)

    def _status(self, status: Status, detail: str = "") -> None:
        self.events.emit(StatusChanged(status, detail))

    def _idle_status(self) -> Status:
        return Status.LISTENING if self.gate.enabled else Status.MUTED

    def _ready_status(self) -> Status:
        """After a turn: listening (or muted) when something listens, else ready to type."""
        return self._idle_status() if self._listening else Status.IDLE

    # ----- lifecycle ------------------------------------------------------------------
    async def start(self, *, listen: bool = True) -> None:
        """Open the sound devices and load the models in the background."""
        self._status(Status.LOADING, "loading the speech and chat models")
        for notice in self.notices:
            self.events.emit(Notice(notice, error=True))
        self.notices.clear()
        if self.settings.mcp.servers and self.agent.core.enable_tool:
            self._spawn(self.start_mcp_servers(), "mcp-servers")
        if self.sink is None:  # ours to find, and to find again whenever it is gone
            await self.speaker.connect()
            self._spawn(self.speaker.keep(), "speaker")
        self._spawn(self._idle_expression_loop(), "avatar-idle")
        self._spawn(self.conversation_list.keep_saving(), "history-saving")
        self._start_vtube_studio()
        await self.load_models()
        if listen:
            if self._source is None:
                try:
                    name = MicrophoneSource.check_available(self.settings.audio.input_device)
                    self._source = MicrophoneSource(self.settings.audio.input_device)
                    self.events.emit(MicStateChanged(True, True, name))
                except MicrophoneUnavailable as exc:
                    self.gate.enabled = False
                    self.events.emit(MicStateChanged(False, False, str(exc)))
                    self._status(Status.IDLE, "no microphone: type your messages")
                    return
            self._spawn(self._listen_to_microphone(), "listen")
        self._status(Status.LISTENING if listen and self.gate.enabled else Status.IDLE)

    async def load_models(self) -> None:
        """Load what can be loaded ahead; a failure becomes a notice, not a crash."""
        loaders: list[tuple[str, Any]] = [
            ("speech recognition", self.speech.load()),
            ("turn model", self.listener.load()),
        ]
        if callable(getattr(self.provider, "load", None)):
            warm_up = self.settings.chat.model.startswith("local/")  # a hosted one bills
            chat = load_chat_model(self.provider, self.events, self.agent.core if warm_up else None)
            loaders.append(("chat model", chat))
        tts_load = getattr(self.tts, "load", None)
        if callable(tts_load):
            loaders.append(("voice", tts_load()))
        loaders.append(("memory", asyncio.to_thread(self.memory.open)))
        await load_all(loaders, self.events)
        self.memory.resume()
        self.agent.read_ahead()  # the first turn finds the notes read too

    async def start_mcp_servers(self) -> None:
        """Start the MCP servers in the config and offer their tools to the model."""
        servers = await start_mcp_servers(self.settings.mcp.servers, self.tools, self.events)
        self._mcp_servers.extend(servers)

    def _start_vtube_studio(self) -> None:
        """Drive a VTube Studio model from the expression and mouth events, on a task
        that reconnects by itself (with `avatar.renderer = "vtube_studio"`)."""
        if self._vts_unsubscribe is not None:
            return
        bridge = vtube_studio_bridge(
            self.settings, self.events, on_token=self.agent.core.redactor.add
        )
        if bridge is None:
            return
        self.vtube_studio = bridge
        self._vts_unsubscribe = self.events.subscribe(bridge.handle)
        self._spawn(bridge.run(), "vtube-studio")

    async def aclose(self, *, memory_wait_s: float | None = None) -> None:
        """Stop everything; the turns queued for the memory are looked at for up to
        `memory_wait_s` first (default `app.memory.writer.CLOSE_WAIT_S`)."""
        if self._closed:
            return
        self._closed = self._supervisor.closing = True
        self.turns.keep_face()  # no face reset after the session is gone
        if self._vts_unsubscribe is not None:
            self._vts_unsubscribe()  # the bridge's task is cancelled with the others below
            self._vts_unsubscribe = None
        self.interrupt()
        await self._supervisor.cancel_all()
        if self._source is not None:
            await self._source.aclose()
        if self.sink is not None:
            await self.sink.aclose()
        await self.tts.aclose()
        for server in self._mcp_servers:
            with contextlib.suppress(Exception):
                await server.aclose()
        self._grabber.close()
        self.captures.refuse_all()
        with contextlib.suppress(Exception):  # before the model goes: it may be asked
            await self.memory.aclose(*(() if memory_wait_s is None else (memory_wait_s,)))
        for client in (self.provider, self._vision_client):
            close = getattr(client, "aclose", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    await close()

    # ----- controls -------------------------------------------------------------------
    def interrupt(self) -> None:
        """Stop speaking and thinking now; what was heard is kept in memory.

        The one interruption: every stage of the turn in flight checks its scope, and
        stopping the sink, cancelling the turn and ending a barge-in's wait hang off it.
        """
        self.interruptions.interrupt()

    def set_mic_enabled(self, enabled: bool) -> None:
        self.gate.set_enabled(enabled)
        available = self._source is not None
        self.events.emit(MicStateChanged(enabled and available, available))
        if available:
            self._status(Status.LISTENING if enabled else Status.MUTED)

    def set_mic_mode(self, mode: str) -> None:
        """`always_on` (the VAD decides), `push_to_talk` (only while held) or `muted`."""
        self.gate.set_mode(mode)
        self.set_mic_enabled(mode != "muted")

    def set_push_to_talk(self, pressed: bool) -> None:
        """The push-to-talk key or button: speech counts only while it is held, and
        releasing it ends the utterance at once. Pressing it while the companion speaks
        interrupts it."""
        if self.gate.mode != "push_to_talk":
            return
        if pressed and not self.gate.held and (self.floor.speaking or self.busy):
            self.interrupt()
        if self.gate.hold(pressed):
            self.events.emit(PushToTalkChanged(pressed))

    def set_turns_paused(self, paused: bool) -> None:
        """While paused (a sound test records or plays), what the microphone hears is
        dropped, so nothing of a test becomes a turn. Pauses nest; the end of the last
        one leaves the test's sound a moment to die away."""
        if self.gate.pause(paused):
            self.floor.echo_until = time.perf_counter() + TEST_SOUND_TAIL_S
        if self._listening and not self.busy:  # (while it loads, the status stays)
            self._status(*((Status.MUTED, TESTING) if paused else (self._idle_status(),)))

    # ----- conversations --------------------------------------------------------------
    @property
    def conversation_id(self) -> str:
        return self.conversation_list.current

    def conversations(self) -> list[ConversationInfo]:
        """Every saved conversation, oldest first (the last one is resumed at start)."""
        return self.conversation_list.all()

    def history_messages(self) -> list[Msg]:
        """The current conversation's messages, for a presenter to show."""
        return self.conversation_list.messages()

    async def new_conversation(self) -> str:
        """Start an empty conversation (a turn in flight is interrupted first)."""
        uid = self.conversation_list.create()
        await self.switch_conversation(uid)
        return uid

    async def switch_conversation(self, uid: str) -> None:
        """Talk in conversation `uid` from now on; the model remembers only it."""
        self.conversation_list.require(uid)
        await self._settle()
        self.conversation_list.switch(uid)

    def rename_conversation(self, uid: str, title: str) -> None:
        self.conversation_list.rename(uid, title)

    async def delete_conversation(self, uid: str) -> None:
        """Delete a conversation for good; deleting the current one moves to the newest
        remaining one (or a new, empty one)."""
        current = uid == self.conversation_id
        if current:
            await self._settle()
        following = self.conversation_list.delete(uid)
        if following is not None:
            await self.switch_conversation(following)

    # ----- turns ----------------------------------------------------------------------
    async def send_text(self, text: str) -> TurnResult:
        """A typed message: a turn without speech recognition."""
        started = time.perf_counter()
        return await self._run_exclusive(lambda scope: self.turns.from_text(text, started, scope))

    async def turn_from_pcm(self, pcm: bytes) -> TurnResult:
        """One spoken turn from 16 kHz s16le PCM whose speech has just ended."""
        ended = time.perf_counter()
        return await self._run_exclusive(lambda scope: self.turns.from_pcm(pcm, ended, scope))

    async def transcribe(self, pcm: bytes) -> str:
        return await transcribe(self.speech, pcm)

    async def _settle(self) -> None:
        """Interrupt a turn in flight and wait until it has saved what was heard."""
        turn = self.floor.turn
        if turn is not None and not turn.done():
            self.interrupt()
            with contextlib.suppress(BaseException):
                await turn

    async def _run_exclusive(self, make: _TurnMaker) -> TurnResult:
        """Run one turn at a time: the one in flight is interrupted first (and a held
        speculative reply is thrown away)."""
        self.user_turns.drop_speculation()
        await self._settle()
        scope = self.interruptions.scope()
        task: asyncio.Task[TurnResult] = asyncio.create_task(make(scope))
        self.floor.turn = task
        with scope.hooked(task.cancel), self.memory.hold():
            try:
                result = await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    raise  # our caller was cancelled; the turn goes on
                result = TurnResult(self.turns.turn_ids, "", interrupted=True)
        if not self._closed and not self.busy:
            if result.interrupted:
                self._status(self._ready_status(), "interrupted")
            elif result.error is None and result.heard:
                self._status(self._ready_status())
        log.info("turn %d timings %s", result.turn_id, result.timings_ms)
        self._spawn(asyncio.to_thread(return_freed_memory), "return-freed-memory")
        return result

    # ----- listening ------------------------------------------------------------------
    async def listen(self, source: AudioSource) -> None:
        """Listen continuously: VAD endpointing, then one turn per utterance."""
        await self._follow(self.listener.events(source))

    async def _listen_to_microphone(self, retry_s: float = 3.0) -> None:
        """Listen; when the microphone goes away, say so and resume when it is back."""
        assert self._source is not None
        device = self.settings.audio.input_device
        await self._follow(self.listener.microphone(self._source, device, retry_s=retry_s))

    async def _follow(self, heard: AsyncIterator[ListenEvent]) -> None:
        self._listening += 1
        try:
            async for event in heard:
                self._on_heard(event)
        finally:
            self._listening -= 1
            self.barge.decide(resume=True)

    def _on_heard(self, event: ListenEvent) -> None:
        if isinstance(event, MicLevel):
            self.events.emit(event)
        elif isinstance(event, SpeechStarted):
            self.memory.activity()  # the model is for the turn that may follow
            if not self.busy:
                self._status(Status.HEARING)
        elif isinstance(event, BargeInHeard):
            decision = self.barge.detected(event.speech_ms)
            # An interruption meanwhile (Esc, a new turn) ends the wait: it stands.
            self.interruptions.scope().on_interrupt(lambda: self.barge.decide(resume=False))
            self._status(Status.HEARING, "interrupted")
            self._spawn(
                self.barge.watch(decision, lambda: self.listener.in_speech), "barge-in-watchdog"
            )
        elif isinstance(event, WordsCannotCome):
            self.barge.decide(resume=True)
        elif isinstance(event, MicLost):
            self.events.emit(MicStateChanged(False, False, event.reason))
            self._status(Status.IDLE, "the microphone is gone: type your messages")
        elif isinstance(event, MicBack):
            self._source = event.source
            self.events.emit(MicStateChanged(self.gate.enabled, True, event.name))
            self._status(self._idle_status())
        elif isinstance(event, UtteranceEnded):
            self.user_turns.ended(event)
        elif isinstance(event, PartialWords | WordsReady | SpeechResumed | ListeningNote):
            self.user_turns.heard(event)

    async def _idle_expression_loop(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if not self.busy and self.avatar.tick():
                self.events.emit(ExpressionChanged("neutral"))
