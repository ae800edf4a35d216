"""asciinema v2 recordings (`.cast`) of a shell session: a JSON header line (`version` 2, `width`, `height`,
`timestamp`, `env`, `title`), then one event per line, `[seconds, "o", text]` for what the terminal printed (`"i"`
input, `"m"` markers and `"r"` resizes are not needed: the shell echoes what was typed).

Import: the printed text is replayed on a line of the recording's width (carriage returns, backspaces, cursor moves
and erases applied; colours and other escape sequences dropped), and split at the prompt: the prompt is what the
first line shows up to its first `$ `, `# `, `% ` or `> `, and a line that starts with it (for a `user@host:dir`
prompt, in any directory) starts a command; the lines up to the next such line are its output. Continuation lines
(`> `) of a command left open (a trailing backslash, an open quote, a here-document) belong to the command. Text
before the first prompt is the initial state; the header, the recording's time span and duration are kept under
`metadata.asciinema`. A recording that cannot be split is rejected with its reason: no recognisable prompt (a
recording of one program, not a shell), or a full-screen program (the alternate screen: an editor, a pager, top).
"""

import json
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import NoReturn

from trajforge.schemas import storage
from trajforge.schemas.formats import ImportOptions, finish, imported_source, origin_of, refuse_export, shell_turn
from trajforge.schemas.jsonl import decode_line
from trajforge.schemas.validation import Problem, ReadResult

NAME = "asciinema"
SUFFIXES = (".cast",)
PROMPT_ENDS = ("$ ", "# ", "% ", "> ")
CONTINUATION = "> "  # bash's PS2
NO_NEWLINE = "\0"  # marks the last output line that the prompt, not a newline, ended
ALTERNATE_SCREEN = re.compile(r"\x1b\[\?(?:1049|1047|47)h")
# An escape sequence: CSI (ESC [ params final), OSC (ESC ] ... BEL or ESC \), or a two-character escape.
ESCAPE = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()][0-9A-Za-z]|\x1b.")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    raw = storage.read_bytes(path)
    record, problems = finish(*convert(raw, origin_of(path, "file"), options), options)
    yield ReadResult(str(path), "file", record, problems, None if record else raw)


def write(records: Iterable, path: str | Path) -> NoReturn:
    refuse_export(NAME)


@dataclass
class Recording:
    header: dict
    output: list[tuple[float, str]]  # (seconds, text) of each "o" event

    def time_at(self, offset: int) -> float:
        """When the character at `offset` of the joined output was printed."""
        for seconds, text in self.output:
            if offset < len(text):
                return seconds
            offset -= len(text)
        return self.output[-1][0] if self.output else 0.0


def parse(raw: bytes) -> tuple[Recording | None, list[Problem]]:
    """The header and output events of a v2 recording, or every problem that keeps it from being read."""
    lines = [line for line in raw.splitlines(keepends=True) if line.strip()]
    if not lines:
        return None, [Problem("", "empty file: no recording")]
    first = decode_line("line 1", lines[0])
    problems = [Problem("header", p.message) for p in first.problems]
    header = first.value if isinstance(first.value, dict) else {}
    if not problems and not header:
        problems.append(Problem("header", "expected a JSON object on the first line"))
    if header and header.get("version") != 2:
        problems.append(Problem("header.version", f"expected 2 (asciicast v2), got {header.get('version')!r}"))
    output: list[tuple[float, str]] = []
    for number, line in enumerate(lines[1:], start=2):
        event = decode_line(f"line {number}", line)
        value = event.value
        if event.problems or not (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], (int, float))
            and isinstance(value[2], str)
        ):
            problems.append(Problem(f"line {number}", "expected an event [seconds, code, text]"))
        elif value[1] == "o":
            output.append((float(value[0]), value[2]))
    return (None, problems) if problems else (Recording(header, output), [])


@dataclass
class Screen:
    """The terminal as a sequence of lines: the current line is edited in place at the cursor, wrapping at `width`
    (a carriage return goes back to the start of the row the cursor is on, as a terminal's does)."""

    width: int
    lines: list[str] = field(default_factory=list)
    line: list[str] = field(default_factory=list)
    cursor: int = 0

    def feed(self, text: str) -> None:
        position = 0
        for match in ESCAPE.finditer(text):
            self._print(text[position : match.start()])
            if match.group(2):
                self._control(match.group(1), match.group(2))
            position = match.end()
        self._print(text[position:])

    def _print(self, text: str) -> None:
        for char in text:
            if char == "\n":
                self.lines.append("".join(self.line).rstrip(" "))
                self.line, self.cursor = [], 0
            elif char == "\r":
                self.cursor -= self.cursor % self.width
            elif char == "\b":
                self.cursor = max(0, self.cursor - 1)
            elif char == "\t" or " " <= char != "\x7f":
                self.line += [" "] * (self.cursor - len(self.line) + 1)
                self.line[self.cursor] = char
                self.cursor += 1

    def _control(self, parameters: str, final: str) -> None:
        count = int(parameters) if parameters.isdigit() else 1
        if final == "C":
            self.cursor += count
        elif final == "D":
            self.cursor = max(0, self.cursor - count)
        elif final == "A":
            self.cursor = max(0, self.cursor - count * self.width)
        elif final == "K" and parameters in ("", "0"):
            del self.line[self.cursor :]
        elif final == "P":  # delete characters at the cursor
            del self.line[self.cursor : self.cursor + count]

    def all_lines(self) -> list[str]:
        """Every line, the unfinished last one (a prompt waiting for input) too when it shows anything."""
        last = "".join(self.line).rstrip(" ")
        return [*self.lines, last] if last else list(self.lines)


