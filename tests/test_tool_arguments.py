"""A user tool's values never become options of its program: `ls {path}` given "-la",
`find {dir}` given "-delete" are refused in words the model can act on, unless the
value comes after `--` or the tool says it takes options; and the config carries it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.agent.command_args import fill_command
from app.agent.tools import ToolRegistry, command_tool
from app.config import Settings
from app.llm import ToolUseBlock
from app.media import ScreenGrabber
from app.session.assembly import build_tools

# Prints its arguments one per line: what the program was really given.
ECHO_ARGS = [sys.executable, "-c", "import sys; print(*sys.argv[1:], sep='\\n')"]


def path_tool(command: list[str], **options: object):
    return command_tool(
        "list_files",
        command=command,
        parameters={"path": {"type": "string"}},
        **options,  # type: ignore[arg-type]
    )


async def run(tool, **arguments: object):
    return await ToolRegistry([tool]).run(ToolUseBlock(name=tool.name, input=arguments))


@pytest.mark.parametrize("value", ["-la", "--help", "-", "-delete", "--output=/etc/passwd"])
async def test_a_value_that_looks_like_an_option_is_refused(value: str) -> None:
    result = await run(path_tool([*ECHO_ARGS, "{path}"]), path=value)
    assert result.is_error
    assert f"{value!r} for path starts with '-'" in result.text
    assert f"give ./{value}" in result.text


async def test_the_same_value_after_a_double_dash_is_passed_as_it_is() -> None:
    result = await run(path_tool([*ECHO_ARGS, "--", "{path}"]), path="-la")
    assert not result.is_error
    assert result.text.splitlines() == ["--", "-la"]


async def test_a_tool_that_takes_options_gets_them() -> None:
    result = await run(path_tool([*ECHO_ARGS, "{path}"], accepts_options=True), path="-la")
    assert result.text == "-la" and not result.is_error


@pytest.mark.parametrize("value", ["notes.txt", "./-la", "a-b", "some words -x"])
async def test_ordinary_values_are_untouched(value: str) -> None:
    result = await run(path_tool([*ECHO_ARGS, "{path}"]), path=value)
    assert result.text == value and not result.is_error


def test_a_value_inside_an_option_of_the_authors_stays_a_value() -> None:
    argv = ["grep", "--regexp={pattern}", "-n{count}", "{file}"]
    filled = fill_command(argv, {"pattern": "-v", "count": "-1", "file": "f.txt"})
    assert filled == ["grep", "--regexp=-v", "-n-1", "f.txt"]


def test_negative_numbers_standing_alone_are_refused_too() -> None:
    with pytest.raises(ValueError, match="'-5' for n starts with '-'"):
        fill_command(["head", "-n", "{n}"], {"n": "-5"})


def test_a_nul_character_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="NUL character"):
        fill_command(["cat", "--", "{path}"], {"path": "a\0b"})


async def test_the_real_ls_is_not_fooled(tmp_path: Path) -> None:
    (tmp_path / "secret-listing").write_text("x")
    tool = command_tool("ls", command=["ls", "{path}"], parameters={"path": {"type": "string"}})
    refused = await run(tool, path="-la")
    assert refused.is_error and "ls would take it as an option" in refused.text
    listed = await run(tool, path=str(tmp_path))
    assert listed.text == "secret-listing"


async def test_the_config_setting_reaches_the_tool() -> None:
    settings = Settings.model_validate(
        {
            "tools": {
                "echo_args": {
                    "command": [*ECHO_ARGS, "{text}"],
                    "parameters": {"text": {"type": "string"}},
                    "accepts_options": True,
                },
                "strict": {
                    "command": [*ECHO_ARGS, "{text}"],
                    "parameters": {"text": {"type": "string"}},
                },
            }
        }
    )

    async def allow(_: str) -> bool:
        return True

    registry = build_tools(
        settings,
        on_capture=lambda _: None,
        confirm_capture=allow,
        grabber=ScreenGrabber(),
        notices=[],
    )
    loose = await registry.run(ToolUseBlock(name="echo_args", input={"text": "-x"}))
    strict = await registry.run(ToolUseBlock(name="strict", input={"text": "-x"}))
    assert loose.text == "-x"
    assert "starts with '-'" in strict.text
