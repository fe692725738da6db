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
from collections.abc import AsyncIterator, Callable
from typing import Any

from app.agent.mcp import McpServer, start_mcp_servers
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
from app.session.hearing import transcribe
from app.session.host_port import SessionHost
from app.session.interruption import Interruptions
from app.session.known_names import KnownNames
from app.session.listen_events import (
    BargeInHeard,
    ListenEvent,
    ListeningNote,
    MicBack,
    MicLost,
    PartialWords,
    SpeechResumed,
    UserStartedSpeaking,
    UserStoppedSpeaking,
    WordsCannotCome,
    WordsReady,
)
from app.session.listening import Listener, MicGate
from app.session.services import (
    load_all,
    load_chat_model,
    vtube_studio_bridge,
)
from app.session.speaker import Speaker
from app.session.speaking import (
    Signals,
    SoundTestEnded,
    SpeakingView,
)
from app.session.supervision import Supervisor
from app.session.turn_desk import TurnDesk, TurnMaker
from app.session.turn_result import TurnResult
from app.session.turn_runner import TurnRunner
from app.session.user_turns import UserTurns
from app.speech import SpeechClient
from app.speech.contract import hurried
from app.tts import LoadingTTSEngine, TTSEngine

log = logging.getLogger(__name__)

TEST_SOUND_TAIL_S = 0.5  # a sound test's play-back still in the device's buffer
TESTING = "paused during a sound test"


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
        # The settings this session runs with, fixed at its start: a change saved while
        # it runs applies at the next start, to every part alike (`self.settings` is the
        # app's live object, which the shell saves its own state into).
        self.settings = settings
        settings = self._running = settings.model_copy(deep=True)
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
        self.known_names = KnownNames(self.speech, self.memory)
        self._vision_client = parts.vision_client
        self.notices = parts.notices  # told at start()
        self._source = source
        # Who is speaking is told one way, by signals; each part keeps its own view.
        self.signals = Signals()
        self.interruptions = Interruptions()
        self.gate = MicGate(settings.audio.mic_mode)
        view = SpeakingView(self.signals)
        self.listener = Listener(settings, self.gate, view, self.echo, self.speech, self.signals)
        self.barge = BargeIns(
            self.signals, self.transcribe, resume_timeout_s=settings.audio.resume_timeout_s
        )
        self.turns = TurnRunner(
            settings,
            agent=self.agent,
            speech=self.speech,
            tts=self.tts,
            avatar=self.avatar,
            signals=self.signals,
            events=self.events,
        )
        self.user_turns = UserTurns(
            settings,
            turns=self.turns,
            signals=self.signals,
            barge=self.barge,
            events=self.events,
            interruptions=self.interruptions,
            run_exclusive=self._run_exclusive,
            spawn=self._spawn,
        )
        self.desk = TurnDesk(
            self.signals,
            self.interruptions,
            before_each=self.user_turns.drop_speculation,
            hold=self.memory.hold,
            turn_ids=lambda: self.turns.turn_ids,
        )
        self.conversation_list = Conversations(self.storage, self.agent, self.events)
        self.speaker = Speaker(settings.audio, self.signals, self.events, self._connect_far_end)
        self.speaker.use(sink)
        self._mcp_servers: list[McpServer] = []
        # The VTube Studio bridge when it is the renderer: from start() on it follows the
        # expression and mouth events, on a task that reconnects by itself.
        self.vtube_studio = vtube_studio_bridge(
            settings, self.events, on_token=self.agent.core.redactor.add
        )
        self._vts_unsubscribe: Callable[[], None] | None = None
        self.supervisor = Supervisor(
            self.events.emit,
            lambda text: self.agent.core.redactor(text),
            lambda words: self._status(Status.ERROR),  # the notice has the words
        )
        self._listening = 0  # listen() loops running
        self.host = SessionHost(  # what `companion turn --live` and the benchmarks use
            turns=self.turns,
            user_turns=self.user_turns,
            barge=self.barge,
            listener=self.listener,
            tasks=self.supervisor.tasks,
            busy=lambda: self.busy,
            view=SpeakingView(self.signals, self.speaker.sink),
        )
        self._closed = False

    # ----- the parts' state, as presenters and tests read it ------------------------
    @property
    def sink(self) -> AudioSink | None:
        """Where replies are heard (None: shown only)."""
        return self.speaker.sink

    @sink.setter
    def sink(self, sink: AudioSink | None) -> None:
        self.speaker.use(sink)

    def _connect_far_end(self, sink: AudioSink) -> None:
        if hasattr(sink, "far_end"):
            sink.far_end = self.echo.far_end  # what it plays is the canceller's far end

    @property
    def busy(self) -> bool:
        return self.desk.busy

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
        return self.supervisor.spawn(coro, name)

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
        if self._running.mcp.servers and self.agent.core.enable_tool:
            self._spawn(self.start_mcp_servers(), "mcp-servers")
        if self.sink is None:  # ours to find, and to find again whenever it is gone
            await self.speaker.connect()
            self._spawn(self.speaker.keep(), "speaker")
        self._spawn(self._idle_expression_loop(), "avatar-idle")
        self._spawn(self.conversation_list.keep_saving(), "history-saving")
        if self.vtube_studio is not None and self._vts_unsubscribe is None:
            self._vts_unsubscribe = self.events.subscribe(self.vtube_studio.handle)
            self._spawn(self.vtube_studio.run(), "vtube-studio")
        await self.load_models()
        if listen:
            if self._source is None:
                try:
                    name = MicrophoneSource.check_available(self._running.audio.input_device)
                    self._source = MicrophoneSource(self._running.audio.input_device)
                    self.events.emit(MicStateChanged(True, True, name))
                except MicrophoneUnavailable as exc:
                    self.gate.enabled = False
                    self.events.emit(MicStateChanged(False, False, str(exc)))
                    self._status(Status.IDLE, "no microphone: type your messages")
                    return
            self._spawn(self.listen_to_microphone(self._source), "listen")
        self._status(Status.LISTENING if listen and self.gate.enabled else Status.IDLE)

    async def load_models(self) -> None:
        """Load what can be loaded ahead; a failure becomes a notice, not a crash."""
        loaders: list[tuple[str, Any]] = [
            ("speech recognition", self.speech.load()),
            ("turn model", self.listener.load()),
        ]
        core = self.agent.core  # its provider: the chat model as a `ModelClient`
        warm_up = self._running.chat.model.startswith("local/")  # a hosted one bills
        chat = load_chat_model(core.provider, self.events, core if warm_up else None)
        loaders.append(("chat model", chat))
        if isinstance(self.tts, LoadingTTSEngine):
            loaders.append(("voice", self.tts.load()))
        loaders.append(("memory", asyncio.to_thread(self.memory.open)))
        await load_all(loaders, self.events)
        self.memory.resume()
        self.known_names.refresh()  # the recognizer listens for the names it knows
        self.agent.read_ahead()  # the first turn finds the notes read too

    async def start_mcp_servers(self) -> None:
        """Start the MCP servers in the config and offer their tools to the model."""
        servers, problems = await start_mcp_servers(self._running.mcp.servers, self.tools)
        self._mcp_servers.extend(servers)
        for problem in problems:  # those that cannot start are told about and left out
            self.events.emit(Notice(problem, error=True))

    async def aclose(self, *, memory_wait_s: float | None = None) -> None:
        """Stop everything; the memory's queued turns get up to `memory_wait_s` first."""
        if self._closed:
            return
        self._closed = self.supervisor.closing = True
        self.turns.keep_face()  # no face reset after the session is gone
        if self._vts_unsubscribe is not None:
            self._vts_unsubscribe()  # the bridge's task is cancelled with the others below
            self._vts_unsubscribe = None
        self.interrupt()
        await self.supervisor.cancel_all()
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
        with contextlib.suppress(Exception):
            await self.agent.core.provider.aclose()
        if self._vision_client is not None:
            with contextlib.suppress(Exception):
                await self._vision_client.aclose()

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
        press = self.listener.rules.push_to_talk
        if pressed and not self.gate.held and press.interrupts_on_press():
            self.interrupt()
        if self.gate.hold(pressed):
            self.events.emit(PushToTalkChanged(pressed))

    def set_turns_paused(self, paused: bool) -> None:
        """While paused (a sound test records or plays), what the microphone hears is
        dropped, so nothing of a test becomes a turn. Pauses nest; the end of the last
        one leaves the test's sound a moment to die away."""
        if self.gate.pause(paused):
            self.signals.emit(SoundTestEnded(time.perf_counter() + TEST_SOUND_TAIL_S))
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
        await self.desk.settle()
        self.conversation_list.switch(uid)

    def rename_conversation(self, uid: str, title: str) -> None:
        self.conversation_list.rename(uid, title)

    async def delete_conversation(self, uid: str) -> None:
        """Delete a conversation; deleting the current one moves to the newest left."""
        current = uid == self.conversation_id
        if current:
            await self.desk.settle()
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

    async def transcribe(self, pcm: bytes, *, hurry: bool = True) -> str:
        """A barge-in's words, in a hurry (the companion is paused for them); a going-on's
        (`hurry=False`) as carefully as any turn's: it is one."""
        with hurried() if hurry else contextlib.nullcontext():
            return await transcribe(self.speech, pcm)

    async def _run_exclusive(self, make: TurnMaker, *, spoken: bool = False) -> TurnResult:
        """One turn at a time (`TurnDesk`), then the status the turn leaves."""
        result = await self.desk.run(make, spoken=spoken)
        if not self._closed and not self.busy:
            if result.interrupted:
                self._status(self._ready_status(), "interrupted")
            elif result.error is None and result.user_words:
                self._status(self._ready_status())
        self._spawn(asyncio.to_thread(return_freed_memory), "return-freed-memory")
        return result

    # ----- listening ------------------------------------------------------------------
    async def listen(self, source: AudioSource) -> None:
        """Listen continuously: VAD endpointing, then one turn per utterance."""
        await self._follow(self.listener.events(source))

    async def listen_to_microphone(self, source: AudioSource, retry_s: float = 3.0) -> None:
        """Listen; when the microphone goes away, say so and resume when it is back."""
        self._source = source
        device = self._running.audio.input_device
        await self._follow(self.listener.microphone(source, device, retry_s=retry_s))

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
            if self.listener.in_speech:  # no side request while the user has the floor:
                self.memory.activity()  # the CPU is the recognizer's, then the turn's
        elif isinstance(event, UserStartedSpeaking):
            self.memory.activity()  # the model is for the turn that may follow
            if not self.busy:
                self._status(Status.HEARING)
        elif isinstance(event, BargeInHeard):
            number = self.barge.detected(event.speech_ms, continues=event.continues)
            # An interruption meanwhile (Esc, a new turn) ends the wait: it stands.
            self.interruptions.scope().on_interrupt(lambda: self.barge.decide(resume=False))
            self._status(Status.HEARING, "" if event.continues else "interrupted")
            self._spawn(
                self.barge.watch(number, lambda: self.listener.in_speech), "barge-in-watchdog"
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
        elif isinstance(event, UserStoppedSpeaking):
            self.user_turns.ended(event)
        elif isinstance(event, PartialWords | WordsReady | SpeechResumed | ListeningNote):
            self.user_turns.words(event)

    async def _idle_expression_loop(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if not self.busy and self.avatar.tick():
                self.events.emit(ExpressionChanged("neutral"))
