"""Countdown rules: puzzles, the train/eval pools, and the attempt loop. Pure; no I/O.

A puzzle is made by folding random numbers into a target with ``+ - *`` (so it is always
solvable, and the fold is a known solution). Everything random flows from one
``random.Random`` seeded by a SHA-256 of the parameters, never ``hash()``, so a seed gives the
same puzzle in every process.

Train and eval pools are disjoint: a puzzle's canonical key (sorted numbers and target)
decides its pool by a SHA-256 bucket (15% eval), and generating for a split draws until the
key falls in that split. Two seeds may give the same puzzle; the key is the identity to
de-duplicate by (:func:`puzzle_key`).
"""

from __future__ import annotations

import hashlib
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from env_servers.countdown.expression import (
    NO_EXPRESSION,
    Verdict,
    format_value,
    verify,
    verify_message,
    within_bounds,
)

Split = Literal["train", "eval", "all"]
Pool = Literal["train", "eval"]

SMALL_TARGET_MAX = 1000
"""Targets (and every step of the fold) of the plain variant stay in 1..1000."""
BIG_NUMBERS = (25, 50, 75, 100)
"""The big numbers of the TV show's variant, each available once."""
BIG_TARGET_RANGE = (100, 999)
"""Targets of the big-number variant, as on the show."""
EVAL_PER_10000 = 1500
"""Share of puzzle keys that belong to the eval pool (15%)."""
MAX_DRAWS = 5000
"""Draws tried for one puzzle before giving up (only tiny settings can run out)."""
SOLVER_BUDGET = 5000
"""Operations the solver of explicit puzzles may try (enough for nearly all three- and
four-number puzzles, so a hard larger one may go unsolved)."""
SOLVER_SECONDS = 0.005
"""CPU seconds one search may take: it runs on the server's event loop, where every other
session waits for it (an unsolvable six-number puzzle spends the operations' budget in about
30 ms). CPU time rather than wall time, so a busy machine does not make it give up sooner."""

_SEED_SALT = "arenagym/countdown/v1"
_POOL_SALT = "arenagym/countdown/pool/v1"


@dataclass(frozen=True, slots=True)
class Puzzle:
    """Numbers, target, one known solution (``None`` if an explicit puzzle's is unknown),
    and the seed that generated it (``None`` for an explicit puzzle)."""

    numbers: tuple[int, ...]
    target: int
    solution: str | None
    seed: int | None = None

    @property
    def key(self) -> str:
        return puzzle_key(self.numbers, self.target)

    @property
    def pool(self) -> Pool:
        return pool_of(self.numbers, self.target)


def puzzle_key(numbers: Sequence[int], target: int) -> str:
    """Canonical identity of a puzzle: ``"2,3,9=24"`` (the order of the numbers does not matter)."""
    return ",".join(map(str, sorted(numbers))) + f"={target}"


def pool_of(numbers: Sequence[int], target: int) -> Pool:
    """The pool a puzzle belongs to, the same in every process and every version of Python."""
    digest = hashlib.sha256(f"{_POOL_SALT}:{puzzle_key(numbers, target)}".encode()).digest()
    return "eval" if int.from_bytes(digest[:8], "big") % 10_000 < EVAL_PER_10000 else "train"


def generate_puzzle(
    *,
    split: Split = "train",
    seed: int | None = None,
    n_numbers: int = 3,
    max_num: int = 9,
    big_numbers: bool = False,
) -> Puzzle:
    """A solvable puzzle of ``split``'s pool; the same arguments give the same puzzle.

    ``seed=None`` draws a fresh seed, recorded in the result so the puzzle can be replayed.
    Plain variant: ``n_numbers`` numbers in 1..``max_num``, target in 1..1000. Big-number
    variant: one to four (at most ``n_numbers - 1``) of 25, 50, 75, 100, the rest in
    1..``max_num``, target in 100..999. Raises ``ValueError`` when the settings allow no
    puzzle of the split (e.g. ``n_numbers=2, max_num=2``: use ``split="all"``).
    """
    if not 2 <= n_numbers <= 6 or not 2 <= max_num <= 100:
        raise ValueError("n_numbers must be in 2..6 and max_num in 2..100.")
    if seed is None:
        seed = secrets.randbelow(2**63)
    parts = (_SEED_SALT, split, seed, n_numbers, max_num, int(big_numbers))
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    for _ in range(MAX_DRAWS):
        drawn = _draw(rng, n_numbers, max_num, big_numbers)
        if drawn is None:
            continue
        numbers, target, solution = drawn
        if split == "all" or pool_of(numbers, target) == split:
            return Puzzle(tuple(numbers), target, solution, seed)
    raise ValueError(
        f"Found no {split} puzzle with n_numbers={n_numbers}, max_num={max_num}, "
        f"big_numbers={big_numbers}: these settings allow too few puzzles; raise max_num or "
        "n_numbers, or use split='all'."
    )


