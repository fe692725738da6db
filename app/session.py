"""VoiceSession: the conductor that wires listening, the agent, speech and the avatar.

The Qt window and `companion turn` drive the same session, so every behaviour
can be tested without a screen or a sound card. The session emits events
(`app.events`); it never touches a presenter.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.agent import AgentCore, AgentTurnError, BatchInput, MemoryAgent, SentenceOutput, ToolStatus
from app.agent.mcp import McpServer
from app.agent.persona import Character, CharacterError, load_character
from app.agent.prompt import TOOLS_HINT
from app.agent.storage import ConversationInfo, ConversationStorage, FileStorage
from app.agent.tools import ToolRegistry, builtin_tools, command_tool
from app.agent.vision import VisionSummarizer
from app.audio.capture import AudioSource, MicrophoneSource, MicrophoneUnavailable
from app.audio.echo import EchoCanceller, HalfDuplex, create_echo_canceller
from app.audio.playback import AudioSink, Heard, PlaybackError, PlaybackReport, SoundDeviceSink
from app.audio.vad import (
    FRAME_BYTES,
    BargeInDetector,
    Endpointer,
    EndpointerConfig,
    SileroVad,
    VadEventKind,
    frames,
)
from app.avatar.pack import AvatarPack, expressions_for, load_pack_or_default
from app.avatar.state import EXPRESSIONS, ExpressionState
from app.config import Settings, data_dir
from app.events import (
    AssistantSentence,
    CaptureRequested,
    CaptureTaken,
    ConversationChanged,
    EventHub,
    ExpressionChanged,
    LoadProgress,
    MicLevel,
    MicStateChanged,
    MouthLevel,
    Notice,
    PushToTalkChanged,
    Status,
    StatusChanged,
    ToolUsed,
    TurnFinished,
    UserTranscript,
)
from app.llm import Msg
from app.media import Capture, ScreenGrabber
from app.speech import SpeechClient, SpeechConfig, SpeechError, create_speech_client
from app.tts import SynthesizedAudio, TTSEngine, TTSError

log = logging.getLogger(__name__)

CONF_UID = "default"
LEVEL_BYTES = 16000 * 2 // 10  # the level meter's window: 100 ms of 16 kHz s16le
STILL_WAITING_S = 4.0  # a hosted model this slow to start answering: "still waiting"


@dataclass(slots=True)
class TurnResult:
    turn_id: int
    heard: str
    sentences: list[SentenceOutput] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    interrupted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "heard": self.heard,
            "sentences": [
                {
                    "text": s.display_text,
                    "spoken": s.tts_text,
                    "expressions": list(s.actions.expressions),
                    "thinking": s.is_thinking,
                }
                for s in self.sentences
            ],
            "timings_ms": {
                k: round(v, 1)
                for k, v in sorted(self.timings_ms.items(), key=lambda kv: _stage_order(kv[0]))
            },
            "error": self.error,
            "interrupted": self.interrupted,
        }


_STAGES = (
    "transcript_ms",
    "request_sent_ms",
    "first_token_ms",
    "first_sentence_ms",
    "first_audio_ms",
    "total_ms",
)


def _stage_order(key: str) -> int:
    return _STAGES.index(key) if key in _STAGES else len(_STAGES)


def build_provider(settings: Settings) -> Any:
    """The chat model client for `settings.chat` (connects nothing yet)."""
    from app.llm import create_provider_client

    chat = settings.chat
    return create_provider_client(
        chat.model,
        api_style=chat.api_style,
        api_key=chat.api_key.get_secret_value() if chat.api_key else None,
        base_url=chat.base_url,
        timeout=chat.timeout_s,
        model_path=chat.local_model_path,
        n_threads=chat.local_threads,
        n_ctx=chat.local_context,
    )


def build_character(settings: Settings) -> tuple[Character, str | None]:
    """The character (file, then the `persona` settings set explicitly) and a problem
    to tell the user, if its file could not be used."""
    persona = settings.persona
    problem = None
    try:
        character = load_character(persona.character_file)
    except CharacterError as exc:
        problem = f"{exc} The default character is used instead."
        character = load_character()
    updates: dict[str, Any] = {}
    if "name" in persona.model_fields_set or persona.character_file is None:
        updates["name"] = persona.name
    if persona.system_prompt:
        updates["system_prompt"] = persona.system_prompt
    return character.model_copy(update=updates), problem


def chat_model_facts(settings: Settings) -> tuple[bool, int | None]:
    """(can the chat model see images, its context window) from settings or the catalogue."""
    from app.llm import parse_model_route
    from app.llm.catalogue import model_info

    agent = settings.agent
    try:
        route = parse_model_route(settings.chat.model)
        info = model_info(route.provider, route.model)
        local = route.provider == "local"
    except ValueError:
        return bool(agent.chat_supports_vision), agent.context_window
    vision = info.vision if agent.chat_supports_vision is None else agent.chat_supports_vision
    window = agent.context_window or (settings.chat.local_context if local else info.context_window)
    return vision, window


def build_vision(settings: Settings) -> tuple[Any, VisionSummarizer | None]:
    """The vision model's client and summarizer, when one is configured."""
    from app.llm import create_provider_client

    agent = settings.agent
    if not agent.vision_model:
        return None, None
    client = create_provider_client(
        agent.vision_model,
        api_style=agent.vision_api_style,
        api_key=agent.vision_api_key.get_secret_value() if agent.vision_api_key else None,
        base_url=agent.vision_base_url,
        timeout=settings.chat.timeout_s,
    )
    return client, VisionSummarizer(client, agent.vision_model.split("/", 1)[-1])


