"""Countdown answers: lenient extraction from model text, and a safe, exact verifier.

Training, evaluation and serving all score answers through this module (the server calls
it), so a model is graded the same way everywhere.

The verifier never runs Python. An expression is checked character by character (digits,
``+ - * /``, parentheses, spaces), its parentheses are counted by a linear scan, and only then
is it parsed with :func:`ast.parse`, whose tree is walked with a whitelist of node types and
bounds on size and depth. Arithmetic is exact (:class:`fractions.Fraction`, so ``1/3*3 == 1``)
and every intermediate result is bounded, so no input can cost more than microseconds.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

MAX_EXPRESSION_CHARS = 200
"""Longest expression the verifier looks at (six numbers need about 40 characters)."""
MAX_NESTING = 20
"""Deepest parenthesis nesting accepted, checked before parsing."""
MAX_NODES = 100
"""Most AST nodes accepted (operators included)."""
MAX_DEPTH = 40
"""Deepest AST accepted (chains of unary minus count too)."""
MAX_MAGNITUDE = 10**12
"""Bound on every literal, and on the size and the denominator of every intermediate result."""
MAX_TAGS_TRIED = 3
"""How many ``<answer>`` tags, from the last one back, extraction looks into."""

NO_EXPRESSION = "no arithmetic expression found"
_TOO_LARGE = "an intermediate result is too large (limit 10**12)"

_BAD_CHAR = re.compile(r"[^0-9+\-*/() ]")
_LOOKALIKES = {"×": "*", "·": "*", "⋅": "*", "∗": "*", "÷": "/", "∕": "/", "−": "-", "–": "-"}
_WORD = re.compile(r"[^\W\d]\w*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_OPERATOR_SYMBOLS = {ast.Pow: "** (power)", ast.FloorDiv: "// (floor division)"}


class ExpressionError(ValueError):
    """The text is not an allowed arithmetic expression; ``reason`` says why, for the player."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of checking one answer.

    ``expression`` is what was checked (``None`` when nothing could be extracted), ``value``
    its exact value when it could be computed, ``reason`` why it is wrong (``None`` when right).
    ``invalid``: not an answer to this puzzle at all (no expression, not an allowed one, or not
    exactly the given numbers), as opposed to a wrong one (the right numbers, the wrong value).
    """

    expression: str | None
    value: Fraction | None
    correct: bool
    reason: str | None
    invalid: bool = False


# --------------------------------------------------------------------------- evaluator


def parse(expression: str) -> tuple[ast.expr, list[int]]:
    """Check and parse an expression; return its tree and its integer literals in order.

    Raises ``ExpressionError`` for anything but integers, ``+ - * /``, unary minus or plus and
    parentheses, and for inputs beyond the size, nesting and magnitude bounds.
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"longer than {MAX_EXPRESSION_CHARS} characters")
    text = " ".join(expression.split())
    if not text:
        raise ExpressionError("empty expression")
    _check_characters(text)
    _check_parentheses(text)
    try:
        tree = ast.parse(text, mode="eval")
    except Exception:  # SyntaxError mostly; RecursionError/MemoryError are ruled out above
        raise ExpressionError("not a valid arithmetic expression") from None
    return tree.body, _check_tree(tree.body)


def evaluate(expression: str) -> Fraction:
    """The exact value of an expression. Raises ``ExpressionError`` (see :func:`parse`)."""
    node, _ = parse(expression)
    return Fraction(_evaluate(node))


def _check_characters(text: str) -> None:
    bad = _BAD_CHAR.search(text)
    if bad is None:
        return
    index, char = bad.start(), bad.group()
    if char in _LOOKALIKES:
        raise ExpressionError(f"'{char}' is not allowed: write {_LOOKALIKES[char]} instead")
    if char == ".":
        start, end = index, index + 1
        while start and text[start - 1].isdigit():
            start -= 1
        while end < len(text) and text[end].isdigit():
            end += 1
        raise ExpressionError(f"{text[start:end][:20]} is not an integer: use whole numbers only")
    if char == "=":
        raise ExpressionError("'=' is not allowed: give only the expression, not its result")
    word = _WORD.match(text, index)
    shown = word.group()[:20] if word else char
    quoted = f'"{shown}"' if shown == "'" else f"'{shown}'" if shown.isprintable() else repr(shown)
    raise ExpressionError(f"{quoted} is not allowed: use only integers, + - * / and parentheses")


