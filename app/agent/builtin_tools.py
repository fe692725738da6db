"""The tools every tool-calling model is offered: the clock, the calculator, the screen
and (when the user allows it) the clipboard.

A model should not guess what the app can know: the time and date anywhere, a day
before or after today, and exact arithmetic. `get_time` takes an IANA time zone or a
city that names one ("Tokyo", "New York"), and a number of days from today ("tomorrow"
is 1); `calculate` works out an expression exactly (`app.agent.calculator`).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import BaseModel, Field

from app.agent.calculator import MAX_CHARS, NoAnswer, calculate
from app.agent.tools import (
    CaptureHook,
    ConfirmHook,
    Tool,
    ToolContext,
    ToolError,
    clipboard_tool,
    screenshot_tool,
)

if TYPE_CHECKING:
    from app.media import ScreenGrabber

__all__ = ["builtin_tools", "calculator_tool", "get_time_tool", "zone_named"]


class GetTimeArgs(BaseModel):
    timezone: str | None = Field(
        None,
        description=(
            "An IANA time zone such as Europe/Paris, or a city that names one (Tokyo); "
            "the user's local time if omitted."
        ),
    )
    days_from_today: int = Field(
        0,
        ge=-36_600,
        le=36_600,
        description="Days after today (1 is tomorrow, -1 yesterday): the date of that day.",
    )


@lru_cache(maxsize=1)
def _zones_by_place() -> dict[str, str]:
    """ "tokyo" -> "Asia/Tokyo", "new york" -> "America/New_York" (a zone's last part)."""
    places: dict[str, str] = {}
    for zone in sorted(available_timezones()):
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/")):
            places.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    return places


def zone_named(name: str) -> ZoneInfo:
    """The time zone `name` says: an IANA name ("Asia/Tokyo", "UTC") or the city of one
    ("Tokyo", "new york")."""
    text = name.strip()
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    zone = _zones_by_place().get(" ".join(text.replace("_", " ").split()).lower())
    if zone is None:
        raise ToolError(
            f"Unknown time zone {name!r}: give an IANA name such as Asia/Tokyo or America/New_York."
        )
    return ZoneInfo(zone)


async def _get_time(args: GetTimeArgs, context: ToolContext) -> dict[str, str]:
    now = (
        dt.datetime.now(zone_named(args.timezone))
        if args.timezone
        else (dt.datetime.now().astimezone())
    )
    said = {
        "time": now.strftime("%H:%M"),
        "date": now.strftime("%A, %d %B %Y"),
        "timezone": args.timezone or (now.tzname() or "local"),
        "utc_offset": now.strftime("%z"),
        "iso": now.isoformat(timespec="seconds"),
    }
    if args.days_from_today:
        day = now + dt.timedelta(days=args.days_from_today)
        said["asked_day"] = day.strftime("%A, %d %B %Y")
    return said


def get_time_tool() -> Tool:
    return Tool(
        "get_time",
        _get_time,
        GetTimeArgs,
        "The current date and time, here or in another time zone, and the date of a day "
        "before or after today.",
        5.0,
    )


class CalculateArgs(BaseModel):
    expression: str = Field(
        description=(
            "An arithmetic expression with numbers, + - * / ^, %, parentheses, "
            "'x% of y', sqrt(), abs(), round(); for example '(47 + 38) * 2'."
        ),
        max_length=MAX_CHARS,
    )


async def _calculate(args: CalculateArgs, context: ToolContext) -> str:
    try:
        return calculate(args.expression)
    except NoAnswer as exc:
        raise ToolError(str(exc)) from exc


def calculator_tool() -> Tool:
    return Tool(
        "calculate",
        _calculate,
        CalculateArgs,
        "Work out arithmetic exactly: use it for every sum, price, tip or percentage "
        "instead of working it out in your head.",
        5.0,
    )


def builtin_tools(
    *,
    captures_dir: Path | None = None,
    allow_clipboard: bool = False,
    on_capture: CaptureHook | None = None,
    confirm_capture: ConfirmHook | None = None,
    grabber: ScreenGrabber | None = None,
    timeout_s: float | None = None,
) -> list[Tool]:
    """get_time, calculate, take_screenshot (when a captures folder is given) and
    read_clipboard (only when allowed); `timeout_s` limits each one's own work (the time
    the user takes to allow a screenshot is not counted)."""
    tools = [get_time_tool(), calculator_tool()]
    if captures_dir is not None:
        tools.append(
            screenshot_tool(
                captures_dir=captures_dir,
                on_capture=on_capture,
                confirm=confirm_capture,
                grabber=grabber,
                **({"timeout_s": timeout_s} if timeout_s is not None else {}),
            )
        )
    if allow_clipboard:
        tools.append(clipboard_tool())
    if timeout_s is not None:
        for tool in tools:
            if tool.name != "take_screenshot":
                tool.timeout_s = timeout_s
    return tools
