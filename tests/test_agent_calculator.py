"""The calculator and the clock a tool-calling model is offered: exact answers, the
date of another day, a city's time zone, and a clear error for what has no answer."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from app.agent.builtin_tools import builtin_tools, calculator_tool, get_time_tool, zone_named
from app.agent.calculator import NoAnswer, calculate
from app.agent.tools import ToolError, ToolRegistry
from app.llm import ToolUseBlock


def use(name: str, /, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name=name, input=dict(arguments))


@pytest.mark.parametrize(
    ("expression", "answer"),
    [
        ("100 - 35", "65"),
        ("(47 + 38) * 2", "170"),
        ("7 / 2", "3.5"),
        ("1 / 3", "0.3333333333"),
        ("0.1 + 0.2", "0.3"),  # exact, not 0.30000000000000004
        ("15% of 80", "12"),
        ("2^10", "1,024"),
        ("3 x 4", "12"),
        ("1,250 * 4", "5,000"),
        ("sqrt(144)", "12"),
        ("sqrt(2)", "1.414213562"),
        ("-5 + abs(-3)", "-2"),
        ("round(2.675, 2)", "2.68"),
        ("120 / 80", "1.5"),
        ("12 × 3 ÷ 4 =", "9"),
        ("10 % 3", "1"),
    ],
)
def test_sums_are_worked_out_exactly(expression: str, answer: str) -> None:
    assert calculate(expression) == f"{expression.strip()} = {answer}"


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("1 / 0", "Division by zero"),
        ("__import__('os').system('true')", "Only numbers"),
        ("open('/etc/passwd')", "Only numbers"),
        ("9 ** 9 ** 9", "too large"),
        ("(-8) ** 0.5", "not a real number"),
        ("two plus two", "not an arithmetic expression"),
        ("", "Give an expression"),
        ("3 +", "not an arithmetic expression"),
    ],
)
def test_what_has_no_answer_is_said_and_nothing_is_run(expression: str, why: str) -> None:
    with pytest.raises(NoAnswer, match=why):
        calculate(expression)


async def test_the_calculator_tool_answers_and_reports_errors_to_the_model() -> None:
    registry = ToolRegistry([calculator_tool()])
    ok = await registry.run(use("calculate", expression="47 + 38"))
    assert not ok.is_error and ok.text == "47 + 38 = 85"
    bad = await registry.run(use("calculate", expression="1/0"))
    assert bad.is_error and "Division by zero" in bad.text
    long = await registry.run(use("calculate", expression="1+" * 200 + "1"))
    assert long.is_error  # longer than the tool takes


async def test_the_clock_gives_another_day_and_a_city_s_time_zone() -> None:
    registry = ToolRegistry([get_time_tool()])
    result = await registry.run(use("get_time", timezone="Tokyo", days_from_today=1))
    assert not result.is_error, result.text
    tomorrow = dt.datetime.now(ZoneInfo("Asia/Tokyo")) + dt.timedelta(days=1)
    assert (
        tomorrow.strftime("%A, %d %B %Y") in result.text and '"utc_offset": "+0900"' in result.text
    )
    assert zone_named("new york") == ZoneInfo("America/New_York")
    with pytest.raises(ToolError, match="IANA"):
        zone_named("Atlantis")


def test_every_tool_calling_model_is_offered_the_clock_and_the_calculator() -> None:
    names = [tool.name for tool in builtin_tools()]
    assert names[:2] == ["get_time", "calculate"]
