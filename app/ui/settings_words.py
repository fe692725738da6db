"""The settings dialog's words: each field's label, its choices, its help line and its
unit, as a person who never read the config file says them. The config models keep
their own names and descriptions (the file, `companion config show` and the docs use
them); what is here replaces them on screen only. Plain data, no Qt: every text is
translated where it is shown (`scripts/translations.py` lists them for lupdate).

`EXPERT` names the fields moved to the Advanced tab: tuning a person rarely needs,
kept out of the way of what they look for."""

from __future__ import annotations

from typing import Any

LABELS: dict[str, str] = {
    "chat.model": "Model",
    "chat.base_url": "Server address",
    "chat.api_key": "API key",
    "chat.allow_plain_http": "Key over plain http://",
    "chat.api_style": "OpenAI interface",
    "chat.temperature": "Creativity",
    "chat.max_tokens": "Longest reply",
    "chat.timeout_s": "Wait for an answer",
    "chat.aws_region": "Amazon Bedrock region",
    "chat.aws_profile": "Amazon Bedrock profile",
    "chat.local_model_path": "Your own embedded model file",
    "chat.local_threads": "Embedded model's processor threads",
    "chat.local_context": "Embedded model's memory span",
    "chat.local_gpu": "Embedded model on the graphics card",
    "speech.adapter": "Speech recognition",
    "speech.model": "Recognition model",
    "speech.model_path": "Own recognition model folder",
    "speech.language": "Language you speak",
    "speech.threads": "Recognition's processor threads",
    "speech.endpoint": "Speech service address",
    "speech.api_key": "Speech service key",
    "speech.app_id": "Volcengine app ID",
    "speech.resource_id": "Volcengine resource ID",
    "speech.partial_interval_s": "Live preview of your words every",
    "speech.timeout_s": "Wait for the speech service",
    "vad.start_threshold": "Sureness that you started speaking",
    "vad.stop_threshold": "Sureness that you paused",
    "vad.end_silence_ms": "Silence that ends your turn",
    "vad.pre_speech_pad_ms": "Sound kept from before you spoke",
    "vad.min_speech_ms": "Shortest sound that counts as speech",
    "vad.max_utterance_s": "Longest turn of speech",
    "vad.barge_in_ms": "Speaking needed to interrupt",
    "turn.endpointing": "How your turn ends",
    "turn.first_check_ms": "First look after you stop",
    "turn.recheck_ms": "Look again after",
    "turn.threshold": "Sureness that you are done",
    "turn.doubt_ms": "Wait longer when unsure",
    "turn.settle_ms": "Silence after a finished sentence",
    "turn.question_settle_ms": "Silence after a finished question",
    "turn.fallback_ms": "Longest silence before replying",
    "turn.live_transcript": "Your words while you speak",
    "turn.pause_ms": "Pause that shows your words",
    "turn.speculative_replies": "Start answering early",
    "turn.continue_within_s": "Going on after a pause",
    "turn.continue_speech_ms": "Speaking needed to go on",
    "audio.input_device": "Microphone",
    "audio.output_device": "Speaker",
    "audio.volume": "Volume",
    "audio.echo_tail_ms": "Room echo lasts",
    "audio.mic_mode": "Microphone mode",
    "audio.barge_in": "Interrupting",
    "audio.echo_mode": "Keeping its own voice out of the microphone",
    "audio.resume_timeout_s": "Carry on after a false interruption",
    "tts.engine": "Voice",
    "tts.voice": "Voice name",
    "tts.rate": "Speaking speed",
    "tts.lookahead": "Sentences prepared ahead",
    "tts.model_path": "Own natural-voice model file",
    "tts.endpoint": "Speech server address",
    "tts.model": "Speech server model",
    "tts.api_key": "Speech server key",
    "tts.audio_format": "Sound format from the server",
    "tts.timeout_s": "Wait for the speech server",
    "persona.name": "Name",
    "persona.system_prompt": "Personality",
    "persona.character_file": "Character file",
    "persona.max_sentences": "Most sentences in a reply",
    "agent.enable_tool": "Tools",
    "agent.max_tool_rounds": "Tool uses before answering",
    "agent.max_tool_calls_per_round": "Tools used at once",
    "agent.max_tool_calls": "Tools used for one message",
    "agent.tool_timeout_s": "Longest a tool may take",
    "agent.chat_supports_vision": "The model can see pictures",
    "agent.require_detailed": "Picture descriptions",
    "agent.confirm_screenshots": "Screenshots",
    "agent.allow_clipboard": "Clipboard",
    "agent.context_window": "Conversation the model can read",
    "agent.vision_model": "Model that describes pictures",
    "agent.vision_base_url": "Its server address",
    "agent.vision_api_key": "Its API key",
    "agent.vision_api_style": "Its OpenAI interface",
    "tools": "Your own tools",
    "mcp.servers": "Tool servers (MCP)",
    "mcp.servers.*.command": "Program",
    "mcp.servers.*.args": "More arguments",
    "mcp.servers.*.env": "Environment variables",
    "mcp.servers.*.cwd": "Folder it runs in",
    "mcp.servers.*.timeout_s": "Wait for each answer",
    "mcp.servers.*.enabled": "Use it",
    "avatar.pack": "Avatar pack folder",
    "avatar.renderer": "Where the avatar moves",
    "avatar.idle_s": "Back to a calm face after",
    "avatar.live2d.folder": "Avatar",
    "avatar.live2d.scale": "Size",
    "avatar.live2d.x": "Left or right",
    "avatar.live2d.y": "Up or down",
    "avatar.live2d.follow_mouse": "Eyes",
    "avatar.live2d.frame_rate": "Smoothness",
    "avatar.vtube_studio.host": "Computer running VTube Studio",
    "avatar.vtube_studio.port": "VTube Studio plugin port",
    "avatar.vtube_studio.hotkeys": "Hotkey for each expression",
    "avatar.vtube_studio.mouth_parameter": "Mouth parameter",
    "avatar.vtube_studio.plugin_name": "Plugin name shown",
    "avatar.vtube_studio.plugin_developer": "Plugin developer shown",
    "ui.click_through": "Clicks",
    "ui.start_in_pet_mode": "Start as",
    "ui.language": "Language",
    "ui.global_hotkeys": "Hotkeys",
    "ui.hotkey_push_to_talk": "Hold to talk",
    "ui.hotkey_interrupt": "Stop talking",
    "ui.hotkey_mute": "Microphone off and on",
    "memory.enabled": "Long-term memory",
    "memory.learn": "Learning",
    "memory.recall_tokens": "Memory read per reply",
    "expression_idle_s": "Calm face after",
}
CHECKBOX_TEXT: dict[str, str] = {
    "agent.confirm_screenshots": "Ask me before each screenshot",
    "agent.allow_clipboard": "Let the companion read the clipboard",
    "agent.enable_tool": "Let the model use tools (the clock, screenshots)",
    "agent.require_detailed": "Keep a written description of every picture",
    "avatar.live2d.follow_mouse": "The eyes follow the mouse pointer",
    "memory.enabled": "Remember me from one conversation to the next",
    "memory.learn": "Learn what to remember from what I say",
    "audio.barge_in": "Let me interrupt by speaking",
    "turn.live_transcript": "Show my words while I speak",
    "ui.click_through": "Clicks go through the desktop pet",
    "ui.start_in_pet_mode": "Start as the desktop pet",
    "ui.global_hotkeys": "The hotkeys work in every program",
    "mcp.servers.*.enabled": "Start this server with Companion",
}
# Every choice of every list of choices, by what it does (a test checks none is missing).
CHOICE_LABELS: dict[str, dict[Any, str]] = {
    "chat.local_gpu": {
        "auto": "Automatic (when llama.cpp can use it)",
        "off": "Never (always the processor)",
    },
    "chat.api_style": {
        "chat": "Chat Completions (works everywhere)",
        "responses": "Responses (newer, OpenAI only)",
    },
    "agent.vision_api_style": {
        "chat": "Chat Completions (works everywhere)",
        "responses": "Responses (newer, OpenAI only)",
    },
    "speech.adapter": {
        "whisper_local": "Built-in (Whisper tiny, English)",
        "openai_transcribe": "OpenAI (online)",
        "doubao_asr": "Doubao by Volcengine (online)",
        "dashscope_funasr": "FunASR by Alibaba DashScope (online)",
    },
    "audio.mic_mode": {
        "always_on": "Always on",
        "push_to_talk": "Push to talk",
        "muted": "Muted",
    },
    "audio.echo_mode": {
        "auto": "Automatic (cancel the echo when possible)",
        "aec": "Cancel the echo (speakers)",
        "half_duplex": "Stop listening while it speaks",
    },
    "turn.endpointing": {
        "turn_model": "Listen to how I finish a sentence",
        "silence": "Wait for a fixed silence",
    },
    "turn.speculative_replies": {
        "auto": "Automatic (only for models that cost nothing)",
        "on": "Always",
        "off": "Never",
    },
    "tts.engine": {
        "auto": "Automatic (natural voice for English, system voice otherwise)",
        "pyttsx3": "System voice",
        "hibari": "Natural voice (Hibari, offline)",
        "openai_speech": "OpenAI speech (online)",
    },
    "tts.audio_format": {"pcm": "Raw sound (PCM)", "wav": "WAV file"},
    "avatar.renderer": {
        "sprite": "In the window",
        "vtube_studio": "In the window and in VTube Studio",
    },
    "ui.language": {"auto": "As the system", "en": "English", "zh_CN": "中文 (Chinese)"},
}
# The help line under a field, where the model's description speaks in identifiers.
HELP: dict[str, str] = {
    "chat.model": "The chat model that answers you: an embedded one runs offline on this "
    "computer; for a hosted one choose its provider and type its name.",
    "chat.api_style": "For OpenAI models only: Responses is OpenAI's newer interface; "
    "Chat Completions works with every OpenAI-style server.",
    "agent.vision_api_style": "For OpenAI vision models only: Responses is OpenAI's "
    "newer interface; Chat Completions works with every OpenAI-style server.",
    "speech.adapter": "What turns your voice into text: the built-in recognizer works "
    "offline on this computer; the others are online services.",
    "speech.model": "The recognition model's name; empty uses the recognizer's usual one "
    "(Whisper tiny for the built-in recognizer).",
    "speech.model_path": "Built-in recognizer only: a folder holding another "
    "faster-whisper model to use instead of the one that comes with Companion.",
    "speech.language": "The language you speak, as a code such as en (English) or zh "
    "(Chinese); empty detects it.",
    "speech.threads": "Built-in recognizer only: how many processor threads it may use, "
    "from 1 to 256; automatic uses all of them.",
    "speech.app_id": "Doubao only: your Volcengine APP ID.",
    "speech.resource_id": "Doubao only: the Volcengine resource ID; empty uses the usual one.",
    "speech.partial_interval_s": "Built-in recognizer only: seconds of new speech between "
    "live previews of your words while you talk, from 0 to 30; 0 turns the preview off.",
    "turn.endpointing": "How the companion knows you have finished: by listening to how "
    "your sentence ends and to its words, or by waiting for a fixed silence.",
    "turn.speculative_replies": "Let the model start its answer before it is sure you "
    "are done; the answer is used only if you were. Automatic does it for models that "
    "cost nothing (the embedded one, a server on this computer), not for hosted ones.",
    "audio.barge_in": "Speak over the companion to stop it (needs the echo kept out of "
    "the microphone and the microphone always on).",
    "audio.echo_mode": "How the microphone avoids hearing the companion: cancelling its "
    "echo lets you interrupt it; not listening while it speaks is surest with loud speakers.",
    "tts.engine": "What speaks: the natural offline voice, your system's voice, or an "
    "online speech service. Automatic uses the natural voice for English and the "
    "system's voice for other languages.",
    "tts.endpoint": "OpenAI speech only: the speech server's address (it ends in /v1).",
    "tts.model": "OpenAI speech only: the speech model's name; empty uses gpt-4o-mini-tts.",
    "tts.api_key": "OpenAI speech only: your secret key for the speech server; empty "
    "uses the OPENAI_API_KEY environment variable.",
    "tts.audio_format": "OpenAI speech only: the sound format asked of the server; choose "
    "WAV if the server cannot send raw sound.",
    "tts.timeout_s": "OpenAI speech only: how long to wait for the speech server, in "
    "seconds (more than 0, at most 600), before giving up.",
    "tts.model_path": "Natural voice only: another voice model file to use instead of "
    "the one that comes with it.",
    "persona.system_prompt": "The instructions that give the companion its personality, "
    "in your own words; empty uses the character file's instructions, which call the "
    "companion by the name above.",
    "tools": "Your own programs the model may run as tools, by name. Written as JSON: "
    'each with "command", "description", "parameters" and "timeout_s".',
    "mcp.servers": "Programs that give the model more tools (MCP servers), each under a "
    "name of your choice.",
    "mcp.servers.*.command": "The program that starts the server, with its arguments, "
    "on one line as you would type it in a terminal.",
    "avatar.pack": "A folder of avatar pictures (with its avatar.toml); empty uses the "
    "default character.",
    "avatar.renderer": "Where the avatar moves: in Companion's window, or also as your "
    "VTube Studio model.",
    "avatar.vtube_studio.hotkeys": "Which VTube Studio hotkey (its ID or name) shows "
    "each expression: an expression on the left, the hotkey on the right.",
    "ui.language": "The language of the windows; automatic follows the system.",
}
SUFFIXES: dict[str, str] = {
    "tts.rate": " words/min",
    "avatar.live2d.frame_rate": " fps",
    "memory.recall_tokens": " tokens",
    "agent.context_window": " tokens",
    "chat.local_context": " tokens",
    "chat.max_tokens": " tokens",
}
# A number field's unit, from its name's ending, where SUFFIXES names none.
UNIT_SUFFIXES: dict[str, str] = {"_ms": " ms", "_s": " s"}


