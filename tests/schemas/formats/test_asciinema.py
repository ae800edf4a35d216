"""asciinema v2 recordings. `schemas/examples/asciinema.cast` was recorded by the real asciinema 2.4.0 (PyPI) in
`test_real_recordings_of_a_shell_in_the_sandbox`: `asciinema rec -c "docker exec -it CONTAINER bash"` of bash in
the sandbox image's container, driven through a pseudo-terminal, its output copied as is."""

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders import EXAMPLES
from trajforge.sandboxes.base import Task
from trajforge.schemas.formats import ImportOptions, asciinema
from trajforge.schemas.records import Action
from trajforge.schemas.transfer import ImportJob, import_records

SAMPLE = EXAMPLES / "asciinema.cast"
# Typed into bash one line at a time: output without a newline at its end, a here-document (PS2 lines), a line
# edited with backspaces, a command longer than the terminal's 80 columns, and a change of directory.
SESSION = [
    "printf 'no newline'",
    "cat <<'EOF' > notes.txt",
    "one",
    "two",
    "EOF",
    "cat notes.txt",
    "echo typo\x7f\x7f\x7f\x7fright",
    "echo " + "x" * 100,
    "mkdir d && cd d && pwd",
    "wc -l ../notes.txt",
    "exit",
]
COMMANDS = [
    "printf 'no newline'",
    "cat <<'EOF' > notes.txt\none\ntwo\nEOF",
    "cat notes.txt",
    "echo right",
    "echo " + "x" * 100,
    "mkdir d && cd d && pwd",
    "wc -l ../notes.txt",
    "exit",
]