def _check_parentheses(text: str) -> None:
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
            if depth > MAX_NESTING:
                raise ExpressionError(f"more than {MAX_NESTING} nested parentheses")
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise ExpressionError("unbalanced parentheses: a ')' has no '('")
    if depth:
        raise ExpressionError("unbalanced parentheses: a '(' is never closed")


def _check_tree(root: ast.expr) -> list[int]:
    """Whitelist the node types, bound size and depth, collect literals (left to right)."""
    literals: list[int] = []
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    nodes = deepest = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        deepest = max(deepest, depth)
        if nodes > MAX_NODES:
            raise ExpressionError(f"too long: more than {MAX_NODES} parts")
        if isinstance(node, ast.Constant):
            value = node.value
            if type(value) is not int:  # unreachable after the character check; kept as a guard
                raise ExpressionError(f"{value!r} is not an integer")
            if value > MAX_MAGNITUDE:
                raise ExpressionError(f"{str(value)[:20]} is too large")
            literals.append(value)
        elif isinstance(node, ast.BinOp):
            op = type(node.op)
            if op not in (ast.Add, ast.Sub, ast.Mult, ast.Div):
                symbol = _OPERATOR_SYMBOLS.get(op, op.__name__)
                raise ExpressionError(f"{symbol} is not allowed: use only + - * /")
            stack.append((node.right, depth + 1))
            stack.append((node.left, depth + 1))
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub | ast.UAdd):
                raise ExpressionError(f"{type(node.op).__name__} is not allowed")
            stack.append((node.operand, depth + 1))
        elif isinstance(node, ast.Call):  # "2(3 + 4)" or "(2)(3)"
            raise ExpressionError("write * between factors: '2(3)' is not a multiplication")
        else:
            raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")
    if deepest > MAX_DEPTH:
        raise ExpressionError("nested too deeply")
    return literals


def _evaluate(node: ast.expr) -> int | Fraction:
    """Exact value of a tree already passed by ``_check_tree`` (so recursion is bounded).

    Whole values stay ``int`` (several times faster than ``Fraction``); only a division that
    leaves a remainder makes a ``Fraction``."""
    if isinstance(node, ast.Constant):
        return cast(int, node.value)  # _check_tree admits integer constants only
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    assert isinstance(node, ast.BinOp)
    left = _evaluate(node.left)
    right = _evaluate(node.right)
    op = type(node.op)
    result: int | Fraction
    if op is ast.Add:
        result = left + right
    elif op is ast.Sub:
        result = left - right
    elif op is ast.Mult:
        result = left * right
    else:
        if not right:
            raise ExpressionError("division by zero")
        result = Fraction(left) / right
        if result.denominator == 1:
            result = result.numerator
    if type(result) is int:
        if abs(result) > MAX_MAGNITUDE:
            raise ExpressionError(_TOO_LARGE)
    elif not within_bounds(cast(Fraction, result)):
        raise ExpressionError(_TOO_LARGE)
    return result


def within_bounds(value: Fraction | int) -> bool:
    """Whether ``|value|`` and its denominator are at most ``MAX_MAGNITUDE``."""
    denominator = value.denominator
    return denominator <= MAX_MAGNITUDE and abs(value.numerator) <= MAX_MAGNITUDE * denominator


# --------------------------------------------------------------------------- verifier


def verify(expression: str | None, numbers: Sequence[int], target: int) -> Verdict:
    """Check an expression as written: allowed, each number used exactly once, equal to target.

    Equality is exact (the value is a ``Fraction``): float-based verifiers need a tolerance
    (1e-6), which here would only let near misses such as ``20 + 1/10**7`` through. The
    reasons are ordered: not an expression, then misused numbers, then arithmetic errors
    (division by zero), then a wrong value. Never raises.
    """
    if expression is None or not expression.strip():
        return Verdict(None, None, False, NO_EXPRESSION, invalid=True)
    expression = expression.strip()
    try:
        node, literals = parse(expression)
    except ExpressionError as error:
        if len(expression) > MAX_EXPRESSION_CHARS:  # don't echo a huge input back
            expression = expression[:MAX_EXPRESSION_CHARS] + "…"
        return Verdict(expression, None, False, error.reason, invalid=True)
    value: Fraction | None = None
    reason: str | None = None
    try:
        value = Fraction(_evaluate(node))
    except ExpressionError as error:
        reason = error.reason
    usage = usage_problems(literals, numbers)
    if usage:
        reason = usage
    elif reason is None and value != target:
        reason = f"= {format_value(value)}, target {target}"
    return Verdict(expression, value, reason is None, reason, invalid=usage is not None)


