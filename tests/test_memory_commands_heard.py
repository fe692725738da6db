"""Memory commands as a recognizer writes them (issue 26): Whisper base wrote "別忘了"
(traditional) for 别忘了, "請閃出我的貓" with traditional characters, and it writes spaces
where it hears pauses and marks before or after the words. A spoken 记住…/忘掉… is the
same command however it is written; a question or a sentence that is not a command stays
none, in either script."""

from __future__ import annotations

import pytest

from app.memory.commands import MemoryCommand, heard_as_written, parse_command

REMEMBER_CAT = MemoryCommand("remember", "我的猫叫小白")
FORGET_CAT = MemoryCommand("forget", "我的猫")


@pytest.mark.parametrize(
    "heard",
    [
        "别忘了我的猫叫小白。",  # as said
        "別忘了我的猫叫小白。",  # traditional 別, as Whisper base wrote it
        "記住我的猫叫小白",  # traditional 記
        "记住 我的猫 叫小白",  # spaces at the pauses
        "记住，我的猫叫小白！",  # marks after the command word
        "记住。我的猫叫小白",
        "……记住我的猫叫小白……",  # marks before and after
        "「记住我的猫叫小白」",
        " 嗯，记住我的猫叫小白。",  # a filler before it
        "对了，请你记住我的猫叫小白",
        "請你記住我的猫叫小白",  # traditional 請 and 記
        "幫我記下我的猫叫小白",  # traditional 幫, 記
        "不要忘了，我的猫叫小白~",
    ],
)
def test_remember_is_heard_however_it_is_written(heard: str) -> None:
    assert parse_command(heard) == REMEMBER_CAT


@pytest.mark.parametrize(
    "heard",
    [
        "别再记得我的猫。",
        "別再記得我的猫",  # traditional
        "别再 记得 我的猫",
        "忘掉，我的猫！",
        "刪掉我的猫吧",  # traditional 刪
        "刪除關於我的猫",  # traditional 刪, 關, 於
        "...忘掉我的猫这件事。",
        "那麼，忘記我的猫吧",  # traditional 麼, 記
    ],
)
def test_forget_is_heard_however_it_is_written(heard: str) -> None:
    assert parse_command(heard) == FORGET_CAT


@pytest.mark.parametrize(
    ("heard", "action"),
    [
        ("忘掉關於我的所有事情吧", "forget_all"),
        ("忘掉所有的事吧……", "forget_all"),
        ("你還記得我什麼？", "recall"),
        ("你都知道 我 什么", "recall"),
    ],
)
def test_the_other_commands_are_heard_in_either_script(heard: str, action: str) -> None:
    command = parse_command(heard)
    assert command is not None and command.action == action


@pytest.mark.parametrize(
    "heard",
    [
        "你記得我的貓嗎？",  # a question, in traditional characters
        "你记得 我的猫 吗？",
        "我忘記帶傘了",  # something the user forgot
        "忘了吧。",
        "……",
        "「」",
        "記住",  # nothing to remember
        "别忘了！",
    ],
)
def test_what_is_not_a_command_stays_none_in_either_script(heard: str) -> None:
    assert parse_command(heard) is None


def test_what_was_said_is_kept_as_written_beyond_the_command_words() -> None:
    # The subject keeps the user's characters (only the command's words are folded),
    # and English keeps its spaces.
    assert parse_command("記住我的貓叫小白") == MemoryCommand("remember", "我的貓叫小白")
    assert parse_command("记住我的猫叫 Luna") == MemoryCommand("remember", "我的猫叫 Luna")
    assert parse_command("  ...remember that my cat is called Nori") == MemoryCommand(
        "remember", "my cat is called Nori"
    )
    assert heard_as_written("Remember  my   cat") == "Remember my cat"
    assert heard_as_written("記住 我的 猫") == "记住我的猫"
