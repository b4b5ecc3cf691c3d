"""Calculator: arithmetic evaluated by walking the syntax tree — never `eval`, and bounded in size.

Numbers, `+ - * / // % **`, unary signs, parentheses and `abs round min max sqrt`. Anything else (names,
attributes, strings, other calls) is `INVALID_ARGS`; division by zero and overflow are `MATH_ERROR`.
"""

from __future__ import annotations

import ast
import math
import operator
import unicodedata
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.errors import ErrorCode, ToolError
from agent.tools.base import FunctionTool, Tool
from agent.tools.builtin.options import BuiltinOptions

NAME = "calculator"
DEFAULT_TIMEOUT_S = 2.0
MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
MAX_INT_BITS = 1024  # about 1.8e308, the largest float: results beyond are overflow, int or float
MAX_ROUND_DIGITS = 15
_EXACT_FLOAT_LIMIT = 2**53  # integral floats below this are shown as ints: 10 / 2 → 5

_BINARY: Mapping[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_ARITY: Mapping[str, tuple[int, int]] = {
    "abs": (1, 1),
    "round": (1, 2),
    "min": (1, 100),
    "max": (1, 100),
    "sqrt": (1, 1),
}
# What people and models type for the same operators.
_SPELLINGS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-"})

Number = int | float


class CalculatorArgs(BaseModel):
    expression: str = Field(
        min_length=1,
        max_length=MAX_EXPRESSION_CHARS,
        description="An arithmetic expression, e.g. `47 * 12` or `round(sqrt(2) * 100, 1)`. Numbers, "
        "+ - * / // % ** and parentheses; functions abs, round, min, max, sqrt. No variables or units.",
    )


def evaluate(expression: str) -> Number:
    """The value of an arithmetic expression; `ToolError` (INVALID_ARGS or MATH_ERROR) otherwise."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise _invalid(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    text = unicodedata.normalize("NFKC", expression).translate(_SPELLINGS).strip()
    if not text:
        raise _invalid("the expression is empty")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise _invalid(f"not an arithmetic expression: {expression.strip()!r}") from None
    try:
        return _tidy(_eval(tree.body))
    except ZeroDivisionError:
        raise _math("division by zero") from None
    except OverflowError:
        raise _math("the result is too large") from None
    except RecursionError:
        raise _invalid("the expression is nested too deeply") from None


async def calculate(args: CalculatorArgs) -> dict[str, Any]:
    return {"expression": args.expression.strip(), "result": evaluate(args.expression)}


def calculator_tool(*, timeout_s: float = DEFAULT_TIMEOUT_S) -> FunctionTool:
    return FunctionTool(
        NAME,
        "Evaluate an arithmetic expression exactly (use it for every calculation instead of doing it in your head).",
        CalculatorArgs,
        calculate,
        timeout_s=timeout_s,
    )


class CalculatorOptions(BuiltinOptions):
    pass


def build_calculator(options: Mapping[str, Any], data_dir: Path) -> Tool:
    CalculatorOptions.parse(options, builtin=NAME)
    return calculator_tool()


def _eval(node: ast.AST) -> Number:
    match node:
        case ast.Constant(value=bool() | complex()):
            raise _invalid(f"{node.value!r} is not a plain number")
        case ast.Constant(value=int() | float() as value):
            return _checked(value)
        case ast.Constant(value=str() | bytes()):
            raise _invalid("strings are not allowed; write numbers only")
        case ast.BinOp(left=left, op=ast.Pow(), right=right):
            return _checked(_power(_eval(left), _eval(right)))
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _BINARY:
            return _checked(_BINARY[type(op)](_eval(left), _eval(right)))
        case ast.BinOp(op=ast.BitXor()):
            raise _invalid("`^` is not a power here; write `**` (e.g. 2 ** 10)")
        case ast.UnaryOp(op=ast.USub(), operand=operand):
            return -_eval(operand)
        case ast.UnaryOp(op=ast.UAdd(), operand=operand):
            return +_eval(operand)
        case ast.Call(func=ast.Name(id=name), args=args, keywords=[]) if name in _ARITY:
            return _checked(_call(name, [_eval(arg) for arg in args]))
        case ast.Call(func=ast.Name(id=name)) if name not in _ARITY:
            raise _invalid(f"{name}() is not allowed; only {', '.join(_ARITY)} may be called")
        case ast.Call():
            raise _invalid(f"only {', '.join(_ARITY)} may be called, with plain numbers as arguments")
        case ast.Name(id=name):
            raise _invalid(f"names are not allowed ({name!r}); write the numbers themselves")
        case ast.Attribute():
            raise _invalid("attribute access is not allowed")
        case _:
            raise _invalid(f"{type(node).__name__} is not arithmetic")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise _math(f"the exponent {exponent:g} is too large (the limit is {MAX_EXPONENT})")
    exact = isinstance(base, int) and isinstance(exponent, int)
    if exact and exponent > 0 and abs(base) > 1 and exponent * math.log2(abs(base)) > MAX_INT_BITS:
        raise _math(f"the result is too large (more than {MAX_INT_BITS} bits)")
    result = base**exponent
    if isinstance(result, complex):
        raise _math("the result is not a real number (a negative base with a fractional exponent)")
    return result


def _call(name: str, values: list[Number]) -> Number:
    low, high = _ARITY[name]
    if not low <= len(values) <= high:
        expected = str(low) if low == high else f"{low} to {high}"
        raise _invalid(f"{name}() takes {expected} arguments, not {len(values)}")
    match name:
        case "abs":
            return abs(values[0])
        case "min":
            return min(values)
        case "max":
            return max(values)
        case "sqrt":
            return _sqrt(values[0])
        case _:
            return _round(*values)


def _sqrt(value: Number) -> Number:
    if value < 0:
        raise _math("the square root of a negative number is not real")
    if isinstance(value, int):
        root = math.isqrt(value)
        if root * root == value:
            return root
    return math.sqrt(value)


def _round(value: Number, digits: Number = 0) -> Number:
    """Half away from zero, on the decimal the user wrote (Python's `round(2.5)` gives 2; people expect 3)."""
    if not isinstance(digits, int) or abs(digits) > MAX_ROUND_DIGITS:
        raise _invalid(f"round()'s digits must be a whole number from -{MAX_ROUND_DIGITS} to {MAX_ROUND_DIGITS}")
    if isinstance(value, int) and digits >= 0:
        return value
    with localcontext() as context:
        context.prec = 400  # room for every digit of the largest float and the requested decimals
        rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return int(rounded) if digits <= 0 else float(rounded)


def _checked(value: Number) -> Number:
    if isinstance(value, float) and not math.isfinite(value):
        raise _math("the result is too large" if not math.isnan(value) else "the result is not a number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _math(f"the result is too large (more than {MAX_INT_BITS} bits)")
    return value


def _tidy(value: Number) -> Number:
    """Integral results as ints; float noise cut at 15 significant digits (0.1 + 0.2 → 0.3)."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _EXACT_FLOAT_LIMIT:
            return int(value)
        return float(f"{value:.15g}")
    return value


def _invalid(message: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_ARGS, message)


def _math(message: str) -> ToolError:
    return ToolError(ErrorCode.MATH_ERROR, message)