def asciinema_program() -> str:
    found = shutil.which("asciinema", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs the dev extra, asciinema included")
        pytest.skip("asciinema is not installed (pip install -e .[dev])")
    return found


def record(program: str, container: str, lines: list[str], path: Path) -> None:
    """`asciinema rec` of bash in CONTAINER, each line typed after the shell has answered the one before."""
    leader, follower = pty.openpty()
    recorder = subprocess.Popen(
        [program, "rec", "--quiet", "--overwrite", "--command", f"docker exec -it {container} bash", str(path)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "SHELL": "/bin/bash", "TERM": "xterm-256color"},
    )
    os.close(follower)

    def settle(seconds: float) -> None:  # read (and drop) what the terminal shows, so the recorder never blocks
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if select.select([leader], [], [], 0.05)[0]:
                try:
                    os.read(leader, 65536)
                except OSError:
                    return

    settle(1.5)
    for line in lines:
        os.write(leader, (line + "\r").encode())
        settle(0.5)
    recorder.wait(timeout=30)
    os.close(leader)
    assert recorder.returncode == 0


def read(path, **options):
    return list(asciinema.read(path, ImportOptions(**options)))


@pytest.mark.slow
def test_real_recordings_of_a_shell_in_the_sandbox(terminal, tmp_path):
    program = asciinema_program()
    terminal.reset(Task(id="recorded", instruction="a recorded session"))
    record(program, terminal.container.id, SESSION, tmp_path / "session.cast")
    record(
        program,
        terminal.container.id,
        ["echo before", "printf 'l1\\nl2\\n' | less", "q", "exit"],
        tmp_path / "less.cast",
    )
    (session,) = read(tmp_path / "session.cast")
    assert session.ok, session.reasons()
    assert [t.action.content for t in session.record.turns] == COMMANDS
    terminal.reset(Task(id="replayed", instruction="the same commands again"))  # a fresh container
    for turn in session.record.turns[:-1]:  # what the shell printed, as the sandbox prints it again (not `exit`)
        assert turn.observation.content == terminal.step(Action(kind="shell", content=turn.action.content)).content
    (less,) = read(tmp_path / "less.cast")
    assert less.reasons() == [
        f"events: a full-screen program at {_first_alternate_screen(tmp_path / 'less.cast'):.1f}s (the alternate "
        "screen): it cannot be split into commands"
    ]


def _first_alternate_screen(path: Path) -> float:
    events = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return next(seconds for seconds, _, text in events if "\x1b[?1049h" in text)


def test_the_sample_splits_at_the_prompt_one_shell_turn_per_command():
    (result,) = read(SAMPLE)
    assert result.ok, result.reasons()
    record = result.record
    assert [t.action.content for t in record.turns] == COMMANDS
    outputs = [t.observation.content for t in record.turns]
    assert outputs[:4] == ["no newline", "", "one\ntwo\n", "right\n"]
    assert outputs[4:] == ["x" * 100 + "\n", "/work/d\n", "2 ../notes.txt\n", "exit\n"]
    assert {t.action.kind for t in record.turns} == {"shell"} and record.domain == "terminal"
    header = json.loads(SAMPLE.read_text().splitlines()[0])
    assert record.started_at.timestamp() == header["timestamp"]
    assert json.loads(record.metadata)["asciinema"]["width"] == 80


def sample_with(tmp_path, name: str, header: dict | None = None, events: list | None = None) -> Path:
    lines = SAMPLE.read_text().splitlines()
    first = json.dumps({**json.loads(lines[0]), **(header or {})})
    path = tmp_path / name
    path.write_text("\n".join([first, *(json.dumps(e) for e in events)] if events is not None else [first, *lines[1:]]))
    return path


def test_what_cannot_be_split_is_rejected_with_its_reason(tmp_path):
    events = [json.loads(line) for line in SAMPLE.read_text().splitlines()[1:]]
    sample_with(tmp_path, "v1.cast", {"version": 1})
    sample_with(tmp_path, "one-program.cast", events=[[0.1, "o", "total 0\r\n"], [0.2, "o", "done\r\n"]])
    sample_with(tmp_path, "editor.cast", events=[*events[:3], [9.0, "o", "\x1b[?1049h\x1b[H~\r\n~"], *events[3:]])
    sample_with(tmp_path, "event.cast", events=[*events[:2], {"o": "text"}])
    (tmp_path / "empty.cast").write_text("")
    reasons = {p.name: read(p)[0].reasons() for p in tmp_path.iterdir()}
    assert reasons == {
        "v1.cast": ["header.version: expected 2 (asciicast v2), got 1"],
        "one-program.cast": ["events: no recognisable prompt: the first line is 'total 0'"],
        "editor.cast": [
            "events: a full-screen program at 9.0s (the alternate screen): it cannot be split into commands"
        ],
        "event.cast": ["line 4: expected an event [seconds, code, text]"],
        "empty.cast": ["empty file: no recording"],
    }


def test_import_counts_read_written_and_rejected_with_reasons(tmp_path):
    folder = tmp_path / "casts"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "session.cast")
    sample_with(folder, "one-program.cast", events=[[0.1, "o", "total 0\r\n"]])
    manifest = import_records([folder], ImportJob("asciinema", tmp_path / "raw"))
    assert manifest.counts == {"read": 2, "written": 1, "rejected": 1}
    assert manifest.rejection_reasons == {"events: no recognisable prompt: the first line is 'total 0'": 1}


def test_the_screen_replays_wrapping_and_line_editing_as_a_terminal_does():
    """Two ways bash redraws a line, both seen in real recordings: readline's carriage return after the column
    that wrapped (the next row starts with that character again), and erasing with `\\b \\b` rather than `\\b\\e[K`."""
    screen = asciinema.Screen(width=20)
    prompt = "me@box:~$ "  # 10 columns: the command wraps after 10 more
    screen.feed(prompt + "echo xxxxxx" + "\rx" + "xxx\r\n")
    screen.feed(prompt + "echo typo\b \b\b \b\b \b\b \bright\r\n" + prompt)
    assert screen.all_lines() == [prompt + "echo " + "x" * 9, prompt + "echo right", prompt.rstrip()]