def _draw(
    rng: random.Random, n_numbers: int, max_num: int, big_numbers: bool
) -> tuple[list[int], int, str] | None:
    """One random fold, or ``None`` when it leaves the target range (the caller redraws)."""
    if big_numbers:
        bigs = rng.randint(1, min(len(BIG_NUMBERS), n_numbers - 1))
        numbers = rng.sample(BIG_NUMBERS, bigs)
        numbers += [rng.randint(1, max_num) for _ in range(n_numbers - bigs)]
        rng.shuffle(numbers)
        low, high = BIG_TARGET_RANGE
    else:
        numbers = [rng.randint(1, max_num) for _ in range(n_numbers)]
        low, high = 1, SMALL_TARGET_MAX
    order = numbers[:]
    rng.shuffle(order)  # the fold's order, independent of the order shown
    value, text, additive = order[0], str(order[0]), False
    for number in order[1:]:
        results = {"+": value + number, "-": value - number, "*": value * number}
        options = [op for op, result in results.items() if 1 <= result <= high]
        if not options:
            return None
        op = rng.choice(options)
        if op == "*" and additive:
            text = f"({text})"
        text, value, additive = f"{text} {op} {number}", results[op], op != "*"
    if value < low:
        return None
    return numbers, value, text


def explicit_puzzle(numbers: Sequence[int], target: int) -> Puzzle:
    """A puzzle given as is. It may have no solution; :class:`CountdownGame` searches for
    one only when the episode ends unsolved, to reveal it."""
    return Puzzle(tuple(numbers), target, None)


# --------------------------------------------------------------------------- solver

_ATOM, _PRODUCT, _SUM = 3, 2, 1
_PRECEDENCE = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT}
_Value = int | Fraction
_Node = int | tuple[str, "_Node", "_Node"]
"""How a value was made: a given number, or an operator and its two operands."""


class _OutOfBudget(Exception):
    pass


def solve(
    numbers: Sequence[int],
    target: int,
    budget: int = SOLVER_BUDGET,
    seconds: float = SOLVER_SECONDS,
) -> str | None:
    """An expression using each number once that equals ``target``, or ``None``.

    Depth-first over pairs to combine, pruning multisets of values already seen; gives up
    after ``budget`` operations or ``seconds`` of CPU time, so a hard six-number puzzle may
    come back ``None``. Values stay ints while division is exact, and the expression's text
    is written only for the solution: both cost far more than the arithmetic.
    """
    seen: set[tuple[_Value, ...]] = set()
    spent = 0
    deadline = time.thread_time() + seconds

    def search(items: list[tuple[_Value, _Node]]) -> _Node | None:
        nonlocal spent
        if len(items) == 1:
            return items[0][1] if items[0][0] == target else None
        key = tuple(sorted(item[0] for item in items))
        if key in seen:
            return None
        seen.add(key)
        for i, (a, x) in enumerate(items):
            for j, (b, y) in enumerate(items):
                if i == j:
                    continue
                rest = [item for k, item in enumerate(items) if k != i and k != j]
                for op in "+-*/" if i < j else "-/":
                    spent += 1
                    if spent > budget or (not spent % 64 and time.thread_time() > deadline):
                        raise _OutOfBudget
                    value = _apply(a, op, b)
                    if value is not None and (found := search([*rest, (value, (op, x, y))])):
                        return found
        return None

    try:
        found = search([(n, n) for n in numbers])
    except _OutOfBudget:
        return None
    return None if found is None else _text(found)[0]


def _apply(a: _Value, op: str, b: _Value) -> _Value | None:
    """``a op b``, or None when it is undefined or out of bounds."""
    if op == "+":
        value = a + b
    elif op == "-":
        value = a - b
    elif op == "*":
        value = a * b
    elif not b:
        return None
    elif type(a) is int and type(b) is int and not a % b:
        value = a // b
    else:
        value = Fraction(a) / b
    return value if within_bounds(value) else None


