"""The `calculate` tool: arithmetic a model would otherwise do in its head.

The model writes the expression ("(47 + 38) * 2", "15% of 80", "sqrt(2)"); it is parsed
(never run as code: Python's own parser reads it, and only numbers, the four operations,
powers, remainders, parentheses and a few functions are taken) and worked out exactly,
in fractions where it can. The answer is given as a short decimal, the way it is said.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction

__all__ = ["MAX_CHARS", "NoAnswer", "calculate", "said"]

MAX_CHARS = 200
MAX_POWER = 1000  # 10**1000 is still a number; 10**10**10 is an afternoon
MAX_DIGITS = 2000
Number = Fraction | float


class NoAnswer(ValueError):
    """The expression cannot be worked out; the message says why, for the model."""


_FUNCTIONS = {"sqrt", "abs", "round"}
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\s*", re.IGNORECASE)


def _written(expression: str) -> str:
    """The expression as Python's parser reads it: "x% of y" → "(x/100)*y", "^" → "**",
    "×" and "÷" as * and /, thousands separators dropped."""
    text = expression.strip().rstrip("=?").strip()
    text = _PERCENT_OF.sub(r"(\1/100)*", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    for old, new in (("^", "**"), ("×", "*"), ("÷", "/"), ("−", "-")):
        text = text.replace(old, new)
    return re.sub(r"(?<![\w.])x(?![\w(])", "*", text)  # "3 x 4"


def _number(value: Number) -> Number:
    if (
        isinstance(value, Fraction)
        and max(abs(value.numerator), value.denominator) > 10**MAX_DIGITS
    ):
        raise NoAnswer("That number is too large to work out.")
    return value


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return Fraction(node.value) if isinstance(node.value, int) else Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        return _number(_binary(node.op, _evaluate(node.left), _evaluate(node.right)))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
    ):
        if node.keywords or not 1 <= len(node.args) <= 2:
            raise NoAnswer(f"{node.func.id}() takes one number.")
        args = [_evaluate(a) for a in node.args]
        return _function(node.func.id, args)
    raise NoAnswer("Only numbers, + - * / ^ %, parentheses and sqrt(), abs(), round() can be used.")


def _binary(op: ast.operator, a: Number, b: Number) -> Number:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
        if b == 0:
            raise NoAnswer("Division by zero has no answer.")
        if isinstance(op, ast.Div):
            return a / b
        return Fraction(math.floor(a / b)) if isinstance(op, ast.FloorDiv) else a % b
    if isinstance(op, ast.Pow):
        if abs(float(b)) > MAX_POWER or (abs(float(a)) > 1e6 and abs(float(b)) > 100):
            raise NoAnswer("That power is too large to work out.")
        if isinstance(b, Fraction) and b.denominator == 1:
            if a == 0 and b < 0:
                raise NoAnswer("Zero to a negative power has no answer.")
            return a ** int(b)
        if a < 0:
            raise NoAnswer("A negative number to a fractional power is not a real number.")
        return float(a) ** float(b)
    raise NoAnswer("Only + - * / ^ % can be used.")


def _function(name: str, args: list[Number]) -> Number:
    if name == "sqrt":
        if len(args) != 1 or args[0] < 0:
            raise NoAnswer("sqrt() takes one number that is not negative.")
        root = (
            math.isqrt(int(args[0]))
            if isinstance(args[0], Fraction) and args[0].denominator == 1
            else None
        )
        return Fraction(root) if root is not None and root * root == args[0] else math.sqrt(args[0])
    if name == "abs":
        return -args[0] if args[0] < 0 else args[0]
    digits = int(args[1]) if len(args) == 2 else 0
    return Fraction(round(Fraction(args[0]), digits))


def said(value: Number) -> str:
    """A result as it is said: whole numbers with thousands separators, others to at most
    ten significant digits ("3.5", "0.3333333333", "1.414213562")."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return f"{value.numerator:,}"
    number = float(value)
    if math.isinf(number) or math.isnan(number):
        raise NoAnswer("That number is too large to work out.")
    text = f"{number:.10g}"
    if "e" in text:
        return text
    sign = "-" if text.startswith("-") else ""
    whole, _, part = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}" + (f".{part}" if part else "")


def calculate(expression: str) -> str:
    """`expression` worked out: "(47 + 38) * 2 = 170"."""
    text = _written(expression)
    if not text:
        raise NoAnswer("Give an expression to work out, such as '12 * 7'.")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise NoAnswer(f"{expression!r} is not an arithmetic expression.") from exc
    try:
        value = _evaluate(tree)
    except NoAnswer:
        raise
    except (OverflowError, ValueError, ZeroDivisionError) as exc:
        raise NoAnswer(f"{expression!r} has no answer here: {exc}.") from exc
    return f"{expression.strip()} = {said(value)}"