def verify_message(message: str, numbers: Sequence[int], target: int) -> Verdict:
    """Extract the answer from free model text (:func:`extract_answer`), then :func:`verify`."""
    return verify(extract_answer(message), numbers, target)


def usage_problems(literals: Sequence[int], numbers: Sequence[int]) -> str | None:
    """Why the literals are not the numbers, each used exactly once; ``None`` when they are.

    E.g. ``uses 7 twice; does not use 3 or 9; uses 12, which is not one of the numbers``, or
    ``uses 8 only once (given twice)``.
    """
    if sorted(literals) == sorted(numbers):
        return None
    used = Counter(literals)
    given = Counter(numbers)
    misused: list[str] = []
    missing: list[str] = []
    extra: list[str] = []
    for number in dict.fromkeys([*numbers, *literals]):
        u, g = used[number], given[number]
        if u == g:
            continue
        if g == 0:
            extra.append(str(number))
        elif u > g:
            misused.append(
                f"uses {number} {_times(u)}" + ("" if g == 1 else f" (given {_times(g)})")
            )
        elif u == 0:
            missing.append(str(number) + ("" if g == 1 else f" (given {_times(g)})"))
        else:
            misused.append(f"uses {number} only {_times(u)} (given {_times(g)})")
    problems = misused
    if missing:
        problems.append("does not use " + _join(missing, "or"))
    if extra:
        which = "is not one of the numbers" if len(extra) == 1 else "are not among the numbers"
        problems.append(f"uses {_join(extra, 'and')}, which {which}")
    return "; ".join(problems)


def format_value(value: Fraction | int | None) -> str:
    """``24``; ``19/3`` for a value that is not whole; ``24.000001…`` if the fraction is long."""
    if value is None:
        return "?"
    if isinstance(value, int) or value.denominator <= 10_000:
        return str(value)
    return f"{float(value)!r}…"


_TIMES = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times"}


def _times(count: int) -> str:
    return _TIMES.get(count, f"{count} times")


def _join(items: list[str], conjunction: str) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


# --------------------------------------------------------------------------- extraction

_NOISE = {
    **dict.fromkeys(("\\times", "\\cdot", "\\ast", "\\*"), "*"),
    **dict.fromkeys(("\\left", "\\right", "\\(", "\\)", "\\[", "\\]", "\\!", "$", "`"), ""),
    **{"\\div": "/", "\\,": " ", "{": "(", "}": ")"},
    **_LOOKALIKES,
}
_NOISE_RE = re.compile("|".join(re.escape(k) for k in sorted(_NOISE, key=len, reverse=True)))
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_STARS_RE = re.compile(r"\*\*")
_TIMES_X_RE = re.compile(r"(?<=[\d)])[ \t]*[xX][ \t]*(?=[\d(])")
_BULLET_RE = re.compile(r"^[ \t]*[-*+][ \t]+", re.M)
_TOKEN = r"(?:\d+(?:\.\d+)?|[()+\-*/=])"
_CHAIN_RE = re.compile(rf"{_TOKEN}(?:[^\S\n]*{_TOKEN})*")
_OPERAND_STARTS = frozenset("0123456789(")
_OPEN_TAG_RE = re.compile(r"<\s*answer\s*>", re.I)
_CLOSE_TAG_RE = re.compile(r"<\s*/\s*answer\s*>", re.I)
_ANY_TAG_RE = re.compile(r"<\s*/?\s*answer\s*>", re.I)