def _text(node: _Node) -> tuple[str, int]:
    """The expression ``node`` stands for, with only the parentheses it needs, and the
    precedence of its top operator."""
    if isinstance(node, int):
        return str(node), _ATOM
    op, left, right = node
    precedence = _PRECEDENCE[op]
    (left_text, left_precedence), (right_text, right_precedence) = _text(left), _text(right)
    if left_precedence < precedence:
        left_text = f"({left_text})"
    if right_precedence < precedence or (right_precedence == precedence and op in "-/"):
        right_text = f"({right_text})"
    return f"{left_text} {op} {right_text}", precedence


# --------------------------------------------------------------------------- the episode


MAX_INVALID_MOVES = 10
"""Invalid answers allowed in one episode (as Wordle's); the last of them ends it unsolved."""


def render_prompt(numbers: Sequence[int], target: int, attempts: int = 1) -> str:
    """The puzzle as a model reads it (the wording of the common TinyZero Countdown prompt,
    asking for an expression rather than an equation)."""
    listed = ", ".join(map(str, numbers))
    tries = (
        f" You have {attempts} attempts; after a wrong answer you are told why."
        if attempts > 1
        else ""
    )
    return (
        f"Using the numbers [{listed}], write an arithmetic expression that equals {target}. "
        "You can use + - * / and parentheses, and each number must be used exactly once "
        "(no other numbers). Show your reasoning briefly, then give only the final expression "
        f"in <answer> </answer> tags, for example <answer>(1 + 2) / 3</answer>.{tries}"
    )


class CountdownGame:
    """One episode: a puzzle and a number of attempts.

    As in Wordle, an invalid answer (no expression, not an allowed one, or not exactly the
    given numbers) is an invalid move: reported with its reason, it uses no attempt, and the
    ``MAX_INVALID_MOVES``-th ends the episode unsolved. A well-formed expression of the given
    numbers with the wrong value (or a division by zero) uses an attempt. The episode ends on
    the first correct answer, when no attempts are left, or at the invalid-move cap.
    """

    def __init__(self, puzzle: Puzzle, attempts: int = 1) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.puzzle = puzzle
        self.attempts = attempts
        self.attempts_left = attempts
        self.solved = False
        self.invalid_count = 0
        self.last: Verdict | None = None
        self._solution = puzzle.solution
        self._searched = puzzle.solution is not None

    @property
    def done(self) -> bool:
        return self.solved or self.attempts_left == 0 or self.invalid_count >= MAX_INVALID_MOVES

    @property
    def solution(self) -> str | None:
        """A known solution, once the episode is over (``None`` before, or if none is known).

        For an explicit puzzle it is the player's own answer if right, else searched for here,
        once, rather than at reset: most episodes never need it."""
        if not self.done:
            return None
        if not self._searched:
            self._searched = True
            if self.solved and self.last is not None:
                self._solution = self.last.expression
            else:
                self._solution = solve(self.puzzle.numbers, self.puzzle.target)
        return self._solution

    @property
    def prompt(self) -> str:
        return render_prompt(self.puzzle.numbers, self.puzzle.target, self.attempts)

    def submit(self, *, expression: str | None = None, message: str | None = None) -> Verdict:
        """Check one answer: ``expression`` as written, else ``message`` after extraction.

        Raises ``ValueError`` once the episode is over.
        """
        if self.done:
            raise ValueError("The episode is over: reset to play again.")
        numbers, target = self.puzzle.numbers, self.puzzle.target
        if expression is not None:
            verdict = verify(expression, numbers, target)
        else:
            verdict = verify_message(message or "", numbers, target)
        if verdict.invalid:
            self.invalid_count += 1
        else:
            self.attempts_left -= 1
        self.solved = verdict.correct
        self.last = verdict
        return verdict

    @property
    def feedback(self) -> str:
        """One sentence about the last answer (the puzzle, before any): ``Correct: … = 24.``,
        or what was wrong, e.g. ``3 + 9 + 7 = 19, target 20.`` Attempts left and the solution
        are fields of their own, so clients compose them as they like."""
        puzzle = self.puzzle
        verdict = self.last
        if verdict is None:
            return f"Make {puzzle.target} from {', '.join(map(str, puzzle.numbers))}."
        if verdict.correct:
            return f"Correct: {verdict.expression} = {puzzle.target}."
        if verdict.expression is None:
            return f"{NO_EXPRESSION.capitalize()}."
        if verdict.value is None:
            return f"{verdict.expression}: {verdict.reason}."
        if (verdict.reason or "").startswith("= "):
            return f"{verdict.expression} {verdict.reason}."
        return f"{verdict.expression} = {format_value(verdict.value)}, but it {verdict.reason}."
