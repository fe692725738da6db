"""A memory command given in Chinese is answered in Chinese (issue 26): what the memory
tells the model about the command it carried out is in English, and the embedded model
answered a spoken "别忘了我的猫叫小白" in English after it; the note now ends by asking
for Chinese when the command was said in Chinese, and only then."""

from __future__ import annotations

import pytest

from app.memory.book import ANSWER_IN_CHINESE
from tests.memory_models import MemoryScript, memory_note
from tests.test_memory_session import make, settled


@pytest.mark.parametrize(
    ("said", "in_chinese"),
    [
        ("别忘了我的猫叫小白。", True),
        ("記住我的猫叫小白", True),  # traditional, as Whisper writes it now and then
        ("别再记得我的猫。", True),
        ("你记得我什么？", True),
        ("Remember that my cat is called Pepper.", False),
        ("Forget my cat.", False),
        ("What do you remember about me?", False),
        ("Remember that my cat is called 小白.", False),  # a Chinese name in English
        ("记住我的猫叫Pepper", True),  # an English name in Chinese
    ],
)
async def test_a_command_said_in_chinese_asks_for_a_chinese_answer(
    said: str, in_chinese: bool
) -> None:
    script = MemoryScript(reply=lambda request: "[joy] 好的！")
    session, _seen = make(script)
    try:
        await session.send_text("Remember that my cat is called Nori.")  # one to forget
        await session.send_text(said)
        await settled(session)
        told = memory_note(script.turns[-1])
    finally:
        await session.aclose()
    assert told, "the command's note did not reach the model"
    assert (ANSWER_IN_CHINESE in told) is in_chinese, told


async def test_chinese_talk_that_is_no_command_gets_no_such_line() -> None:
    script = MemoryScript(reply=lambda request: "[joy] 好的！")
    session, _seen = make(script)
    try:
        await session.send_text("我今天有点累。")
        await settled(session)
        told = memory_note(script.turns[-1])
    finally:
        await session.aclose()
    assert ANSWER_IN_CHINESE not in told