def extract_answer(text: str) -> str | None:
    """The expression a model meant as its answer, or ``None`` if there is none.

    Rules, in order:

    1. If the text has ``<answer>`` tags (any case, spaces allowed, closing tag optional at the
       very end), the answer is in the last one (the three last are tried, newest first): the
       last arithmetic chain in it, and of a chain like ``expr = 20`` or ``20 = expr`` the
       first part with two or more numbers. A lone number in a tag is returned as is, so the
       verdict can say which numbers it misses.
    2. Otherwise the same rule over the whole text: the last chain with an expression of at
       least two numbers, e.g. ``So (3 + 9) * 2 = 24.`` gives ``(3 + 9) * 2``, and a line that
       is only an expression gives that line. Lines, and prose between expressions, separate
       chains, so the latest expression in the text wins. Parentheses that prose cut off are
       dropped here (``(using 3 + 9)``), never in a tag: there an unbalanced one is wrong.

    Before that, markup is tidied: LaTeX ``\\times \\cdot \\div \\frac{a}{b} \\left \\right``,
    ``× · ÷ −``, ``$``, backticks, braces, markdown bold and list bullets, and ``3 x 4``.
    """
    opens = list(_OPEN_TAG_RE.finditer(text))
    if opens:
        closes = [match.start() for match in _CLOSE_TAG_RE.finditer(text)]
        for tag in reversed(opens[-MAX_TAGS_TRIED:]):
            after = bisect.bisect_left(closes, tag.end())
            end = closes[after] if after < len(closes) else len(text)
            content = _ANY_TAG_RE.sub(" ", text[tag.end() : end])
            found = _last_expression(_tidy(content), in_tag=True)
            if found:
                return found
        return None
    return _last_expression(_tidy(text), in_tag=False)


def _tidy(text: str) -> str:
    """Rewrite markup into plain arithmetic (tags are left alone). Skips absent markup fast."""
    if "frac" in text:
        for _ in range(3):  # \frac inside \frac
            text, count = _FRAC_RE.subn(r"(\1)/(\2)", text)
            if not count:
                break
    text = _NOISE_RE.sub(_denoise, text)
    if "**" in text:
        text = _STARS_RE.sub(_power_or_bold, text)
    text = _BULLET_RE.sub("", text)
    if "x" in text or "X" in text:
        text = _TIMES_X_RE.sub("*", text)
    return text


def _denoise(match: re.Match[str]) -> str:
    return _NOISE[match.group()]


def _power_or_bold(match: re.Match[str]) -> str:
    """Keep ``**`` between operands (a power, which the verifier then rejects); drop bold."""
    before = match.string[max(0, match.start() - 8) : match.start()].rstrip()[-1:]
    after = match.string[match.end() : match.end() + 8].lstrip()[:1]
    is_power = (before.isdigit() or before == ")") and (after.isdigit() or after in ("(", "-"))
    return "**" if is_power else ""


def _last_expression(text: str, *, in_tag: bool) -> str | None:
    """The last chain's first part with two or more numbers (in a tag, else a lone number).

    Parentheses that prose cut off are dropped in free text only: in a tag the model wrote
    the expression on purpose, and an unbalanced one is wrong."""
    best: str | None = None
    single: str | None = None
    for chain in _CHAIN_RE.finditer(text):
        found = None
        for part in chain.group().split("="):
            expression = _trim(part, balance=not in_tag)
            count = len(_NUMBER.findall(expression))
            if count >= 2:
                found = expression
                break
            if count == 1 and in_tag:
                single = expression
        if found:
            best = found
    return best or single


def _trim(part: str, *, balance: bool) -> str:
    """Drop what prose leaves around an expression: dangling operators, unmatched parens."""
    part = " ".join(part.split())
    for _ in range(3):
        before = part
        part = part.lstrip("+*/) ").rstrip("+-*/( ")
        if part.startswith("-") and part[1:].lstrip()[:1] not in _OPERAND_STARTS:
            part = part[1:]  # a dash of prose, not a unary minus
        if balance:
            part = _balance(part)
        if part == before:
            break
    return part


def _balance(text: str) -> str:
    """Remove unmatched parentheses (a ``(`` or ``)`` that prose cut off from its partner)."""
    if "(" not in text and ")" not in text:
        return text
    unmatched: set[int] = set()
    opened: list[int] = []
    for index, char in enumerate(text):
        if char == "(":
            opened.append(index)
        elif char == ")":
            if opened:
                opened.pop()
            else:
                unmatched.add(index)
    unmatched.update(opened)
    if not unmatched:
        return text
    return "".join(c for i, c in enumerate(text) if i not in unmatched).strip()
