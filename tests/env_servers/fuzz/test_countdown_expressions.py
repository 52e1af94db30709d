"""Hypothesis feeds Countdown's verifier arbitrary strings (any text, arithmetic-looking text,
model-like replies with tags and ``=``): it raises nothing but ``ExpressionError`` where it
may raise at all, never hangs, and computes exactly what Python's fractions compute."""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from env_servers.countdown.expression import (
    MAX_MAGNITUDE,
    ExpressionError,
    Verdict,
    evaluate,
    extract_answer,
    verify,
    verify_message,
)
from tests.env_servers.fuzz.budget import EXAMPLES

pytestmark = pytest.mark.fuzz

SLOWEST_S = 0.5
"""Any single call; the verifier's own bound is microseconds, this allows a loaded machine."""

fuzz = settings(
    max_examples=EXAMPLES.expressions,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=EXAMPLES.derandomize,
    database=None,
)
arithmetic = st.text(alphabet="0123456789+-*/() ", max_size=250)
model_text = st.lists(
    st.sampled_from(["<answer>", "</answer>", "=", "\n", "**", " ", "(", ")", "×", "÷", "−"])
    | st.from_regex(r"[0-9]{1,14}", fullmatch=True)
    | st.sampled_from(["+", "-", "*", "/"])
    | st.text(max_size=20),
    max_size=120,
).map("".join)
anything = st.text(max_size=2000) | arithmetic | model_text
numbers = st.lists(st.integers(-(10**13), 10**13), max_size=7)
target = st.integers(-(10**13), 10**13)
OPERATORS: dict[str, Callable[[Fraction, Fraction], Fraction]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


def timed(call: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = call()
    assert time.perf_counter() - start < SLOWEST_S, "took too long"
    return result


@fuzz
@given(text=anything)
def test_evaluate_returns_a_bounded_fraction_or_raises_expression_error(text: str) -> None:
    try:
        value = timed(lambda: evaluate(text))
    except ExpressionError as error:
        assert error.reason
        return
    assert isinstance(value, Fraction)
    assert abs(value) <= MAX_MAGNITUDE * value.denominator


@fuzz
@given(text=anything, numbers=numbers, target=target)
def test_verify_and_verify_message_never_raise(text: str, numbers: list[int], target: int) -> None:
    for check in (verify, verify_message):
        verdict = timed(lambda check=check: check(text, numbers, target))
        assert isinstance(verdict, Verdict)
        assert verdict.correct == (verdict.reason is None)
    extracted = timed(lambda: extract_answer(text))
    assert extracted is None or isinstance(extracted, str)


def _expressions(depth: int = 4) -> st.SearchStrategy[tuple[str, Fraction | None]]:
    """Well-formed expressions and their exact values (None: a division by zero inside)."""
    leaves = st.integers(0, 999).map(lambda n: (str(n), Fraction(n)))

    def combine(
        children: st.SearchStrategy[tuple[str, Fraction | None]],
    ) -> st.SearchStrategy[tuple[str, Fraction | None]]:
        def apply(
            left: tuple[str, Fraction | None], op: str, right: tuple[str, Fraction | None]
        ) -> tuple[str, Fraction | None]:
            a, b = left[1], right[1]
            value: Fraction | None = None
            if a is not None and b is not None and not (op == "/" and b == 0):
                value = OPERATORS[op](a, b)
            return f"({left[0]} {op} {right[0]})", value

        return st.builds(apply, children, st.sampled_from("+-*/"), children)

    return st.recursive(leaves, combine, max_leaves=2**depth)


@fuzz
@given(case=_expressions())
def test_evaluate_is_exact_arithmetic(case: tuple[str, Fraction | None]) -> None:
    text, expected = case
    assume(len(text) <= 200)
    try:
        value = timed(lambda: evaluate(text))
    except ExpressionError:  # division by zero, or a bound on size or magnitude
        return
    assert value == expected
