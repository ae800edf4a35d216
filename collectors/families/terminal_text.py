"""`terminal-text`: files and text processing in the Docker terminal (find, count, sort, extract, transform),
the answer written where the instruction says. Every solution is one short pipeline, optionally preceded by a look
at the input and followed by a look at the answer; every name, word and number it uses is in the instruction."""

import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import Draft, Family, FamilyParams
from trajforge.collectors.families.contents import file_text, sentences_with, solution_shape, word_lines
from trajforge.collectors.families.words import DIRS, EXTENSIONS, OUT_NAMES, STEMS, WORDS
from trajforge.sandboxes.base import ShellCheck
from trajforge.schemas.records import Action

Operation = Literal[
    "count-lines", "count-matching", "count-distinct", "grep-lines", "sort", "sort-reverse", "sort-numbers",
    "unique", "column", "head", "tail", "upper", "replace", "sum", "max", "find-ext",
]  # fmt: skip


class TerminalTextParams(FamilyParams):
    operations: tuple[Operation, ...] = Operation.__args__
    min_lines: int = Field(default=4, ge=2)
    max_lines: int = Field(default=14, ge=2)
    answer_dirs: tuple[str, ...] = (".", "out", "results")  # where answers go, relative to the workspace

    @model_validator(mode="after")
    def _sizes(self):
        if self.min_lines > self.max_lines:
            raise ValueError(f"min_lines {self.min_lines} is over max_lines {self.max_lines}")
        if not self.operations or not self.answer_dirs:
            raise ValueError("operations and answer_dirs must not be empty")
        return self


@dataclass(frozen=True)
class Job:
    """One operation, drawn: the sentence that asks for it, its input files, the command and the expected answer."""

    ask: str  # "Sort the lines of notes.txt alphabetically": the instruction, before "and write ... to OUT."
    files: dict[str, str]
    command: str  # the pipeline, before "> OUT"
    expected: str  # the answer file's content, trailing newlines aside
    look: str  # a command that shows the input


@FAMILIES.register(help="files and text processing in the terminal: count, sort, extract, transform, find")
class TerminalTextFamily(Family):
    name = "terminal-text"
    kind = "terminal"
    Params = TerminalTextParams

    def draft(self, rng: random.Random) -> Draft:
        p = self.params
        operation = rng.choice(p.operations)
        size = rng.randint(p.min_lines, p.max_lines)
        job = OPERATIONS[operation](rng, _source(rng, ".csv" if operation == "column" else ".txt"), size)
        out_dir = rng.choice(p.answer_dirs)
        out = rng.choice([n for n in OUT_NAMES if n not in job.files])
        out = out if out_dir == "." else f"{out_dir}/{out}"
        commands = solution_shape(rng, job.look, f"{job.command} > {out}", f"cat {out}")
        return Draft(
            instruction=f"{job.ask} and write {_what(operation)} to {out}.",
            files=job.files,
            setup=() if out_dir == "." else (f"mkdir -p {out_dir}",),
            actions=tuple(Action(kind="shell", content=c) for c in commands),
            check=ShellCheck(command=f'test "$(cat {out})" = {shlex.quote(job.expected)}'),
            vocabulary=tuple(job.files) + (out,),
        )


def _what(operation: str) -> str:
    if operation.startswith("count"):
        return "the number"
    return {"sum": "the total", "max": "it", "find-ext": "the paths, one per line,"}.get(operation, "the result")


def _source(rng: random.Random, extension: str) -> str:
    folder = rng.choice(("",) * 3 + DIRS)
    return f"{folder}/{rng.choice(STEMS)}{extension}".lstrip("/")


def _count_lines(rng, src, size):
    lines = word_lines(rng, size, (1, 4))
    return Job(f"Count the lines of {src}", {src: file_text(lines)}, f"wc -l < {src}", str(size), f"head {src}")


def _count_matching(rng, src, size):
    lines, word = sentences_with(rng, size)
    count = sum(word in line for line in lines)
    ask = f"Count the lines of {src} that contain the word {word}"
    return Job(ask, {src: file_text(lines)}, f"grep -c {word} {src}", str(count), f"cat {src}")


