"""File contents the terminal families draw from the word pools: lines of words, the text of a file that holds
them, and sentences of which some (not all) contain one word."""

import random

from trajforge.collectors.families.words import WORDS


def word_lines(rng: random.Random, size: int, words_per_line: tuple[int, int] = (1, 1), pool=WORDS) -> list[str]:
    return [" ".join(rng.choices(pool, k=rng.randint(*words_per_line))) for _ in range(size)]


def file_text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def sentences_with(rng: random.Random, size: int) -> tuple[list[str], str]:
    """Lines of a few words, and a word that some (not all) of them contain."""
    lines = word_lines(rng, size, (2, 5))
    word = rng.choice(WORDS)
    for i in rng.sample(range(size), rng.randint(1, max(1, size // 2))):
        words = lines[i].split()
        words[rng.randrange(len(words))] = word
        lines[i] = " ".join(words)
    return lines, word


def solution_shape(rng: random.Random, look: str, do: str, show: str) -> list[str]:
    """A drawn solution shape: the command that does the task, optionally after a look at the input and before a
    look at the result."""
    shape = rng.choice(("do", "look-do", "do-show", "look-do-show"))
    return [look] * shape.startswith("look") + [do] + [show] * shape.endswith("show")
