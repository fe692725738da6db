"""Small sums the user asks, worked out by the app and given to the model.

A 1.5B model gets "twelve plus seven" right most of the time and "a hundred minus
thirty-five" wrong often enough; the app counts exactly. `asked_sums` finds the sums a
message asks (in digits or words, English or Chinese: "what is twelve plus seven",
"what's 12 times 3", "how much is a hundred minus thirty-five", "十二加七等于多少") and
`sum_line` writes the sentence that answers it ("12 plus 7 is 19.", digits and words
the same way every time) as a short line the model reads after the user's words, as
the time is given (`app.agent.clock`). Nothing is evaluated as code: the words are
parsed into numbers and the four operations (and "percent of", "squared"), in exact
fractions, with the usual precedence.

A sum is only taken when the message asks one ("what is", "how much", "=", "?",
"等于", "多少" ...) or is nothing but the sum: "I have two cats plus a dog" has no
number after "plus", and "I ran 5 - 10 km" asks nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Sum", "asked_sums", "misheard_sum", "numbers_in", "said_sum", "said_sums", "sum_line"]

_SMALL = {
    "zero": 0, "nought": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_CHINESE_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
    "八": 8, "九": 9,
}
_CHINESE_UNITS = {"十": 10, "百": 100, "千": 1_000}
_CHINESE_SECTIONS = {"万": 10_000, "亿": 100_000_000}
_CHINESE_NUMERAL = "".join([*_CHINESE_DIGITS, *_CHINESE_UNITS, *_CHINESE_SECTIONS])

# Infix operators, as token sequences (longest first where one starts another).
_INFIX: list[tuple[tuple[str, ...], str]] = [
    (("multiplied", "by"), "*"), (("divided", "by"), "/"), (("take", "away"), "-"),
    (("added", "to"), "+"), (("plus",), "+"), (("+",), "+"), (("minus",), "-"),
    (("-",), "-"), (("times",), "*"), (("time",), "*"), (("x",), "*"), (("×",), "*"), (("*",), "*"),
    (("over",), "/"), (("/",), "/"), (("÷",), "/"),
    (("加", "上"), "+"), (("加",), "+"), (("减", "去"), "-"), (("减",), "-"),
    (("乘", "以"), "*"), (("乘",), "*"), (("除", "以"), "/"),
]
# "add A to B", "subtract A from B", "the sum of A and B" ...: (words, op, joiners, swap)
_PREFIX: list[tuple[tuple[str, ...], str, tuple[str, ...], bool]] = [
    (("add",), "+", ("to", "and"), False),
    (("sum", "of"), "+", ("and",), False),
    (("subtract",), "-", ("from",), True),
    (("take",), "-", ("from",), True),
    (("difference", "between"), "-", ("and",), False),
    (("multiply",), "*", ("by", "and", "times"), False),
    (("product", "of"), "*", ("and",), False),
    (("divide",), "/", ("by",), False),
]
_SHOWN = {"+": "+", "-": "−", "*": "×", "/": "÷"}
_LIMIT = 10**15  # larger numbers are not small sums (and keep the work small)

_TOKEN = re.compile(
    rf"\d+(?:,\d{{3}})*(?:\.\d+)?|[a-z]+|[{_CHINESE_NUMERAL}]+|[\u4e00-\u9fff]|[-+*/×÷=?%？]"
)
_ASKS = re.compile(
    r"\b(?:what|whats|how much|how many|calculate|compute|work out|solve|equals?|tell me)\b"
    r"|[=?？]|等于|多少|几|算",
)
_ASKS_PLAINLY = re.compile(
    r"\b(?:what is|how much|calculate|compute|work out|solve|equals?)\b|=|等于|多少"
)
_FILLER = {"please", "so", "ok", "okay", "um", "uh", "hey", "and", "then", "now"}


@dataclass(frozen=True, slots=True)
class Sum:
    """One sum asked: the numbers and operators in order, and its exact value (None:
    a division by zero)."""

    numbers: tuple[Fraction, ...]
    ops: tuple[str, ...]
    value: Fraction | None

    def written(self) -> str:
        parts = [show(self.numbers[0])]
        for op, number in zip(self.ops, self.numbers[1:], strict=True):
            parts.append(f" {_SHOWN[op]} {show(number)}")
        return "".join(parts)


def show(value: Fraction) -> str:
    """`value` as digits: exact when it has at most six decimals, else rounded."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value.denominator == 1:
        whole = value.numerator
        return sign + (f"{whole:,}" if whole >= 10_000 else str(whole))
    scaled = value * 10**6
    if scaled.denominator == 1:
        return sign + f"{float(value):.6f}".rstrip("0")
    return sign + f"{float(value):.4f}".rstrip("0") + "…"