@dataclass(frozen=True)
class Prompt:
    pattern: re.Pattern
    anywhere: bool  # a `user@host` prompt is found after output that did not end its line; a bare `$ ` is not

    def find(self, line: str) -> re.Match | None:
        return self.pattern.search(line) if self.anywhere else self.pattern.match(line)


def find_prompt(first_line: str) -> Prompt | None:
    """The prompt as the first line shows it, as a pattern a later prompt matches (in another directory, for a
    `user@host:dir` or `[user@host dir]` prompt); None when the line holds no prompt."""
    ends = [i + 2 for i in (first_line.find(end) for end in PROMPT_ENDS) if i >= 0]
    if not ends:
        return None
    prompt = first_line[: min(ends)]
    if found := re.fullmatch(r"([^\s:@]+@[^\s:]+):.*([$#%>] )", prompt):
        return Prompt(re.compile(re.escape(found.group(1)) + r":[^\n]*?" + re.escape(found.group(2))), True)
    if found := re.fullmatch(r"\[([^\s@\]]+@[^\s\]]+) .*\]([$#%>] )", prompt):
        return Prompt(re.compile(r"\[" + re.escape(found.group(1)) + r" [^\]\n]*\]" + re.escape(found.group(2))), True)
    return Prompt(re.compile(re.escape(prompt)), False)


def _open_command(command: str) -> bool:
    """Whether bash would ask for more (PS2) after this command: a trailing backslash, an open quote, or a
    here-document whose end has not come."""
    if command.endswith("\\"):
        return True
    heredoc = HEREDOC.search(command)
    if heredoc and heredoc.group(2) not in command.split("\n")[1:]:
        return True
    try:
        shlex.split(command.split("<<")[0] if heredoc else command)
    except ValueError:
        return True
    return False


def split_commands(lines: list[str], prompt: Prompt) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(the lines before the first prompt, [(command, its output lines)]); commands left empty are dropped. Output
    that did not end its line ends where the prompt starts (its text has no newline at the end)."""
    preamble: list[str] = []
    commands: list[tuple[str, list[str]]] = []
    for line in lines:
        start = prompt.find(line)
        if start:
            if start.start() and commands:
                commands[-1][1].append(line[: start.start()] + NO_NEWLINE)
            commands.append((line[start.end() :], []))
        elif not commands:
            preamble.append(line)
        elif not commands[-1][1] and line.startswith(CONTINUATION) and _open_command(commands[-1][0]):
            commands[-1] = (commands[-1][0] + "\n" + line[len(CONTINUATION) :], [])
        else:
            commands[-1][1].append(line)
    return preamble, [(command, output) for command, output in commands if command.strip()]


def convert(raw: bytes, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    recording, problems = parse(raw)
    if recording is None:
        return None, problems
    text = "".join(text for _, text in recording.output)  # an escape sequence may span two events
    if full_screen := ALTERNATE_SCREEN.search(text):
        seconds = recording.time_at(full_screen.start())
        reason = f"a full-screen program at {seconds:.1f}s (the alternate screen): it cannot be split into commands"
        return None, [Problem("events", reason)]
    width = recording.header.get("width")
    screen = Screen(width if isinstance(width, int) and width > 0 else 80)
    screen.feed(text)
    lines = screen.all_lines()
    first = next((line for line in lines if line.strip()), "")
    prompt = find_prompt(first)
    if prompt is None:
        return None, [Problem("events", f"no recognisable prompt: the first line is {first[:80]!r}")]
    preamble, commands = split_commands(lines, prompt)
    if not commands:
        return None, [Problem("events", "no command at the prompt: nothing to import")]
    turns = [shell_turn(i, command, _text(output)) for i, (command, output) in enumerate(commands)]
    return _record(recording, origin, options, "\n".join(preamble), turns), []


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines).replace(NO_NEWLINE + "\n", "")


def _record(recording: Recording, origin: str, options: ImportOptions, preamble: str, turns: list[dict]) -> dict:
    header = recording.header
    duration = recording.output[-1][0] if recording.output else 0.0
    started = header.get("timestamp")
    times = {}
    if isinstance(started, (int, float)) and not isinstance(started, bool):
        times = {
            "started_at": datetime.fromtimestamp(started, UTC).isoformat(),
            "ended_at": datetime.fromtimestamp(started + duration, UTC).isoformat(),
        }
    shell = PurePosixPath(str((header.get("env") or {}).get("SHELL") or "shell")).name
    kept = {k: v for k, v in header.items() if k != "version"} | {"duration": duration}
    return {
        "schema_version": "1",
        "domain": options.domain or "terminal",
        "source": imported_source(NAME, origin, options),
        "environment": {"name": options.environment or shell},
        "task_description": str(header.get("title") or ""),
        "action_space": "[]",
        "initial_state": preamble,
        "agent": {"name": "unknown"},  # a recording does not say who typed
        "turns": turns,
        **times,
        "metadata": json.dumps({"asciinema": kept}, ensure_ascii=False),
    }