def suffix_of(path: str) -> str:
    if path in SUFFIXES:
        return SUFFIXES[path]
    for ending, suffix in UNIT_SUFFIXES.items():
        if path.endswith(ending):
            return suffix
    return ""


PLACEHOLDERS: dict[str, str] = {
    "chat.base_url": "the provider's usual address",
    "audio.input_device": "the system default",
    "audio.output_device": "the system default",
    "tts.voice": "the engine's default voice",
    "avatar.pack": "the default character",
    "avatar.live2d.folder": "the folder with your model's .model3.json file",
    "speech.language": "detect it",
    "speech.model": "the recognizer's usual model",
}
# The column titles of a key/value table, by field.
TABLE_HEADERS: dict[str, tuple[str, str]] = {
    "avatar.vtube_studio.hotkeys": ("Expression", "VTube Studio hotkey"),
    "mcp.servers.*.env": ("Variable", "Value"),
}
DEFAULT_HEADERS = ("Name", "Value")

# Tuning a person rarely needs: shown under Advanced (by dotted path or section prefix).
EXPERT: frozenset[str] = frozenset(
    {
        "chat.timeout_s",
        "chat.aws_region",
        "chat.aws_profile",
        "chat.local_model_path",
        "chat.local_threads",
        "chat.local_context",
        "chat.local_gpu",
        "agent.context_window",
        "chat.allow_plain_http",
        "agent.max_tool_rounds",
        "agent.max_tool_calls_per_round",
        "agent.max_tool_calls",
        "agent.tool_timeout_s",
        "agent.require_detailed",
        "speech.model",
        "speech.model_path",
        "speech.threads",
        "speech.partial_interval_s",
        "speech.timeout_s",
        "vad.start_threshold",
        "vad.stop_threshold",
        "vad.pre_speech_pad_ms",
        "vad.min_speech_ms",
        "vad.max_utterance_s",
        "vad.barge_in_ms",
        "turn.first_check_ms",
        "turn.recheck_ms",
        "turn.threshold",
        "turn.doubt_ms",
        "turn.settle_ms",
        "turn.question_settle_ms",
        "turn.fallback_ms",
        "turn.pause_ms",
        "turn.speculative_replies",
        "turn.continue_speech_ms",
        "audio.echo_tail_ms",
        "audio.resume_timeout_s",
        "tts.lookahead",
        "tts.model_path",
        "tts.audio_format",
        "tts.timeout_s",
        "avatar.live2d.frame_rate",
        "avatar.vtube_studio.mouth_parameter",
        "avatar.vtube_studio.plugin_name",
        "avatar.vtube_studio.plugin_developer",
    }
)


def is_expert(path: str) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:end]) in EXPERT for end in range(1, len(parts) + 1))