def build_speech(settings: Settings) -> SpeechClient:
    sp = settings.speech
    keys = {sp.adapter: sp.api_key} if sp.api_key else {}
    client = create_speech_client(
        SpeechConfig(
            enabled=True,
            adapter=sp.adapter,
            endpoint=sp.endpoint,
            model=sp.model,
            model_path=sp.model_path,
            language=sp.language,
            threads=sp.threads,
            provider_api_keys=keys,
            app_id=sp.app_id,
            resource_id=sp.resource_id,
            partial_interval_s=sp.partial_interval_s,
            timeout_s=sp.timeout_s,
        )
    )
    assert client is not None
    return client


def build_tts(settings: Settings) -> TTSEngine:
    from app.tts import create_tts_engine

    return create_tts_engine(settings.tts)


async def _one_chunk(pcm: bytes) -> AsyncIterator[bytes]:
    step = 32_000
    for i in range(0, len(pcm), step):
        yield pcm[i : i + step]


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
        self.provider = provider if provider is not None else build_provider(settings)
        self.speech = speech if speech is not None else build_speech(settings)
        self.tts = tts if tts is not None else build_tts(settings)
        self.sink = sink
        self._source = source
        self.storage = storage if storage is not None else FileStorage(data_dir() / "history")
        uids = self.storage.list_histories(CONF_UID)
        history_uid = history_uid or (uids[-1] if uids else self.storage.create_history(CONF_UID))
        route_model = settings.chat.model.split("/", 1)[-1]
        self._notices: list[str] = []
        self._capture_waiters: dict[int, asyncio.Future[bool]] = {}
        self._capture_ids = 0
        self._mcp_servers: list[McpServer] = []
        self._grabber = ScreenGrabber()
        character, problem = build_character(settings)
        if problem:
            self._notices.append(problem)
        # The expressions the model is told about are the ones the avatar's art has.
        self.avatar_pack: AvatarPack
        self.avatar_pack, pack_problem = load_pack_or_default(settings.avatar.pack)
        if pack_problem:
            self._notices.append(pack_problem)
        self.expressions = expressions_for(self.avatar_pack, character.expressions)
        if not any(e in self.avatar_pack for e in self.expressions):
            self._notices.append(
                f"The avatar {self.avatar_pack.name!r} has none of the character's expressions "
                f"({', '.join(self.expressions)}): it will show its neutral face."
            )
        character = character.model_copy(update={"expressions": self.expressions})
        self.character = character
        self._vts_unsubscribe: Callable[[], None] | None = None
        self.vtube_studio: Any = None  # the VTube Studio bridge, when it is the renderer
        self.tools = self._build_tools()
        tools_on = settings.agent.enable_tool and not settings.chat.model.startswith("local/")
        sees_images, context_window = chat_model_facts(settings)
        try:
            self._vision_client, vision = build_vision(settings)
        except Exception as exc:  # a bad vision route must not stop the app
            self._vision_client, vision = None, None
            self._notices.append(f"The vision model could not be set up: {exc}")
        prompt_extra = TOOLS_HINT if tools_on and "take_screenshot" in self.tools else ""
        core = AgentCore(
            provider=self.provider,
            model=route_model,
            storage=self.storage,
            conf_uid=CONF_UID,
            history_uid=history_uid,
            system_prompt=character.prompt(extra=prompt_extra),
            temperature=settings.chat.temperature,
            max_tokens=settings.chat.max_tokens,
            max_tool_rounds=settings.agent.max_tool_rounds,
            enable_tool=tools_on,
            chat_supports_vision=sees_images,
            require_detailed=settings.agent.require_detailed,
            tools=self.tools,
            vision=vision,
            context_window=context_window,
            media_root=data_dir(),
        )
        self.agent = MemoryAgent(core, expressions=self.expressions)
        drain = getattr(self.storage, "drain_notices", None)
        if callable(drain):
            self._notices.extend(drain())
        self.avatar = ExpressionState(
            idle_s=settings.avatar.idle_s or settings.expression_idle_s,
            expressions=self.expressions,
        )
        self._turn_ids = 0
        self._turn_task: asyncio.Task[TurnResult] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._mic_enabled = True
        self._mic_mode: str = settings.audio.mic_mode
        self._ptt_pressed = False
        self._ptt_released = False
        self._speaking = False
        self._echo_until = 0.0
        self.echo: EchoCanceller = HalfDuplex()
        if settings.audio.barge_in:
            self.echo = create_echo_canceller(settings.audio.echo_mode)
        self._attach_far_end()
        self.barge_ins = 0
        self.resumes = 0
        self._barge_words_pending = False
        # A barge-in waiting for the user's words: True = resume speaking, False = the
        # interruption stands (the turn is cancelled and theirs runs next).
        self._barge: asyncio.Future[bool] | None = None
        self.barge_in_at: float | None = None
        self._closed = False
        self._heard_sentences: list[str] = []
        self._thinking_face = False

    # ----- tools -----------------------------------------------------------
    def _build_tools(self) -> ToolRegistry:
        agent = self.settings.agent
        registry = ToolRegistry(
            builtin_tools(
                captures_dir=data_dir() / "captures",
                allow_clipboard=agent.allow_clipboard,
                on_capture=self._capture_taken,
                confirm_capture=self._confirm_capture if agent.confirm_screenshots else None,
                grabber=self._grabber,
                timeout_s=agent.tool_timeout_s,
            )
        )
        for name, spec in self.settings.tools.items():
            try:
                registry.add(
                    command_tool(
                        name,
                        command=spec.command,
                        description=spec.description,
                        parameters={
                            k: p.model_dump(exclude_none=True) for k, p in spec.parameters.items()
                        },
                        timeout_s=spec.timeout_s,
                    )
                )
            except ValueError as exc:
                self._notices.append(f"The tool {name!r} in the config cannot be used: {exc}")
        return registry

    def _capture_taken(self, capture: Capture) -> None:
        self.events.emit(CaptureTaken(capture.path, capture.monitor, capture.width, capture.height))

    async def _confirm_capture(self, monitor: str) -> bool:
        """Ask the user (a `CaptureRequested` event) and wait for `answer_capture`."""
        self._capture_ids += 1
        request_id = self._capture_ids
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._capture_waiters[request_id] = future
        try:
            self.events.emit(CaptureRequested(request_id, monitor))
            return await future
        finally:
            self._capture_waiters.pop(request_id, None)

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        """The user's answer to a `CaptureRequested`."""
        future = self._capture_waiters.get(request_id)
        if future is not None and not future.done():
            future.set_result(allowed)

    async def start_mcp_servers(self) -> None:
        """Start the MCP servers in the config and offer their tools to the model."""
        for name, spec in self.settings.mcp.servers.items():
            if not spec.enabled:
                continue
            command = [spec.command] if isinstance(spec.command, str) else list(spec.command)
            server = McpServer(
                name, [*command, *spec.args], env=spec.env, cwd=spec.cwd, timeout_s=spec.timeout_s
            )
            try:
                tools = await server.start()
            except Exception as exc:
                await server.aclose()
                self.events.emit(Notice(f"The MCP server {name!r} could not start: {exc}", True))
                continue
            self._mcp_servers.append(server)
            for tool in tools:
                self.tools.add(tool, replace=True)
            log.info("MCP server %s offers %d tool(s)", name, len(tools))

    # ----- lifecycle -------------------------------------------------------
    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._report_crash)
        return task

    def _report_crash(self, task: asyncio.Task[Any]) -> None:
        """A background task that died: the user reads it in the status line, with the
        log file that has the details; the app keeps running."""
        if task.cancelled() or self._closed:
            return
        exc = task.exception()
        if exc is None:
            return
        log.error("the %s task failed", task.get_name(), exc_info=exc)
        from app.logs import log_file

        where = log_file()
        words = str(exc).strip() or type(exc).__name__
        message = f"Something went wrong ({task.get_name()}: {words})."
        if where is not None:
            message += f" Details are in the log: {where}"
        self.events.emit(Notice(message, error=True))
        self._status(Status.ERROR, words)

    def _status(self, status: Status, detail: str = "") -> None:
        self.events.emit(StatusChanged(status, detail))

    async def start(self, *, listen: bool = True) -> None:
        """Open the sound devices and load the models in the background."""
        self._status(Status.LOADING, "loading the speech and chat models")
        for notice in self._notices:
            self.events.emit(Notice(notice, error=True))
        self._notices.clear()
        if self.settings.mcp.servers and self.agent.core.enable_tool:
            self._spawn(self.start_mcp_servers(), "mcp-servers")
        if self.sink is None:
            try:
                SoundDeviceSink.check_available(self.settings.audio.output_device)
                self.sink = SoundDeviceSink(
                    self.settings.audio.output_device, self.settings.audio.volume
                )
            except PlaybackError as exc:
                self.events.emit(Notice(str(exc), error=True))
            self._attach_far_end()
        self._spawn(self._idle_expression_loop(), "avatar-idle")
        self._start_vtube_studio()
        await self.load_models()
        if listen:
            if self._source is None:
                try:
                    name = MicrophoneSource.check_available(self.settings.audio.input_device)
                    self._source = MicrophoneSource(self.settings.audio.input_device)
                    self.events.emit(MicStateChanged(True, True, name))
                except MicrophoneUnavailable as exc:
                    self._mic_enabled = False
                    self.events.emit(MicStateChanged(False, False, str(exc)))
                    self._status(Status.IDLE, "no microphone: type your messages")
                    return
            self._spawn(self._listen_to_microphone(), "listen")
        self._status(Status.LISTENING if listen and self._mic_enabled else Status.IDLE)

    async def load_models(self) -> None:
        """Load what can be loaded ahead; a failure becomes a notice, not a crash."""
        loaders: list[tuple[str, Any]] = [("speech recognition", self.speech.load())]
        load = getattr(self.provider, "load", None)
        if callable(load):
            loaders.append(("chat model", self._load_chat_model(load)))
        tts_load = getattr(self.tts, "load", None)
        if callable(tts_load):
            loaders.append(("voice", tts_load()))
        total = len(loaders)
        done = 0
        self.events.emit(LoadProgress("loading " + ", ".join(w for w, _ in loaders), 0, total))

        async def one(what: str, coro: Any) -> None:
            nonlocal done
            try:
                await coro
            except Exception as exc:
                self.events.emit(Notice(f"The {what} could not be loaded: {exc}", error=True))
            finally:
                done += 1
                self.events.emit(LoadProgress(f"{what} ready", done, total))

        await asyncio.gather(*(one(what, coro) for what, coro in loaders))

    async def _load_chat_model(self, load: Any) -> None:
        await load()
        if self.settings.chat.model.startswith("local/"):
            await self.agent.core.warm_up()

    def _start_vtube_studio(self) -> None:
        """With `avatar.renderer = "vtube_studio"`: drive a VTube Studio model from the
        expression and mouth events, on a task that reconnects by itself."""
        if self.settings.avatar.renderer != "vtube_studio" or self._vts_unsubscribe is not None:
            return
        from app.avatar.vtube_studio import VTubeStudioBridge

        vts = self.settings.avatar.vtube_studio
        bridge = VTubeStudioBridge(
            host=vts.host,
            port=vts.port,
            hotkeys=vts.hotkeys,
            token_file=data_dir() / "vtube_studio_token",
            plugin_name=vts.plugin_name,
            plugin_developer=vts.plugin_developer,
            mouth_parameter=vts.mouth_parameter,
            on_notice=lambda text: self.events.emit(Notice(text, error=True)),
        )
        self.vtube_studio = bridge
        self._vts_unsubscribe = self.events.subscribe(bridge.handle)
        self._spawn(bridge.run(), "vtube-studio")

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._vts_unsubscribe is not None:
            self._vts_unsubscribe()  # the bridge's task is cancelled with the others below
            self._vts_unsubscribe = None
        self.interrupt()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._source is not None:
            await self._source.aclose()
        if self.sink is not None:
            await self.sink.aclose()
        await self.tts.aclose()
        for server in self._mcp_servers:
            with contextlib.suppress(Exception):
                await server.aclose()
        self._grabber.close()
        for waiter in self._capture_waiters.values():
            if not waiter.done():
                waiter.set_result(False)
        for client in (self.provider, self._vision_client):
            close = getattr(client, "aclose", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    await close()

    # ----- controls --------------------------------------------------------
    def set_mic_enabled(self, enabled: bool) -> None:
        self._mic_enabled = enabled
        if enabled and self._mic_mode == "muted":
            self._mic_mode = "always_on"
        available = self._source is not None
        self.events.emit(MicStateChanged(enabled and available, available))
        if available:
            self._status(Status.LISTENING if enabled else Status.MUTED)

    def _attach_far_end(self) -> None:
        """Let the sink publish what it plays to the echo canceller (its far end)."""
        if self.sink is not None and hasattr(self.sink, "far_end"):
            self.sink.far_end = self.echo.far_end

    @property
    def can_barge_in(self) -> bool:
        """Whether speech over the companion interrupts it: barge-in is on, the mic is
        always on, and echo cancellation runs with the sink's audio as its reference
        (without one, the mic is ignored while the companion speaks: half-duplex)."""
        return (
            self.settings.audio.barge_in
            and self._mic_mode == "always_on"
            and self.echo.cancels
            and self.sink is not None
            and getattr(self.sink, "far_end", None) is not None
        )

    @property
    def mic_mode(self) -> str:
        return self._mic_mode

    def set_mic_mode(self, mode: str) -> None:
        """`always_on` (the VAD decides), `push_to_talk` (only while held) or `muted`."""
        if mode not in ("always_on", "push_to_talk", "muted"):
            raise ValueError(f"unknown microphone mode {mode!r}")
        self._mic_mode = mode
        self._ptt_pressed = False
        self.set_mic_enabled(mode != "muted")

    def set_push_to_talk(self, pressed: bool) -> None:
        """The push-to-talk key or button: speech counts only while it is held, and
        releasing it ends the utterance at once. Pressing it while the companion speaks
        interrupts it."""
        if self._mic_mode != "push_to_talk":
            return
        if pressed and not self._ptt_pressed and (self._speaking or self.busy):
            self.interrupt()
        if self._ptt_pressed and not pressed:
            self._ptt_released = True
        if pressed != self._ptt_pressed:
            self.events.emit(PushToTalkChanged(pressed))
        self._ptt_pressed = pressed

    def _mic_open(self) -> bool:
        if not self._mic_enabled or self._mic_mode == "muted":
            return False
        return self._mic_mode != "push_to_talk" or self._ptt_pressed

    def interrupt(self) -> None:
        """Stop speaking and thinking now; what was heard is kept in memory."""
        self._decide_barge_in(resume=False)
        if self.sink is not None:
            self.sink.stop()
        if self._turn_task is not None and not self._turn_task.done():
            self._turn_task.cancel()

    @property
    def busy(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    # ----- conversations ---------------------------------------------------
    @property
    def conversation_id(self) -> str:
        return self.agent.core.history_uid

    def conversations(self) -> list[ConversationInfo]:
        """Every saved conversation, oldest first (the last one is resumed at start)."""
        return self.storage.list_conversations(CONF_UID)

    def history_messages(self) -> list[Msg]:
        """The current conversation's messages, for a presenter to show."""
        return list(self.agent.history)

    async def new_conversation(self) -> str:
        """Start an empty conversation (a turn in flight is interrupted first)."""
        uid = self.storage.create_history(CONF_UID)
        await self.switch_conversation(uid)
        return uid

    async def switch_conversation(self, uid: str) -> None:
        """Talk in conversation `uid` from now on; the model remembers only it."""
        if uid not in self.storage.list_histories(CONF_UID):
            raise ValueError(f"there is no conversation {uid!r}")
        await self._settle()
        self.agent.set_memory_from_history(CONF_UID, uid)
        for notice in getattr(self.storage, "drain_notices", list)():
            self.events.emit(Notice(notice, error=True))
        self.events.emit(ConversationChanged(uid))

    def rename_conversation(self, uid: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise ValueError("a conversation needs a title")
        self.storage.rename_history(CONF_UID, uid, title[:120])

    async def delete_conversation(self, uid: str) -> None:
        """Delete a conversation for good; deleting the current one moves to the newest
        remaining one (or a new, empty one)."""
        current = uid == self.conversation_id
        if current:
            await self._settle()
        self.storage.delete_history(CONF_UID, uid)
        if current:
            remaining = self.storage.list_histories(CONF_UID)
            await self.switch_conversation(
                remaining[-1] if remaining else self.storage.create_history(CONF_UID)
            )

    async def _settle(self) -> None:
        """Interrupt a turn in flight and wait until it has saved what was heard."""
        if self.busy:
            self.interrupt()
            with contextlib.suppress(BaseException):
                await self._turn_task  # type: ignore[misc]

    async def send_text(self, text: str) -> TurnResult:
        """A typed message: a turn without speech recognition."""
        return await self._run_exclusive(self._turn_from_text(text, time.perf_counter()))

    async def turn_from_pcm(self, pcm: bytes) -> TurnResult:
        """One spoken turn from 16 kHz s16le PCM whose speech has just ended."""
        return await self._run_exclusive(self._turn_from_pcm(pcm, time.perf_counter()))

    async def _run_exclusive(self, coro: Any) -> TurnResult:
        await self._settle()
        task: asyncio.Task[TurnResult] = asyncio.create_task(coro)
        self._turn_task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() or task.done():
                return TurnResult(self._turn_ids, "", interrupted=True)
            raise

    # ----- listening -------------------------------------------------------
    async def listen(self, source: AudioSource) -> None:
        """Listen continuously: VAD endpointing, then one turn per utterance."""
        vad = await asyncio.to_thread(SileroVad)
        v = self.settings.vad
        endpointer = Endpointer(
            EndpointerConfig(
                v.start_threshold,
                v.stop_threshold,
                v.end_silence_ms,
                v.pre_speech_pad_ms,
                v.min_speech_ms,
                v.max_utterance_s,
            )
        )
        barge = BargeInDetector(v.barge_in_ms, v.start_threshold, v.stop_threshold)
        pending = bytearray()
        # Utterances that end while a barge-in's first one is being transcribed: they
        # join it (one turn), they never start a turn of their own.
        more: list[tuple[bytes, float]] = []
        try:
            await self._listen_loop(source, vad, endpointer, barge, pending, more)
        finally:
            self._decide_barge_in(resume=True)

    async def _listen_loop(
        self,
        source: AudioSource,
        vad: SileroVad,
        endpointer: Endpointer,
        barge: BargeInDetector,
        pending: bytearray,
        more: list[tuple[bytes, float]] | None = None,
    ) -> None:
        v = self.settings.vad
        more = [] if more is None else more
        level_bytes = 0
        level_sum = 0.0
        async for chunk in source.chunks():
            # The level meter: RMS about ten times a second, only while the mic is open.
            if self._mic_open() and chunk:
                samples = np.frombuffer(chunk, dtype="<i2").astype(np.float32)
                level_sum += float(np.dot(samples, samples))
                level_bytes += len(chunk)
                if level_bytes >= LEVEL_BYTES:
                    rms = math.sqrt(level_sum / (level_bytes // 2)) / 32768.0
                    self.events.emit(MicLevel(max(-90.0, 20 * math.log10(max(rms, 1e-9)))))
                    level_bytes, level_sum = 0, 0.0
            if self._ptt_released:
                # Push-to-talk released: the utterance ends now, not after the silence.
                self._ptt_released = False
                pending.clear()
                utterance = endpointer.flush()
                vad.reset()
                if utterance is not None and utterance.speech_ms >= v.min_speech_ms:
                    self._spawn(self._voice_turn(utterance.pcm, time.perf_counter()), "voice-turn")
                elif not self.busy:
                    self._status(Status.LISTENING)
            over_voice = self._speaking or time.perf_counter() < self._echo_until
            # Barge-in listens through the companion's voice only while a turn runs (or a
            # barge-in waits for words); otherwise its echo tail is ignored as before.
            barge_in = self.can_barge_in and (self.busy or self._barge is not None)
            # Through a turn the canceller processes the mic, so its filter keeps up with
            # the room; otherwise the mic is only counted, so the reference stays lined
            # up with it (and costs nothing while nobody speaks).
            chunk = self.echo.process(chunk) if barge_in else self.echo.advance(chunk)
            # Half-duplex: without echo cancellation the mic hears the companion speak.
            if not self._mic_open() or (over_voice and not barge_in):
                self._decide_barge_in(resume=True)  # the user's words can no longer come
                if endpointer.in_speech or pending:
                    endpointer.reset()
                    vad.reset()
                    pending.clear()
                barge.reset()
                continue
            pending += chunk
            while len(pending) >= FRAME_BYTES:
                frame = bytes(pending[:FRAME_BYTES])
                del pending[:FRAME_BYTES]
                probability = vad.probability(frame)
                event, utterance = endpointer.push(frame, probability)
                if (
                    over_voice
                    and barge_in
                    and self.busy
                    and self._barge is None
                    and self.echo.ready
                ):
                    if barge.push(probability):
                        self._barge_in(barge.speech_ms, endpointer)
                else:
                    barge.reset()
                if event is VadEventKind.SPEECH_STARTED and not self.busy:
                    self._status(Status.HEARING)
                elif event is VadEventKind.SPEECH_ENDED and self._barge is not None:
                    # What was said once the voice had stopped is taken from the raw
                    # mic: the canceller's output garbles it (double-talk suppression).
                    end = self.echo.output_samples - len(pending) // 2
                    tail_s = self.settings.audio.echo_tail_ms / 1000
                    if utterance is not None:
                        utterance.pcm = self.echo.after_echo(utterance.pcm, end, tail_s)
                    if self._barge_words_pending:  # the first utterance is being transcribed
                        if utterance is not None:
                            more.append((utterance.pcm, time.perf_counter()))
                    elif utterance is None:
                        self._decide_barge_in(resume=True)
                    else:
                        speech_end = time.perf_counter() - v.end_silence_ms / 1000
                        self._barge_words_pending = True  # now: the task starts later
                        self._spawn(
                            self._barge_in_turn(utterance.pcm, speech_end, more), "barge-in"
                        )
                elif event is VadEventKind.SPEECH_ENDED:
                    if utterance is None or self.busy:
                        if not self.busy:
                            self._status(Status.LISTENING)
                        continue
                    speech_end = time.perf_counter() - v.end_silence_ms / 1000
                    self._spawn(self._voice_turn(utterance.pcm, speech_end), "voice-turn")

    def _barge_in(self, speech_ms: float, endpointer: Endpointer) -> None:
        """The user spoke over the companion long enough: it stops speaking at once and
        waits for their words. With words, the interruption stands (`handle_interrupt`
        with what was heard) and their utterance is the next turn; without words within
        `resume_timeout_s`, it resumes where it stopped."""
        self.barge_ins += 1
        self.barge_in_at = time.perf_counter()
        log.info("barge-in after %.0f ms of speech", speech_ms)
        self._barge = asyncio.get_running_loop().create_future()
        if self.sink is not None:
            self.sink.stop()
        self._status(Status.HEARING, "interrupted")
        self._spawn(self._barge_in_watchdog(self._barge, endpointer), "barge-in-watchdog")

    async def _barge_in_watchdog(self, barge: asyncio.Future[bool], endpointer: Endpointer) -> None:
        """Resume when the barge-in brings no utterance: `resume_timeout_s` after the
        decision, once the user is no longer speaking, unless their words are being
        transcribed (an empty transcript resumes too)."""
        await asyncio.sleep(self.settings.audio.resume_timeout_s)
        while not barge.done() and (endpointer.in_speech or self._barge_words_pending):
            await asyncio.sleep(0.05)
        if self._barge is barge:
            self._decide_barge_in(resume=True)

    def _decide_barge_in(self, *, resume: bool) -> None:
        barge, self._barge = self._barge, None
        if barge is not None and not barge.done():
            barge.set_result(resume)
            if resume:
                self.resumes += 1
                log.info("no words after the barge-in: speaking on")

    async def _barge_in_turn(
        self, pcm: bytes, speech_end: float, more: list[tuple[bytes, float]] | None = None
    ) -> None:
        """Transcribe the utterance that interrupted; words → it is the next turn.

        Utterances that end while it is transcribed (`more`, filled by the listening
        loop) are part of the same interruption: their words are added to it, and
        there is still only one turn."""
        self._barge_words_pending = True
        more = [] if more is None else more
        texts: list[str] = []
        queue = [pcm]
        try:
            while queue:
                try:
                    words = (await self.transcribe(queue.pop(0))).strip()
                except Exception as exc:  # never left paused: no words means speak on
                    log.info("the barge-in brought no words (%r)", exc)
                    words = ""
                if words:
                    texts.append(words)
                while more:
                    extra, ended = more.pop(0)
                    queue.append(extra)
                    speech_end = ended - self.settings.vad.end_silence_ms / 1000
        finally:
            self._barge_words_pending = False
        text = " ".join(texts)
        if not text.strip():
            self._decide_barge_in(resume=True)
            return
        transcript_ms = (time.perf_counter() - speech_end) * 1000
        self._decide_barge_in(resume=False)
        result = await self._run_exclusive(
            self._turn_from_transcript(text, speech_end, transcript_ms)
        )
        if not self._closed and not self.busy:
            self._status(Status.LISTENING if self._mic_enabled else Status.MUTED)
        log.info("turn %d timings %s", result.turn_id, result.timings_ms)

    async def _listen_to_microphone(self, retry_s: float = 3.0) -> None:
        """Listen; when the microphone goes away, say so and resume when it is back."""
        device = self.settings.audio.input_device
        while not self._closed:
            assert self._source is not None
            try:
                await self.listen(self._source)
                return
            except MicrophoneUnavailable as exc:
                await self._source.aclose()
                self.events.emit(MicStateChanged(False, False, str(exc)))
                self._status(Status.IDLE, "the microphone is gone: type your messages")
            while not self._closed:
                await asyncio.sleep(retry_s)
                try:
                    name = await asyncio.to_thread(MicrophoneSource.check_available, device)
                except MicrophoneUnavailable:
                    continue
                self._source = MicrophoneSource(device)
                self.events.emit(MicStateChanged(self._mic_enabled, True, name))
                self._status(Status.LISTENING if self._mic_enabled else Status.MUTED)
                break

    async def _voice_turn(self, pcm: bytes, speech_end: float) -> None:
        result = await self._run_exclusive(self._turn_from_pcm(pcm, speech_end))
        if not self._closed and not self.busy:
            self._status(Status.LISTENING if self._mic_enabled else Status.MUTED)
        log.info("turn %d timings %s", result.turn_id, result.timings_ms)

    # ----- one turn --------------------------------------------------------
    async def transcribe(self, pcm: bytes) -> str:
        text = ""
        async for event in self.speech.stream(_one_chunk(pcm)):
            text = event.text
        return text

    async def _turn_from_pcm(self, pcm: bytes, speech_end: float) -> TurnResult:
        self._turn_ids += 1
        turn_id = self._turn_ids
        self._status(Status.TRANSCRIBING)
        try:
            text = await self.transcribe(pcm)
        except SpeechError as exc:
            self.events.emit(Notice(str(exc), error=True))
            return TurnResult(turn_id, "", error=str(exc))
        transcript_at = time.perf_counter()
        if not text.strip():
            self._status(Status.LISTENING, "didn't catch that")
            return TurnResult(
                turn_id, "", timings_ms={"transcript_ms": (transcript_at - speech_end) * 1000}
            )
        self.events.emit(UserTranscript(text, True, turn_id))
        return await self._respond(
            text, turn_id, speech_end, {"transcript_ms": (transcript_at - speech_end) * 1000}
        )

    async def _turn_from_transcript(
        self, text: str, speech_end: float, transcript_ms: float
    ) -> TurnResult:
        self._turn_ids += 1
        turn_id = self._turn_ids
        self.events.emit(UserTranscript(text, True, turn_id))
        return await self._respond(text, turn_id, speech_end, {"transcript_ms": transcript_ms})

    async def _turn_from_text(self, text: str, started: float) -> TurnResult:
        self._turn_ids += 1
        turn_id = self._turn_ids
        self.events.emit(UserTranscript(text, True, turn_id))
        return await self._respond(text, turn_id, started)

    async def _respond(
        self, text: str, turn_id: int, t0: float, timings: dict[str, float] | None = None
    ) -> TurnResult:
        """Answer `text`; stage timings are ms since `t0` (the end of the user's speech)."""
        result = TurnResult(turn_id, text, timings_ms=timings or {})
        timings = result.timings_ms
        lookahead = self.settings.tts.lookahead
        queue: asyncio.Queue[tuple[SentenceOutput, asyncio.Task[SynthesizedAudio] | None] | None]
        queue = asyncio.Queue(maxsize=lookahead)
        self._heard_sentences = []
        self._status(Status.THINKING)
        self.events.emit(ExpressionChanged("thinking", 0.6))
        self._thinking_face = True

        def ms(now: float | None = None) -> float:
            return ((now or time.perf_counter()) - t0) * 1000

        answered = asyncio.Event()

        async def still_waiting() -> None:
            # A slow model must not look like a hung app: say that it is still waited for.
            waited = STILL_WAITING_S
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), STILL_WAITING_S)
            while not answered.is_set():
                self._status(
                    Status.THINKING,
                    f"still waiting for {self._model_name()} ({int(waited)} s)",
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(answered.wait(), 1.0)
                waited += 1.0

        async def produce() -> None:
            waiter = asyncio.create_task(still_waiting())
            try:
                async for item in self.agent.chat(BatchInput([text])):
                    answered.set()
                    if isinstance(item, ToolStatus):
                        self._status(Status.THINKING, item.text)
                        if not item.done:
                            self.events.emit(ToolUsed(item.name, turn_id))
                        continue
                    if "first_sentence_ms" not in timings:
                        timings["first_sentence_ms"] = ms()
                    result.sentences.append(item)
                    task = None
                    if item.tts_text.strip() and not item.is_thinking:
                        task = asyncio.create_task(
                            self.tts.synthesize(item.tts_text, rate=self.settings.tts.rate)
                        )
                    await queue.put((item, task))
            finally:
                answered.set()
                waiter.cancel()
                stats = self.agent.core.last_stats
                if stats.request_sent:
                    timings["request_sent_ms"] = ms(stats.request_sent)
                if stats.first_token:
                    timings["first_token_ms"] = ms(stats.first_token)
                await queue.put(None)

        stop_speaking = asyncio.Event()

        async def speak() -> None:
            while not stop_speaking.is_set() and (entry := await queue.get()) is not None:
                sentence, task = entry
                audio: SynthesizedAudio | None = None
                if task is not None:
                    try:
                        audio = await task
                    except TTSError as exc:
                        self.events.emit(Notice(f"Could not speak a sentence: {exc}", error=True))
                    if audio is not None and "first_audio_ms" not in timings:
                        timings["first_audio_ms"] = ms()
                if stop_speaking.is_set():
                    break
                self._show(sentence, turn_id)
                if audio is not None and self.sink is not None:
                    await self._play(audio, sentence)
                elif not sentence.is_thinking:
                    self._heard_sentences.append(sentence.display_text)

        speaker = asyncio.create_task(speak())
        try:
            await produce()
            await speaker
        except AgentTurnError as exc:
            result.error = str(exc)
            await asyncio.gather(speaker, return_exceptions=True)
            self.events.emit(Notice(str(exc), error=True))
            self._status(Status.ERROR, str(exc))
        except asyncio.CancelledError:
            result.interrupted = True
            # The sink was told to stop: let the sentence in progress report how much
            # of it was heard (one chunk at most), then stop the speaker for good.
            stop_speaking.set()
            if self.sink is not None:
                self.sink.stop()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(speaker), 0.5)
            speaker.cancel()
            await asyncio.gather(speaker, return_exceptions=True)
            self._drain_synthesis(queue)
            self.agent.handle_interrupt(" ".join(self._heard_sentences))
            self.events.emit(TurnFinished(turn_id, dict(timings), interrupted=True))
            self._speaking = False
            self._status(Status.LISTENING if self._mic_enabled else Status.IDLE, "interrupted")
            raise
        timings["total_ms"] = ms()
        self.events.emit(TurnFinished(turn_id, dict(timings)))
        if result.error is None:
            self._status(Status.LISTENING if self._mic_enabled and self._source else Status.IDLE)
        return result

    def _model_name(self) -> str:
        model = self.settings.chat.model
        return "the local model" if model.startswith("local/") else model.split("/", 1)[-1]

    @staticmethod
    def _drain_synthesis(
        queue: asyncio.Queue[tuple[SentenceOutput, asyncio.Task[SynthesizedAudio] | None] | None],
    ) -> None:
        while not queue.empty():
            entry = queue.get_nowait()
            if entry is not None and entry[1] is not None:
                entry[1].cancel()

    def _show(self, sentence: SentenceOutput, turn_id: int) -> None:
        if self._thinking_face and not sentence.is_thinking:
            # The reply has started: drop the thinking look for the sticky expression.
            self._thinking_face = False
            if not sentence.actions.expressions:
                self.events.emit(ExpressionChanged(self.avatar.current, self.avatar.intensity))
        for name in sentence.actions.expressions:
            intensity = sentence.actions.intensities.get(name, 1.0)
            self.avatar.set(name, intensity)
            self.events.emit(ExpressionChanged(name, intensity))
        if sentence.display_text or sentence.tts_text:
            self.events.emit(
                AssistantSentence(
                    sentence.display_text,
                    sentence.tts_text,
                    tuple(sentence.actions.expressions),
                    turn_id,
                    sentence.is_thinking,
                )
            )

    async def _play(self, audio: SynthesizedAudio, sentence: SentenceOutput) -> None:
        assert self.sink is not None
        barge = self._barge
        if barge is not None and not await asyncio.shield(barge):
            # A barge-in waited for the user's words and they came: the turn ends here
            # (its interrupt path stores what was heard), before another sentence plays.
            raise asyncio.CancelledError
        played_s, rest = 0.0, audio
        while True:
            self._speaking = True
            self._status(Status.SPEAKING)
            try:
                report = await self.sink.play(
                    rest, on_level=lambda level: self.events.emit(MouthLevel(level))
                )
            except PlaybackError as exc:
                self.events.emit(Notice(str(exc), error=True))
                self.sink = None
                self._heard_sentences.append(sentence.display_text)
                return
            finally:
                self._speaking = False
                self._echo_until = time.perf_counter() + self.settings.audio.echo_tail_ms / 1000
            played_s += report.played_s
            barge = self._barge
            if report.heard is Heard.FULL or barge is None:
                break
            # A barge-in stopped the sentence: what was heard so far counts if the
            # interruption stands; with no words from the user, speak on from there.
            self._heard_sentences.append(self._partly(sentence, played_s / audio.duration_s))
            if not await asyncio.shield(barge):
                raise asyncio.CancelledError
            self._heard_sentences.pop()
            offset = min(len(audio.pcm), int(played_s * audio.sample_rate) * 2)
            rest = SynthesizedAudio(audio.pcm[offset:], audio.sample_rate)
            if not rest.pcm:
                report = PlaybackReport(Heard.FULL, audio.duration_s, audio.duration_s)
                break
        if report.heard is Heard.FULL:
            self._heard_sentences.append(sentence.display_text)
        elif played_s > 0:
            self._heard_sentences.append(self._partly(sentence, played_s / audio.duration_s))

    @staticmethod
    def _partly(sentence: SentenceOutput, fraction: float) -> str:
        words = sentence.display_text.split()
        kept = max(1, round(len(words) * fraction))
        return " ".join(words[:kept]) + "…"

    async def _idle_expression_loop(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if not self.busy and self.avatar.tick():
                self.events.emit(ExpressionChanged("neutral"))


def trim_to_speech(pcm: bytes, settings: Settings) -> bytes:
    """The speech part of a recording (Silero VAD), or all of it when none is found."""
    vad = SileroVad()
    v = settings.vad
    endpointer = Endpointer(
        EndpointerConfig(
            v.start_threshold,
            v.stop_threshold,
            v.end_silence_ms,
            v.pre_speech_pad_ms,
            min_speech_ms=0,
            max_utterance_s=10_000,
        )
    )
    pieces: list[bytes] = []
    for frame in frames(pcm):
        _, utterance = endpointer.push(frame, vad.probability(frame))
        if utterance is not None:
            pieces.append(utterance.pcm)
    tail = endpointer.flush()
    if tail is not None:
        pieces.append(tail.pcm)
    return b"".join(pieces) or pcm
