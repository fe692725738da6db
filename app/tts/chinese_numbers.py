"""Numbers written in digits inside a Chinese sentence, as Chinese words.

A voice that reads Chinese by its sounds (tone-numbered pinyin to espeak-ng) must be
given "十二", not "12": in a Chinese sentence a number is said in Chinese. The forms
covered: integers (with 万 and 亿, "1,000" too), decimals (三点五), percentages
(百分之五十), dates (二零二四年十二月三日), fractions (二分之一), years (二零二四年:
digit by digit), times of day (十点三十), ranges (三到五), negatives (负五), long
digit strings such as phone numbers (digit by digit), and 两 for a 2 counting things (两个, 两点).
"""

from __future__ import annotations

import re

__all__ = ["digits_to_chinese", "integer_to_chinese", "numbers_to_chinese"]

_DIGITS = "零一二三四五六七八九"
_SMALL_UNITS = ("", "十", "百", "千")
_BIG_UNITS = ("", "万", "亿", "万亿")
# Measure words after which a lone 2 is 两 ("2个" is 两个); 2 before 年 is a count
# of years only when the number is not a year (that case is read digit by digit).
_MEASURE_WORDS = frozenset("个只位本次天件张条把辆岁点块杯瓶种台部首句场双对家间层匹头棵份批周")
# A digit string read digit by digit: a leading zero (0571..., 007) or longer than a
# number anyone says as a quantity.
_LONGEST_QUANTITY = 10

_NUMBER = re.compile(
    r"(?P<sign>(?<![0-9A-Za-z.])[-−])?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)"
    r"(?:\.(?P<frac>\d+))?"
    r"(?P<pct>\s?[%％])?"
)
_TIME = re.compile(r"(?<![\d:])(?P<h>[01]?\d|2[0-3])[:：](?P<m>[0-5]\d)(?![\d:])")
_FRACTION = re.compile(r"(?<![\d/.])(?P<num>\d+)/(?P<den>\d+)(?![\d/])")
_DATE = re.compile(
    r"(?<![\d.])(?P<y>\d{4})[-/.](?P<mo>1[0-2]|0?[1-9])[-/.](?P<d>3[01]|[12]\d|0?[1-9])(?![\d.])"
)
_RANGE = re.compile(r"(?<=\d)\s?[-~～–—]\s?(?=\d)")
_LATIN_GLUED = re.compile(r"[A-Za-z]")


def _group_to_chinese(group: int) -> str:
    """0 < group < 10000, with 零 for the gaps inside it ("1005" is 一千零五)."""
    text = ""
    pending_zero = False
    for position in range(3, -1, -1):
        digit = group // 10**position % 10
        if digit == 0:
            pending_zero = bool(text)
            continue
        if pending_zero:
            text += "零"
            pending_zero = False
        text += _DIGITS[digit] + _SMALL_UNITS[position]
    return text


def integer_to_chinese(value: int) -> str:
    """0 → 零, 12 → 十二, 110 → 一百一十, 10005 → 一万零五, 120000000 → 一亿二千万."""
    if value == 0:
        return "零"
    if value < 0:
        return "负" + integer_to_chinese(-value)
    groups: list[int] = []
    while value:
        groups.append(value % 10000)
        value //= 10000
    if len(groups) > len(_BIG_UNITS):
        return digits_to_chinese(str(sum(g * 10000**i for i, g in enumerate(groups))))
    text = ""
    zero_before = False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            zero_before = bool(text)
            continue
        if text and (zero_before or group < 1000):
            text += "零"
        text += _group_to_chinese(group) + _BIG_UNITS[index]
        zero_before = False
    # 十二, not 一十二, when the number begins with its tens; 两千, 两万, not 二千, 二万
    if text.startswith("一十"):
        return text[1:]
    return "两" + text[1:] if text[:2] in ("二千", "二万", "二亿") else text


def digits_to_chinese(digits: str) -> str:
    """Each digit on its own: "2024" → 二零二四."""
    return "".join(_DIGITS[int(d)] for d in digits if d.isdigit())


def _say_number(match: re.Match[str], text: str) -> str:
    start, end = match.span()
    before = text[max(0, start - 2) : start].rstrip("-")
    if (before and _LATIN_GLUED.match(before[-1])) or _LATIN_GLUED.match(text[end : end + 1]):
        return match[0]  # part of a name: MP3, iPhone15, COVID-19
    whole = match["int"].replace(",", "")
    after = text[end : end + 1]
    if match["frac"] is None and match["pct"] is None:
        if after == "年" and len(whole) == 4:
            return ("负" if match["sign"] else "") + digits_to_chinese(whole)
        long = len(whole) > _LONGEST_QUANTITY and "," not in match["int"]
        if (whole.startswith("0") and len(whole) > 1) or long:
            return digits_to_chinese(whole)
    said = integer_to_chinese(int(whole))
    if match["frac"] is not None:
        said += "点" + digits_to_chinese(match["frac"])
    if said == "二" and match["frac"] is None and match["pct"] is None and after in _MEASURE_WORDS:
        said = "两"
    if match["sign"]:
        said = "负" + said
    if match["pct"]:
        said = "百分之" + said
    return said


def _say_time(match: re.Match[str]) -> str:
    hour, minute = int(match["h"]), int(match["m"])
    said = ("两" if hour == 2 else integer_to_chinese(hour)) + "点"
    if minute:
        said += ("零" if minute < 10 else "") + integer_to_chinese(minute)
    return said


def _say_date(match: re.Match[str]) -> str:
    year = digits_to_chinese(match["y"])
    return (
        f"{year}年{integer_to_chinese(int(match['mo']))}月{integer_to_chinese(int(match['d']))}日"
    )


def _say_fraction(match: re.Match[str]) -> str:
    return integer_to_chinese(int(match["den"])) + "分之" + integer_to_chinese(int(match["num"]))


def numbers_to_chinese(text: str) -> str:
    """`text` with its numbers in digits as Chinese words; digits glued to Latin letters
    (names such as "MP3") are left as they are."""
    if not any(c.isdigit() for c in text):
        return text
    text = text.translate(_FULL_WIDTH_DIGITS)
    text = _DATE.sub(_say_date, text)
    text = _TIME.sub(_say_time, text)
    text = _FRACTION.sub(_say_fraction, text)
    text = _RANGE.sub("到", text)
    return _NUMBER.sub(lambda m: _say_number(m, m.string), text)


_FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９．", "0123456789.")