_SAID = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
_SAID_ZH = {"+": "加", "-": "减", "*": "乘以", "/": "除以"}


def said_sum(item: Sum, *, chinese: bool = False) -> str:
    """The sum and its answer as one spoken clause, numbers in digits and the operations
    in words: "100 minus 35 is 65", "10 divided by 3 is about 3.3333", "12加7等于19"."""
    words = _SAID_ZH if chinese else _SAID
    parts = [show(item.numbers[0])]
    for op, number in zip(item.ops, item.numbers[1:], strict=True):
        parts.append(f"{words[op]}{show(number)}" if chinese else f" {words[op]} {show(number)}")
    asked = "".join(parts)
    if item.value is None:
        if chinese:
            return f"{asked}没有答案，不能除以零"
        return f"{asked} has no answer, since nothing can be divided by zero"
    answer = show(item.value)
    about = answer.endswith("…")
    answer = answer.rstrip("…")
    if chinese:
        return f"{asked}{'约等于' if about else '等于'}{answer}"
    return f"{asked} is {'about ' if about else ''}{answer}"


def said_sums(sums: list[Sum], *, chinese: bool = False) -> str:
    """The sentence that answers `sums`: "12 plus 7 is 19." (one reply, said as is)."""
    clauses = [said_sum(item, chinese=chinese) for item in sums]
    if chinese:
        return "，".join(clauses) + "。"
    text = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + f", and {clauses[-1]}"
    return text[0].upper() + text[1:] + "."


def sum_line(sums: list[Sum], *, chinese: bool = False) -> str:
    """The line the model reads after the user's words: the sentence that answers the
    sums, worked out exactly, to say as it is (a 1.5B model given only "12 + 7 = 19"
    answers "12 plus 7 equals 19" one time and "100 minus thirty five equals sixty-five"
    the next; given the sentence, it says the sentence)."""
    said = said_sums(sums, chinese=chinese)
    if chinese:
        return f"（应用已经准确算好。你只用中文回答，就说这一句：“[neutral] {said}”）"
    return f'(The app worked it out exactly. Answer me with: "[neutral] {said}")'


def _normal(text: str) -> str:
    low = text.lower().replace("’", "'").replace("'s", " is").replace("'", "")
    low = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", low)  # thirty-five
    low = low.replace("＋", "+").replace("－", "-").replace("＝", "=")
    if not _ASKS_PLAINLY.search(low):  # 5-10 km, 9/11: a range, a date, not a sum
        low = re.sub(r"(?<=\d)[-/](?=\d)", " ", low)
    return low


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_normal(text))


def _chinese_value(run: str) -> int:
    total = section = number = 0
    for ch in run:
        if ch in _CHINESE_DIGITS:
            number = _CHINESE_DIGITS[ch]
        elif ch in _CHINESE_UNITS:
            section += (number or 1) * _CHINESE_UNITS[ch]
            number = 0
        else:
            total += (section + number) * _CHINESE_SECTIONS[ch]
            section = number = 0
    return total + section + number


