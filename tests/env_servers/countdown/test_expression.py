"""The verifier and the answer extraction: safety first, then correctness."""

from __future__ import annotations

import random
import time
from fractions import Fraction

import pytest

from env_servers.countdown.expression import (
    MAX_EXPRESSION_CHARS,
    NO_EXPRESSION,
    ExpressionError,
    evaluate,
    extract_answer,
    usage_problems,
    verify,
    verify_message,
)

NUMBERS = [3, 9, 2]
TARGET = 24

HOSTILE = [
    ("9**9**9", "** (power) is not allowed"),
    ("2 ** 100", "** (power) is not allowed"),
    ("__import__('os')", "'__import__' is not allowed"),
    ("__import__('os').system('true')", "'__import__' is not allowed"),
    ("(" * 10_000, "longer than"),
    ("(" * 150 + "1" + ")" * 40, "nested parentheses"),
    ("(" * 30 + "3" + ")" * 30, "more than 20 nested parentheses"),
    ("-" * 60 + "3", "nested too deeply"),
    ("-" * 150 + "3", "too long"),
    ("+".join(["1"] * 99), "too long"),
    ("2.5", "2.5 is not an integer"),
    (".5 * 2", ".5 is not an integer"),
    ("'a'", '"\'" is not allowed'),
    ('"24"', "'\"' is not allowed"),
    ("[1]", "'[' is not allowed"),
    ("{1}", "'{' is not allowed"),
    ("x", "'x' is not allowed"),
    ("1e9", "'e9' is not allowed"),
    ("lambda: 1", "'lambda' is not allowed"),
    ("f'{1}'", "'f' is not allowed"),
    ("True + 1", "'True' is not allowed"),
    ("1j * 2", "'j' is not allowed"),
    ("0x18", "'x18' is not allowed"),
    ("1_000", "'_000' is not allowed"),
    ("3 < 9", "'<' is not allowed"),
    ("3 == 3", "'=' is not allowed"),
    ("24 = 3 * 8", "'=' is not allowed"),
    ("9 // 2", "// (floor division) is not allowed"),
    ("9 % 2", "'%' is not allowed"),
    ("9 & 2", "'&' is not allowed"),
    ("9 ^ 2", "'^' is not allowed"),
    ("~9", "'~' is not allowed"),
    ("9 @ 2", "'@' is not allowed"),
    ("3; 9", "';' is not allowed"),
    ("(3, 9)", "',' is not allowed"),
    ("3 × 9", "'×' is not allowed: write * instead"),
    ("9 − 2", "'−' is not allowed: write - instead"),
    ("9" * 150, "is too large"),
    ("999999 * 999999 * 999999", "too large"),
    ("1000000 * 1000000 * 1000000 / 7", "too large"),
    ("1 / 999999 / 999999 / 999999", "too large"),
    ("1 / 0", "division by zero"),
    ("3 / (9 - 9)", "division by zero"),
    ("3 * ", "not a valid arithmetic expression"),
    ("3 9", "not a valid arithmetic expression"),
    ("2(3 + 9)", "write * between factors"),
    ("(3)(9)", "write * between factors"),
    ("(3 + 9", "unbalanced parentheses"),
    ("3 + 9)", "unbalanced parentheses"),
    ("07 + 1", "not a valid arithmetic expression"),
    ("", "empty expression"),
    ("x" * 5000, "longer than 200 characters"),
    ("\x00", "is not allowed"),
]


@pytest.mark.parametrize(("text", "reason"), HOSTILE)
def test_hostile_input_is_rejected_with_a_reason_and_fast(text: str, reason: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ExpressionError) as raised:
        evaluate(text)
    assert reason in raised.value.reason
    verdict = verify(text, NUMBERS, TARGET)
    assert not verdict.correct and verdict.reason
    assert verdict.expression is None or len(verdict.expression) <= MAX_EXPRESSION_CHARS + 1
    assert time.perf_counter() - started < 0.05


