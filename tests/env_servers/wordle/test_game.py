"""Wordle rules: feedback, validity, hard mode, splits and seeded determinism."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from env_servers.wordle import game

# Each row verified by hand: greens first, then yellows left to right while the secret still
# has an unmatched copy of the letter.
FEEDBACK_CASES = [
    # secret, guess, marks, why
    ("crane", "crane", "GGGGG", "exact"),
    ("crane", "moldy", "XXXXX", "nothing in common"),
    ("tales", "least", "YYYYY", "anagram, nothing in place"),
    ("abide", "speed", "XXYXY", "two e's guessed, one in secret: first e yellow, second gray"),
    ("speed", "abide", "XXXYY", "reverse: one e guessed, two in secret"),
    ("eerie", "theme", "XXYXG", "secret has three e's: one green, one yellow, one left"),
    ("eerie", "geese", "XGYXG", "three e's guessed into three e's"),
    ("crane", "eerie", "XXYXG", "three e's guessed, one in secret and it is green"),
    ("allow", "lunar", "YXXYX", "repeated letter in secret, single in guess"),
    ("abbey", "bobby", "YXGXG", "three b's guessed, two in secret: green then one yellow"),
    ("those", "geese", "XXXGG", "the only e is green, so the other e's are gray"),
    ("ulcer", "eerie", "YXYXX", "one e in secret: only the leftmost unmatched e is yellow"),
    ("crane", "nanny", "XYXGX", "the green n uses the secret's only n before earlier n's"),
    ("abbey", "babes", "YYGGX", "green b first, then the other b yellow"),
]


@pytest.mark.parametrize(("secret", "guess", "marks", "why"), FEEDBACK_CASES)
def test_feedback(secret: str, guess: str, marks: str, why: str) -> None:
    assert game.score(secret, guess) == marks, why


def test_feedback_never_marks_more_copies_than_the_secret_has() -> None:
    words = game.answers()[::37]
    for secret in words:
        for guess in words:
            marks = game.score(secret, guess)
            for letter in set(guess):
                marked = sum(
                    1 for g, m in zip(guess, marks, strict=True) if g == letter and m != "X"
                )
                assert marked == min(guess.count(letter), secret.count(letter))


# -- word lists and splits ----------------------------------------------------------------------


def test_word_lists() -> None:
    assert len(game.answers()) == 2315
    assert len(game.allowed_words()) == 12972
    assert set(game.answers()) <= game.allowed_words()
    assert all(len(w) == 5 and w.isalpha() and w.islower() for w in game.allowed_words())
    assert game.answers() is game.answers()  # loaded once


def test_splits_are_disjoint_complete_and_sized() -> None:
    train, eval_, all_ = (set(game.split_words(s)) for s in ("train", "eval", "all"))
    assert len(eval_) == game.EVAL_SIZE == 300
    assert len(train) == 2315 - 300
    assert not train & eval_
    assert train | eval_ == all_ == set(game.answers())


def test_split_follows_the_documented_rule() -> None:
    def key(word: str) -> str:
        return hashlib.sha256((game.SPLIT_SALT + word).encode()).hexdigest()

    expected = set(sorted(game.answers(), key=key)[:300])
    assert set(game.split_words("eval")) == expected


def test_held_out_set_and_seeds_are_pinned() -> None:
    """Golden values: if these change, published eval numbers stop being comparable."""
    eval_words = " ".join(game.split_words("eval")).encode()
    assert hashlib.sha256(eval_words).hexdigest() == (
        "8f15d1a6d4ac213a70e7b52eeaea712698bcf79b5061f3afd59548aa1e6eb910"
    )
    assert game.choose_secret("eval", 0) == "preen"
    assert game.choose_secret("train", 0) == "sword"
    assert game.choose_secret("all", 2026) == "crony"


def test_seeded_choice_is_deterministic_and_in_the_split() -> None:
    for split in ("train", "eval", "all"):
        for seed in range(50):
            word = game.choose_secret(split, seed)
            assert word == game.choose_secret(split, seed)
            assert word in game.split_words(split)
    assert len({game.choose_secret("train", seed) for seed in range(50)}) > 30


def test_seeded_choice_is_the_same_in_another_process() -> None:
    code = (
        "from env_servers.wordle import game;"
        "print(game.choose_secret('train', 7), game.choose_secret('eval', 123456789))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = f"{game.choose_secret('train', 7)} {game.choose_secret('eval', 123456789)}"
    assert out.stdout.strip() == here


def test_unseeded_choice_comes_from_the_split() -> None:
    assert all(game.choose_secret("eval", None) in game.split_words("eval") for _ in range(20))


# -- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "word"),
    [
        ("[crane]", "crane"),
        ("[CRANE]", "crane"),
        ("I will try [crane] now", "crane"),
        ("[two words] then [slate]", "slate"),
        ("crane", "crane"),
        ("  crane \n", "crane"),
        ("[cranes]", "cranes"),
        ("I will try crane", None),
        ("[crane", None),
        ("", None),
    ],
)
def test_parse_message(message: str, word: str | None) -> None:
    assert game.parse_message(message) == word


def test_parse_guess() -> None:
    assert game.parse_guess(" Crane ") == "crane"
    assert game.parse_guess("[crane]") == "crane"


# -- one episode --------------------------------------------------------------------------------


def test_valid_guesses_use_a_turn_and_a_win_ends_the_game() -> None:
    g = game.WordleGame("abide")
    assert g.attempt("crane") is None
    assert g.guesses == [("crane", "XXYXG")] and g.guesses_left == 5
    assert g.attempt("abide") is None
    assert g.done and g.won and g.guesses_left == 4


def test_six_wrong_guesses_lose() -> None:
    g = game.WordleGame("abide")
    for word in ("crane", "moldy", "slate", "pious", "theme"):
        assert g.attempt(word) is None and not g.done
    assert g.attempt("lunar") is None
    assert g.done and not g.won and g.guesses_left == 0


@pytest.mark.parametrize(
    ("word", "phrase"),
    [
        (None, "wrong format"),
        ("cran", "must be exactly 5 letters"),
        ("cranes", "must be exactly 5 letters"),
        ("cr4ne", "must be exactly 5 letters"),
        ("xyzzy", "is not an English word"),
    ],
)
def test_invalid_attempts_cost_no_guess_and_say_why(word: str | None, phrase: str) -> None:
    g = game.WordleGame("abide")
    reason = g.attempt(word)
    assert reason is not None and phrase in reason
    assert g.guesses == [] and g.guesses_left == 6 and g.invalid_count == 1 and not g.done


def test_repeat_is_invalid_and_counted_as_an_attempt() -> None:
    g = game.WordleGame("abide")
    assert g.attempt("crane") is None
    reason = g.attempt("crane")
    assert reason is not None and "already guessed 'crane'" in reason
    assert g.guesses_left == 5 and g.invalid_count == 1
    assert g.attempted == 2 and g.distinct_attempted == 1


def test_attempt_counters_include_invalid_words_but_not_malformed_ones() -> None:
    g = game.WordleGame("abide")
    for word in ("crane", "xyzzy", "xyzzy", None, "toolong", "crane"):
        g.attempt(word)
    assert g.attempted == 4  # crane, xyzzy, xyzzy, crane
    assert g.distinct_attempted == 2
    assert g.invalid_count == 5


def test_too_many_invalid_moves_end_the_game_lost() -> None:
    g = game.WordleGame("abide")
    for _ in range(game.MAX_INVALID_MOVES - 1):
        assert g.attempt("xyzzy") is not None and not g.done
    assert g.attempt("xyzzy") is not None
    assert g.done and not g.won and g.invalid_count == game.MAX_INVALID_MOVES


def test_greens_and_yellows_track_last_and_best() -> None:
    g = game.WordleGame("abide")
    g.attempt("speed")  # XXYXY
    g.attempt("crane")  # XXYXG
    assert (g.greens, g.yellows, g.best_greens, g.best_yellows) == (1, 1, 1, 2)
    g.attempt("xyzzy")  # invalid: last valid guess still counts
    assert (g.greens, g.yellows) == (1, 1)


# -- hard mode ----------------------------------------------------------------------------------


def test_hard_mode_keeps_greens_in_place() -> None:
    g = game.WordleGame("abide", hard_mode=True)
    assert g.attempt("crane") is None  # XXYXG: e green at 5th, a yellow
    reason = g.attempt("moldy")
    assert reason is not None and "5th letter must be E" in reason
    assert g.guesses_left == 5 and g.invalid_count == 1


def test_hard_mode_reuses_yellows() -> None:
    g = game.WordleGame("abide", hard_mode=True)
    g.attempt("crane")
    reason = g.attempt("spite")  # keeps the e, drops the a
    assert reason is not None and "must contain A" in reason
    assert g.attempt("slate") is None


def test_hard_mode_counts_repeated_hints() -> None:
    g = game.WordleGame("eerie", hard_mode=True)
    assert g.attempt("geese") is None  # XGYXG: three e's revealed
    reason = g.attempt("seize")  # e's in place but only two of them
    assert reason is not None and "E at least 3 times" in reason
    assert g.attempt("eerie") is None and g.won


def test_normal_mode_ignores_hints() -> None:
    g = game.WordleGame("abide")
    g.attempt("crane")
    assert g.attempt("moldy") is None
