"""Every solution of a small Countdown puzzle, with its worked steps: warm-up demonstrations.

A supervised warm-up teaches a model built from scratch the answer format and some arithmetic;
several different solutions per puzzle keep it from collapsing onto one habit, so sampling
finds more answers than greedy decoding does (headroom that GRPO turns into greedy wins).
Pure: no I/O. Intermediate values stay positive integers (division only when exact).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from env_servers.countdown.models import CountdownObservation

_ATOM, _PRODUCT, _SUM = 3, 2, 1
_PRECEDENCE = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT}
MAX_PER_VALUE = 6
"""Expressions kept per reachable value of one multiset (enough variety, bounded memory)."""
MAX_VALUE = 10_000


@dataclass(frozen=True, slots=True)
class Solution:
    """An expression for the target and its steps (``7*9=63``, ``63-5=58``…)."""

    expression: str
    steps: tuple[str, ...]

    def reply(self) -> str:
        """The demonstration reply: brief worked steps, then the answer tag."""
        return f"{', '.join(self.steps)}.\n<answer>{self.expression}</answer>"


_Expr = tuple[str, int, tuple[str, ...]]  # text, precedence of its top operator, steps


def _combine(a: int, x: _Expr, op: str, b: int, y: _Expr) -> tuple[int, _Expr] | None:
    if op == "+":
        value = a + b
    elif op == "-":
        value = a - b
    elif op == "*":
        value = a * b
    elif b and a % b == 0:
        value = a // b
    else:
        return None
    if not 1 <= value <= MAX_VALUE:
        return None
    precedence = _PRECEDENCE[op]
    left = f"({x[0]})" if x[1] < precedence else x[0]
    wrap = y[1] < precedence or (y[1] == precedence and op in "-/")
    right = f"({y[0]})" if wrap else y[0]
    return value, (f"{left} {op} {right}", precedence, (*x[2], *y[2], f"{a}{op}{b}={value}"))


@lru_cache(maxsize=4096)
def reachable(numbers: tuple[int, ...]) -> dict[int, tuple[_Expr, ...]]:
    """Value → expressions using every number of the sorted multiset ``numbers`` once."""
    if len(numbers) == 1:
        return {numbers[0]: ((str(numbers[0]), _ATOM, ()),)}
    found: dict[int, list[_Expr]] = {}
    n = len(numbers)
    for mask in range(1, (1 << n) - 1):
        left = tuple(numbers[i] for i in range(n) if mask >> i & 1)
        right = tuple(numbers[i] for i in range(n) if not mask >> i & 1)
        for a, xs in reachable(left).items():
            for b, ys in reachable(right).items():
                for op in "+-*/":
                    if op in "+*" and (a, xs[0][0]) > (b, ys[0][0]):
                        continue  # commutative: one order is enough
                    for x in xs[:2]:
                        for y in ys[:2]:
                            made = _combine(a, x, op, b, y)
                            if made is None:
                                continue
                            bucket = found.setdefault(made[0], [])
                            if len(bucket) < MAX_PER_VALUE and made[1] not in bucket:
                                bucket.append(made[1])
    return {value: tuple(exprs) for value, exprs in found.items()}


def solutions(numbers: tuple[int, ...] | list[int], target: int) -> list[Solution]:
    """Solutions of a puzzle with distinct worked steps (at most ``MAX_PER_VALUE``; the same
    expression may come with its steps in another order); empty if none is found."""
    exprs = reachable(tuple(sorted(numbers))).get(target, ())
    return [Solution(text, steps) for text, _, steps in exprs]


def worked_replies(observation: CountdownObservation, count: int, rng: random.Random) -> list[str]:
    """Countdown's warm-up replies (``GameSpec.demonstrations``): up to ``count`` different
    worked solutions of the puzzle that ``observation`` shows (``rng`` picks among more), the
    puzzle's own fold among the candidates; none for a puzzle without a solution."""
    found = solutions(observation.numbers, observation.target)
    return [solution.reply() for solution in rng.sample(found, min(count, len(found)))]