def test_nothing_runs_while_checking(capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("print(1)", "exec('print(1)')", "__import__('builtins').print(1)"):
        assert not verify(text, NUMBERS, TARGET).correct
        assert not verify_message(f"<answer>{text}</answer>", NUMBERS, TARGET).correct
    assert capsys.readouterr().out == ""


def test_random_junk_never_raises_and_stays_fast() -> None:
    rng = random.Random(0)
    alphabet = "0123456789+-*/() ()()**.xe=_'[]<>\n"
    started = time.perf_counter()
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 250)))
        verdict = verify(text, NUMBERS, TARGET)
        assert verdict.correct is (verdict.reason is None)
        verify_message(text, NUMBERS, TARGET)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1/3*3", Fraction(1)),
        ("1 / 3", Fraction(1, 3)),
        ("2 + 3 * 4", Fraction(14)),
        ("(2 + 3) * 4", Fraction(20)),
        ("2 - 3 - 4", Fraction(-5)),
        ("2 - (3 - 4)", Fraction(3)),
        ("8 / 4 / 2", Fraction(1)),
        ("8 / (4 / 2)", Fraction(4)),
        ("-3 + 5", Fraction(2)),
        ("-(3 - 9) * 2", Fraction(12)),
        ("3 * -2", Fraction(-6)),
        ("--3", Fraction(3)),
        ("+3", Fraction(3)),
        ("((((3))))", Fraction(3)),
        ("  3\t+\n9 ", Fraction(12)),
        ("6 / (1 - 3 / 4)", Fraction(24)),
        ("8 / (3 - 8 / 3)", Fraction(24)),
        ("0", Fraction(0)),
        ("1000000 * 1000000", Fraction(10**12)),
    ],
)
def test_exact_arithmetic_with_the_usual_precedence(text: str, value: Fraction) -> None:
    assert evaluate(text) == value


def test_evaluation_agrees_with_fractions_on_random_expressions() -> None:
    rng = random.Random(1)

    def build(depth: int) -> tuple[str, Fraction]:
        if depth == 0 or rng.random() < 0.3:
            number = rng.randint(1, 20)
            return str(number), Fraction(number)
        (left, a), (right, b) = build(depth - 1), build(depth - 1)
        op = rng.choice("+-*/")
        if op == "/" and b == 0:
            op = "+"
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else a}[op]
        return f"({left} {op} {right})", value

    for _ in range(500):
        text, value = build(3)
        if abs(value.numerator) <= 10**12 and value.denominator <= 10**12:
            assert evaluate(text) == value, text


@pytest.mark.parametrize(
    ("literals", "numbers", "reason"),
    [
        ([3, 9, 2], [3, 9, 2], None),
        ([2, 3, 9], [3, 9, 2], None),
        ([7, 7, 3], [7, 3, 5], "uses 7 twice; does not use 5"),
        ([7, 3], [7, 3, 5], "does not use 5"),
        ([7], [7, 3, 5], "does not use 3 or 5"),
        ([7, 3, 5, 12], [7, 3, 5], "uses 12, which is not one of the numbers"),
        (
            [7, 1, 0],
            [7, 3, 5],
            "does not use 3 or 5; uses 1 and 0, which are not among the numbers",
        ),
        ([8, 3], [8, 8, 3], "uses 8 only once (given twice)"),
        ([8, 8, 8, 3], [8, 8, 3], "uses 8 three times (given twice)"),
        ([3], [8, 8, 3], "does not use 8 (given twice)"),
        ([7, 7, 7, 7], [7], "uses 7 four times"),
    ],
)
def test_each_number_is_used_exactly_once(
    literals: list[int], numbers: list[int], reason: str | None
) -> None:
    assert usage_problems(literals, numbers) == reason


@pytest.mark.parametrize(
    ("expression", "correct", "reason"),
    [
        ("(3 + 9) * 2", True, None),
        ("2 * (9 + 3)", True, None),
        ("(9 + 3) / (1 / 2)", False, "uses 1, which is not one of the numbers"),
        ("3 * 9 - 2", False, "= 25, target 24"),
        ("9 / 2 + 3", False, "= 15/2, target 24"),
        ("(3 + 9) * 2 * 1", False, "uses 1, which is not one of the numbers"),
        ("(3 + 3) * 2 * 2", False, "uses 3 twice; uses 2 twice; does not use 9"),
        ("3 * 9", False, "does not use 2"),
        ("24", False, "does not use 3, 9 or 2; uses 24, which is not one of the numbers"),
        (None, False, NO_EXPRESSION),
        ("   ", False, NO_EXPRESSION),
    ],
)
def test_verify(expression: str | None, correct: bool, reason: str | None) -> None:
    verdict = verify(expression, NUMBERS, TARGET)
    assert (verdict.correct, verdict.reason) == (correct, reason)


def test_misused_numbers_are_reported_before_arithmetic_errors_and_the_value_is_kept() -> None:
    verdict = verify("3 * 9 - 3", NUMBERS, TARGET)
    assert verdict.value == 24 and verdict.reason == "uses 3 twice; does not use 2"
    assert verify("3 / (9 - 9) * 2", NUMBERS, TARGET).reason == "uses 9 twice"
    assert verify("3 / (9 - 9)", [3, 9, 9], 1).reason == "division by zero"


def test_near_misses_are_wrong_even_within_a_float_tolerance() -> None:
    verdict = verify("(3 + 9) * 2 + 1 / 999999 / 999999", [3, 9, 2, 1, 999999, 999999], 24)
    assert not verdict.correct and verdict.reason is not None
    assert verdict.reason == "= 24.000000000001…, target 24"


