"""The agent: AgentCore (the model and its tools), MemoryAgent (the history, each turn
recorded once, as heard), the reply pipeline (transformers), tools, vision, characters
and conversation storage; AgentRunner, the host API (the agent built from the app's
configuration, without the voice session).

Every name is imported on first use, so importing one light module of the package
(`app.agent.speech_text`, `app.agent.storage`) on the way to the window does not pull
in the model client, httpx or Pillow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.agent.agent_turn import AgentTurn, AgentTurnError, TurnOutcome
    from app.agent.builtin_tools import builtin_tools
    from app.agent.core import AgentCore
    from app.agent.mcp import McpServer
    from app.agent.memory_agent import (
        INTERRUPTED_NOTE,
        AgentReply,
        BatchInput,
        MemoryAgent,
        Reply,
    )
    from app.agent.outputs import Actions, SentenceOutput, ToolStatus
    from app.agent.persona import Character, CharacterError, load_character
    from app.agent.runner import AgentRunner, AgentRunRequest, AgentRunResult
    from app.agent.storage import (
        ConversationInfo,
        ConversationStorage,
        FileStorage,
        InMemoryStorage,
    )
    from app.agent.tools import Tool, ToolContext, ToolError, ToolRegistry
    from app.agent.vision import VisionSummarizer

_LAZY = {
    "AgentCore": "app.agent.core",
    "AgentTurn": "app.agent.agent_turn",
    "AgentTurnError": "app.agent.agent_turn",
    "TurnOutcome": "app.agent.agent_turn",
    "AgentReply": "app.agent.memory_agent",
    "McpServer": "app.agent.mcp",
    "INTERRUPTED_NOTE": "app.agent.memory_agent",
    "BatchInput": "app.agent.memory_agent",
    "MemoryAgent": "app.agent.memory_agent",
    "Reply": "app.agent.memory_agent",
    "Actions": "app.agent.outputs",
    "SentenceOutput": "app.agent.outputs",
    "ToolStatus": "app.agent.outputs",
    "Character": "app.agent.persona",
    "CharacterError": "app.agent.persona",
    "load_character": "app.agent.persona",
    "AgentRunRequest": "app.agent.runner",
    "AgentRunResult": "app.agent.runner",
    "AgentRunner": "app.agent.runner",
    "ConversationInfo": "app.agent.storage",
    "ConversationStorage": "app.agent.storage",
    "FileStorage": "app.agent.storage",
    "InMemoryStorage": "app.agent.storage",
    "Tool": "app.agent.tools",
    "ToolContext": "app.agent.tools",
    "ToolError": "app.agent.tools",
    "ToolRegistry": "app.agent.tools",
    "builtin_tools": "app.agent.builtin_tools",
    "VisionSummarizer": "app.agent.vision",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "INTERRUPTED_NOTE",
    "Actions",
    "AgentCore",
    "AgentReply",
    "AgentRunRequest",
    "AgentRunResult",
    "AgentRunner",
    "AgentTurn",
    "AgentTurnError",
    "BatchInput",
    "Character",
    "CharacterError",
    "ConversationInfo",
    "ConversationStorage",
    "FileStorage",
    "InMemoryStorage",
    "McpServer",
    "MemoryAgent",
    "Reply",
    "SentenceOutput",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolStatus",
    "TurnOutcome",
    "VisionSummarizer",
    "builtin_tools",
    "load_character",
]
