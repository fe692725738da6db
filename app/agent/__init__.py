"""The agent: AgentCore (the model and its tools), MemoryAgent (history, interruptions),
the reply pipeline (transformers), tools, vision, characters and conversation storage."""

from app.agent.core import AgentCore, AgentTurnError, TurnStats
from app.agent.mcp import McpServer
from app.agent.memory_agent import INTERRUPTED_NOTE, BatchInput, MemoryAgent
from app.agent.outputs import Actions, SentenceOutput, ToolStatus
from app.agent.persona import Character, CharacterError, load_character
from app.agent.storage import (
    ConversationInfo,
    ConversationStorage,
    FileStorage,
    InMemoryStorage,
)
from app.agent.tools import Tool, ToolContext, ToolError, ToolRegistry, builtin_tools
from app.agent.vision import VisionSummarizer

__all__ = [
    "INTERRUPTED_NOTE",
    "Actions",
    "AgentCore",
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
    "SentenceOutput",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolStatus",
    "TurnStats",
    "VisionSummarizer",
    "builtin_tools",
    "load_character",
]