# Realistic completions, mostly Qwen-style: reasoning, then an answer (or not).
EXTRACTION = [
    (
        "<think>\nWe need 24 from 3, 9, 2. 9 * 2 = 18, 18 + 3 = 21, no. 3 + 9 = 12, 12 * 2 = 24."
        "\n</think>\n<answer>(3 + 9) * 2</answer>",
        "(3 + 9) * 2",
    ),
    ("<answer> (3 + 9) * 2 = 24 </answer>", "(3 + 9) * 2"),
    ("<answer>24 = (3 + 9) * 2</answer>", "(3 + 9) * 2"),
    ("<ANSWER>\n(3+9)*2\n</ANSWER>", "(3+9)*2"),
    ("< answer >(3+9)*2</ answer >", "(3+9)*2"),
    ("<answer>`(3 + 9) \\times 2`</answer>", "(3 + 9) * 2"),
    ("<answer>\\( (3 + 9) \\times 2 \\)</answer>", "(3 + 9) * 2"),
    ("<answer>$\\frac{9}{3} \\cdot 8$</answer>", "(9)/(3) * 8"),
    ("<answer>(3 + 9) × 2</answer>", "(3 + 9) * 2"),
    ("<answer>9 − 3 ÷ 3</answer>", "9 - 3 / 3"),
    ("<answer>3 x 8</answer>", "3*8"),
    ("<answer>1 + 2</answer> Wait, better: <answer>(3 + 9) * 2</answer>", "(3 + 9) * 2"),
    ("<answer><answer>(3 + 9) * 2</answer></answer>", "(3 + 9) * 2"),
    ("<answer>(3 + 9) * 2</answer>\nFormat reminder: <answer></answer>", "(3 + 9) * 2"),
    ("Final: <answer>(3 + 9) * 2", "(3 + 9) * 2"),
    ("<answer>24</answer>", "24"),
    ("<answer>I cannot find a solution.</answer>", None),
    ("<answer>9**9**9</answer>", "9**9**9"),
    ("<answer>2.5 * 4</answer>", "2.5 * 4"),
    ("So (3 + 9) * 2 = 24", "(3 + 9) * 2"),
    ("Try 9 * 2 = 18, 18 + 3 = 21. Not right. (3 + 9) * 2 = 24. Done.", "(3 + 9) * 2"),
    ("(3 + 9) * 2 = 12 * 2 = 24 ✓", "(3 + 9) * 2"),
    ("**Answer:** (3 + 9) * 2", "(3 + 9) * 2"),
    ("**(3 + 9) * 2 = 24**", "(3 + 9) * 2"),
    ("$$ (3 + 9) \\times 2 = 24 $$", "(3 + 9) * 2"),
    ("The answer is \\boxed{(3 + 9) \\times 2}.", "((3 + 9) * 2)"),
    ("Steps:\n- 3 + 9 = 12\n- 12 * 2 = 24\nSo the expression is\n(3 + 9) * 2", "(3 + 9) * 2"),
    ("1. (3 + 9) * 2", "(3 + 9) * 2"),
    ("(which is (3 + 9) * 2", "(3 + 9) * 2"),
    ("<answer>((3 + 9) * 2</answer>", "((3 + 9) * 2"),
    ("<answer>2(3 + 9)</answer>", "2(3 + 9)"),
    ("I used the numbers 3, 9 and 2 (each once) to make 24.", None),
    ("I don't know.", None),
    ("", None),
    ("Hmm... 🤔 ¯\\_(ツ)_/¯", None),
]


@pytest.mark.parametrize(("text", "expected"), EXTRACTION)
def test_extraction(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_a_message_is_extracted_then_verified() -> None:
    message = "3 + 9 = 12 and 12 * 2 = 24, so <answer>(3 + 9) * 2 = 24</answer>"
    verdict = verify_message(message, NUMBERS, TARGET)
    assert verdict.correct and verdict.expression == "(3 + 9) * 2" and verdict.value == 24
    assert verify_message("no idea", NUMBERS, TARGET).reason == NO_EXPRESSION


def test_extraction_of_long_hostile_messages_is_fast() -> None:
    hostile = [
        "<answer>" * 2000,
        "<answer>" * 1000 + "</answer>" * 1000,
        "(" * 16_000,
        "1+" * 8000,
        "**" * 8000,
        "\\frac{" * 3000,
        "3 x " * 4000,
        "- " * 8000,
    ]
    for text in hostile:
        started = time.perf_counter()
        verify_message(text, NUMBERS, TARGET)
        assert time.perf_counter() - started < 0.05, text[:20]
