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
from typing import Any

from env_servers.countdown.game import Puzzle, generate_puzzle, render_prompt
from env_servers.countdown.models import CountdownResetOptions

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


def demonstrations(
    seed: int,
    puzzles: int,
    per_puzzle: int = 3,
    *,
    n_numbers: int = 4,
    max_num: int = 9,
    big_numbers: bool = False,
    first_puzzle_seed: int = 0,
) -> list[tuple[Puzzle, str]]:
    """``(puzzle, reply)`` pairs from the train pool: ``per_puzzle`` different solutions of
    each of ``puzzles`` puzzles (game seeds ``first_puzzle_seed ..``), the puzzle's own
    fold among the candidates; shuffled by ``seed``."""
    rng = random.Random(f"countdown-demos-{seed}")
    pairs: list[tuple[Puzzle, str]] = []
    for i in range(puzzles):
        puzzle = generate_puzzle(
            split="train",
            seed=first_puzzle_seed + i,
            n_numbers=n_numbers,
            max_num=max_num,
            big_numbers=big_numbers,
        )
        found = solutions(puzzle.numbers, puzzle.target)
        if not found:
            continue
        chosen = rng.sample(found, min(per_puzzle, len(found)))
        pairs += [(puzzle, solution.reply()) for solution in chosen]
    rng.shuffle(pairs)
    return pairs


FIRST_SEED_STRIDE = 10**7
"""Run seed ``s`` demonstrates the train-pool puzzles of game seeds ``s * FIRST_SEED_STRIDE ..``."""


def warmup_demonstrations(
    seed: int, count: int, per_episode: int, reset: dict[str, Any]
) -> list[tuple[str, str]]:
    """Countdown's warm-up data (``GameSpec.demonstrations``): ``(prompt, reply)`` pairs, the
    game's own answer-mode prompt and a worked solution, ``per_episode`` different ones for
    each of ``count`` train-pool puzzles made with the ``reset`` fields."""
    options = CountdownResetOptions.model_validate(reset)
    if options.numbers is not None or options.target is not None:
        raise ValueError("demonstrations come from generated puzzles: leave out numbers/target")
    pairs = demonstrations(
        seed,
        count,
        per_episode,
        n_numbers=options.n_numbers,
        max_num=options.max_num,
        big_numbers=options.big_numbers,
        first_puzzle_seed=seed * FIRST_SEED_STRIDE,
    )
    return [
        (render_prompt(puzzle.numbers, puzzle.target, options.attempts), reply)
        for puzzle, reply in pairs
    ]