def _number(tokens: list[str], i: int) -> tuple[Fraction, int] | None:
    """The number that starts at `tokens[i]` and the index after it, or None."""
    n = len(tokens)
    if i >= n:
        return None
    first = tokens[i]
    if first and first[0] in _CHINESE_NUMERAL:
        return Fraction(_chinese_value(first)), i + 1
    negative = first == "negative"
    if negative:
        i += 1
    total, current, j, seen = Fraction(0), Fraction(0), i, False
    last = ""  # the kind of the last word: digits, small, tens, hundred, scale
    while j < n:
        word = tokens[j]
        if word[0].isdigit() and not seen:
            current, last, seen = Fraction(word.replace(",", "")), "digits", True
        elif word == "a" and j + 1 < n and (tokens[j + 1] == "hundred" or tokens[j + 1] in _SCALES):
            if seen:
                break
            current, last, seen = Fraction(1), "small", True
        elif word in _SMALL and last in ("", "tens", "hundred", "scale", "and"):
            if last == "tens" and _SMALL[word] >= 10:
                break
            current += _SMALL[word]
            last, seen = "small", True
        elif word in _TENS and last in ("", "hundred", "scale", "and"):
            current += _TENS[word]
            last, seen = "tens", True
        elif word == "hundred" and last in ("small", "digits", "tens") and current < 100:
            current *= 100
            last = "hundred"
        elif word in _SCALES and last in ("small", "digits", "tens", "hundred"):
            total += current * _SCALES[word]
            current, last = Fraction(0), "scale"
        elif word == "and" and last in ("hundred", "scale") and j + 1 < n and (
            tokens[j + 1] in _SMALL or tokens[j + 1] in _TENS
        ):
            last = "and"
        elif word == "point" and last in ("small", "tens", "digits") and j + 1 < n and (
            tokens[j + 1] in _SMALL and _SMALL[tokens[j + 1]] < 10
        ):
            digits = ""
            j += 1
            while j < n and tokens[j] in _SMALL and _SMALL[tokens[j]] < 10:
                digits += str(_SMALL[tokens[j]])
                j += 1
            current += Fraction(int(digits), 10 ** len(digits))
            last = "point"
            break
        else:
            break
        j += 1
    if not seen or last == "and":
        return None
    value = total + current
    if tokens[j : j + 3] == ["and", "a", "half"]:  # three and a half
        value, j = value + Fraction(1, 2), j + 3
    return (-value if negative else value), j


def _infix(tokens: list[str], i: int) -> tuple[str, int] | None:
    for words, op in _INFIX:
        if tuple(tokens[i : i + len(words)]) == words:
            return op, i + len(words)
    return None


def _evaluate(numbers: list[Fraction], ops: list[str]) -> Fraction | None:
    """The value with × and ÷ before + and − (None: divided by zero)."""
    terms: list[Fraction] = [numbers[0]]
    signs: list[str] = []
    for op, number in zip(ops, numbers[1:], strict=True):
        if op in "*/":
            if op == "/" and number == 0:
                return None
            terms[-1] = terms[-1] * number if op == "*" else terms[-1] / number
        else:
            terms.append(number)
            signs.append(op)
    value = terms[0]
    for sign, term in zip(signs, terms[1:], strict=True):
        value = value + term if sign == "+" else value - term
    return value


def _chain(tokens: list[str], i: int) -> tuple[Sum, int] | None:
    """The sum that starts with the number at `tokens[i]` (at least one operation)."""
    start = _number(tokens, i)
    if start is None:
        return None
    numbers, ops, j = [start[0]], [], start[1]
    while j < len(tokens):
        if tokens[j] == "squared":  # 4 squared: 4 × 4
            ops.append("*")
            numbers.append(numbers[-1])
            j += 1
            continue
        if tokens[j] in ("percent", "%") and tokens[j + 1 : j + 2] == ["of"]:
            after = _number(tokens, j + 2)
            if after is None:
                break
            numbers[-1] = numbers[-1] / 100
            ops.append("*")
            numbers.append(after[0])
            j = after[1]
            continue
        found = _infix(tokens, j)
        if found is None:
            break
        after = _number(tokens, found[1])
        if after is None:
            break
        ops.append(found[0])
        numbers.append(after[0])
        j = after[1]
    if not ops or any(abs(x) > _LIMIT for x in numbers):
        return None
    return Sum(tuple(numbers), tuple(ops), _evaluate(numbers, ops)), j