def _count_distinct(rng, src, size):
    lines = word_lines(rng, size, pool=rng.sample(WORDS, max(2, size // 2)))
    ask = f"Count the distinct lines of {src}"
    return Job(ask, {src: file_text(lines)}, f"sort -u {src} | wc -l", str(len(set(lines))), f"cat {src}")


def _grep_lines(rng, src, size):
    lines, word = sentences_with(rng, size)
    expected = "\n".join(line for line in lines if word in line)
    ask = f"Find the lines of {src} that contain the word {word}"
    return Job(ask, {src: file_text(lines)}, f"grep {word} {src}", expected, f"cat {src}")


def _sorted(flag: str, ask: str, numbers: bool = False) -> Callable:
    def job(rng, src, size):
        lines = [str(rng.randint(0, 999)) for _ in range(size)] if numbers else word_lines(rng, size)
        ordered = sorted(lines, key=int) if numbers else sorted(lines, reverse=flag == " -r")
        return Job(ask.format(src=src), {src: file_text(lines)}, f"sort{flag} {src}", "\n".join(ordered), f"cat {src}")

    return job


def _unique(rng, src, size):
    lines = word_lines(rng, size, pool=rng.sample(WORDS, max(2, size // 2)))
    ask = f"Sort the lines of {src} and drop the duplicates"
    return Job(ask, {src: file_text(lines)}, f"sort -u {src}", "\n".join(sorted(set(lines))), f"cat {src}")


def _column(rng, src, size):
    width = rng.randint(2, 5)
    field = rng.randint(1, width)
    rows = [rng.choices(WORDS, k=width) for _ in range(size)]
    expected = "\n".join(row[field - 1] for row in rows)
    ask = f"Extract field {field} of every comma-separated line of {src}"
    return Job(ask, {src: file_text([",".join(r) for r in rows])}, f"cut -d, -f{field} {src}", expected, f"head {src}")


def _ends(which: str) -> Callable:
    def job(rng, src, size):
        lines = word_lines(rng, size, (1, 3))
        n = rng.randint(1, size - 1)
        part = lines[:n] if which == "head" else lines[-n:]
        ask = f"Take the {'first' if which == 'head' else 'last'} {n} lines of {src}"
        return Job(ask, {src: file_text(lines)}, f"{which} -n {n} {src}", "\n".join(part), f"wc -l {src}")

    return job


def _upper(rng, src, size):
    lines = word_lines(rng, size, (1, 4))
    ask = f"Convert {src} to upper case"
    return Job(ask, {src: file_text(lines)}, f"tr a-z A-Z < {src}", "\n".join(lines).upper(), f"cat {src}")


def _replace(rng, src, size):
    lines, word = sentences_with(rng, size)
    new = rng.choice([w for w in WORDS if w != word])
    expected = "\n".join(line.replace(word, new) for line in lines)
    ask = f"Replace every {word} with {new} in {src}"
    return Job(ask, {src: file_text(lines)}, f"sed 's/{word}/{new}/g' {src}", expected, f"cat {src}")


def _numbers(which: str) -> Callable:
    def job(rng, src, size):
        numbers = [rng.randint(0, 999) for _ in range(size)]
        files = {src: file_text([str(n) for n in numbers])}
        if which == "sum":
            return Job(f"Add up the numbers in {src}", files, "awk '{ s += $1 } END { print s }' " + src,
                       str(sum(numbers)), f"cat {src}")  # fmt: skip
        return Job(f"Find the largest number in {src}", files, f"sort -n {src} | tail -n 1", str(max(numbers)),
                   f"cat {src}")  # fmt: skip

    return job


def _find_ext(rng, src, size):
    folder = rng.choice(DIRS)
    extension, other = rng.sample(EXTENSIONS, 2)
    stems = rng.sample(WORDS, min(size, len(WORDS)))
    extensions = [extension] + [rng.choice((extension, other)) for _ in stems[1:]]  # at least one matches
    files = {f"{folder}/{stem}.{ext}": f"{stem}\n" for stem, ext in zip(stems, extensions, strict=True)}
    matching = sorted(path for path in files if path.endswith(f".{extension}"))
    ask = f"List the .{extension} files in {folder}, sorted"
    return Job(ask, files, f"find {folder} -name '*.{extension}' | sort", "\n".join(matching), f"ls {folder}")


OPERATIONS: dict[str, Callable[[random.Random, str, int], Job]] = {
    "count-lines": _count_lines,
    "count-matching": _count_matching,
    "count-distinct": _count_distinct,
    "grep-lines": _grep_lines,
    "sort": _sorted("", "Sort the lines of {src} alphabetically"),
    "sort-reverse": _sorted(" -r", "Sort the lines of {src} in reverse alphabetical order"),
    "sort-numbers": _sorted(" -n", "Sort the numbers in {src} from smallest to largest", numbers=True),
    "unique": _unique,
    "column": _column,
    "head": _ends("head"),
    "tail": _ends("tail"),
    "upper": _upper,
    "replace": _replace,
    "sum": _numbers("sum"),
    "max": _numbers("max"),
    "find-ext": _find_ext,
}
