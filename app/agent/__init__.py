"""The agent: AgentCore (the model and its tools), MemoryAgent (history, interruptions),
the reply pipeline (transformers) and conversation storage."""

from app.agent.core import AgentCore, AgentTurnError, TurnStats
from app.agent.memory_agent import BatchInput, MemoryAgent
from app.agent.outputs import Actions, SentenceOutput, ToolStatus
from app.agent.storage import ConversationStorage, FileStorage, InMemoryStorage

__all__ = [
    "Actions",
    "AgentCore",
    "AgentTurnError",
    "BatchInput",
    "ConversationStorage",
    "FileStorage",
    "InMemoryStorage",
    "MemoryAgent",
    "SentenceOutput",
    "ToolStatus",
    "TurnStats",
]