def _prefixed(tokens: list[str], i: int) -> tuple[Sum, int] | None:
    """"add A to B", "the product of A and B" ... starting at `tokens[i]`."""
    for words, op, joiners, swap in _PREFIX:
        if tuple(tokens[i : i + len(words)]) != words:
            continue
        first = _number(tokens, i + len(words))
        if first is None or first[1] >= len(tokens) or tokens[first[1]] not in joiners:
            continue
        if op == "-" and swap and tokens[first[1]] != "from":
            continue
        second = _number(tokens, first[1] + 1)
        if second is None:
            continue
        a, b = (second[0], first[0]) if swap else (first[0], second[0])
        if max(abs(a), abs(b)) > _LIMIT:
            return None
        return Sum((a, b), (op,), _evaluate([a, b], [op])), second[1]
    return None


def asked_sums(text: str, limit: int = 3) -> list[Sum]:
    """The sums `text` asks to be worked out (at most `limit`), in order; none when it
    asks nothing ("I have two cats plus a dog", "5 - 10 km").

    A sum is numbers (digits, English or Chinese words) joined by plus, minus, times,
    divided by (and their signs, 加 减 乘以 除以), or "add A to B" and its kind."""
    tokens = _tokens(text)
    found: list[tuple[Sum, int, int]] = []
    i = 0
    while i < len(tokens) and len(found) < limit:
        match = _prefixed(tokens, i) or _chain(tokens, i)
        if match is None:
            i += 1
            continue
        found.append((match[0], i, match[1]))
        i = match[1]
    if not found:
        return []
    sums = [item for item, _, _ in found]
    if _ASKS.search(_normal(text)):
        return sums
    inside = {k for _, start, end in found for k in range(start, end)}
    rest = [t for k, t in enumerate(tokens) if k not in inside and t not in _FILLER]
    return sums if not rest else []  # nothing but the sum ("twelve plus seven")


# What speech recognition writes for an operator it mishears ("eight times six" heard
# as "what is it? time six"; "plus" as "plush" ...).
_MISHEARD_OPS = frozenset(
    ["time", "tines", "ties", "tyms", "plush", "plots", "pluss", "plass", "minas", "mines",
     "decided"]
)  # fmt: skip


# A number, an operator, then a name where the other number should be: "What is 12 plus
# Cameron?" (tiny.en with 5 beams, for "twelve plus seven" in espeak-ng's en-gb voice),
# which the 1.5B model answered "12 plus Cameron is 14."
_NAME_FOR_A_NUMBER = re.compile(
    r"(\w+)\s+(?:plus|minus|times|multiplied by|divided by)\s+(?!Pi\b)[A-Z][a-z]+\b"
)


def misheard_sum(text: str) -> bool:
    """Whether `text` asks something with a number and a word that sounds like an
    operator but makes no sum ("What is it? Time six."), or a sum with a name for one
    of its numbers ("What is 12 plus Cameron?"): probably a sum misheard."""
    tokens = _tokens(text)
    if asked_sums(text) or not _ASKS.search(_normal(text)):
        return False
    for match in _NAME_FOR_A_NUMBER.finditer(text):
        if _number(_tokens(match[1]), 0) is not None:
            return True
    near = [i for i, token in enumerate(tokens) if token in _MISHEARD_OPS]
    return any(
        _number(tokens, k) is not None
        for i in near for k in (i - 1, i + 1) if 0 <= k < len(tokens)
    )


def numbers_in(text: str) -> list[Fraction]:
    """Every number `text` says, in digits or words ("nineteen", "sixty-five", "3.5",
    "三点五" is not one: 三 and 五), in order: to compare a reply with an answer."""
    tokens = _tokens(text)
    found: list[Fraction] = []
    i = 0
    while i < len(tokens):
        number = _number(tokens, i)
        if number is None:
            i += 1
            continue
        found.append(number[0])
        i = number[1]
    return found
