"""What an episode starts with, rendered for the world model: a task's files as given, and a real workspace as a tar
of it reads (the same text for the same files), capped; a real Docker terminal's capture after setup."""

import io
import tarfile

import pytest

from trajforge.sandboxes.base import InfraError, Task
from trajforge.sandboxes.starting_state import MAX_FILE_CHARS, MAX_FILES, StartingState
from trajforge.sandboxes.terminal import STATE_READS, DockerTerminal
from trajforge.schemas.records import Action

NOTES = "milk\neggs\nbread\ncoffee\napples\n"


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(f"./{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        tar.addfile(_dir("./src"))  # a folder is no file of its own
    return buffer.getvalue()


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


def test_a_tasks_files_render_with_names_sizes_and_contents():
    text = StartingState.of_files({"notes.txt": NOTES, "src/a.py": "print(1)\n"}).render()
    assert text.startswith("The working directory /work holds these files:")
    assert f"--- notes.txt (30 bytes)\n{NOTES}" in text and "--- src/a.py (9 bytes)\nprint(1)" in text
    assert StartingState.of_files({}).render() == "The working directory /work is empty."


def test_a_capture_of_the_same_files_renders_the_same_text():
    files = {"notes.txt": NOTES, "src/a.py": "print(1)\n"}
    captured = StartingState.of_tar(_tar({k: v.encode() for k, v in files.items()}))
    assert captured.render() == StartingState.of_files(files).render()


def test_contents_are_capped_binary_files_named_and_extra_files_counted():
    files = {"big.txt": "x" * (MAX_FILE_CHARS + 10), **{f"f{i:02}.txt": "" for i in range(MAX_FILES)}}
    state = StartingState.of_tar(_tar({**{k: v.encode() for k, v in files.items()}, "z.bin": b"\0\1\2"}))
    text = state.render()
    assert "[... 10 more characters]" in text and "x" * (MAX_FILE_CHARS + 1) not in text
    assert state.omitted_files == 2 and "[... and 2 more files]" in text  # 42 files, 40 shown: z.bin is cut
    binary = StartingState.of_tar(_tar({"z.bin": b"\0\1\2", "a.bin": b"\xff\xfe"})).render()
    assert "--- z.bin (3 bytes of binary data)" in binary and "--- a.bin (2 bytes of binary data)" in binary


def test_setup_calls_and_the_first_observation_are_rendered_in_order():
    state = StartingState(observation="Connected to MCP server kvstore. Tools: get", setup=[("set {}", '{"ok": 1}')])
    assert StartingState.from_dict(state.as_dict()) == state
    assert state.render() == (
        "Connected to MCP server kvstore. Tools: get\n\n"
        'Before the first turn, the task\'s setup made these calls:\nset {}\n-> {"ok": 1}'
    )


def test_a_real_terminal_captures_its_files_and_what_setup_left(terminal):
    task = Task(id="t", instruction="x", files={"notes.txt": NOTES}, setup=("printf 'a\\nb\\n' > made.txt",))
    terminal.reset(task)
    state = terminal.starting_state(task)
    assert state.render() == StartingState.of_files({"made.txt": "a\nb\n", "notes.txt": NOTES}).render()
    # The capture leaves the shell as reset left it: the first command runs where it would have.
    observation = terminal.step(Action(kind="shell", content="wc -l < notes.txt; pwd"))
    assert observation.content.split() == ["5", "/work"]


class _LossyContainer:
    """A container whose exec loses its output the first `lost` times (what docker exec did under load)."""

    def __init__(self, archive: bytes, lost: int):
        self.archive, self.lost, self.reads = archive, lost, 0

    def exec_run(self, cmd, user=None, demux=False):
        self.reads += 1
        output = b"" if self.reads <= self.lost else self.archive
        return type("ExecResult", (), {"exit_code": 0, "output": (output, b"")})()


def _terminal_with(container) -> DockerTerminal:
    terminal = DockerTerminal(client=object())
    terminal.container = container
    return terminal


def test_an_empty_tar_of_the_workspace_is_read_again_then_an_infrastructure_error():
    task = Task(id="t", instruction="x", files={"notes.txt": NOTES})
    lossy = _LossyContainer(_tar({"notes.txt": NOTES.encode()}), lost=STATE_READS - 1)
    assert _terminal_with(lossy).starting_state(task).render() == StartingState.of_files(task.files).render()
    assert lossy.reads == STATE_READS
    with pytest.raises(InfraError, match="empty 3 times"):
        _terminal_with(_LossyContainer(b"", lost=STATE_READS)).starting_state(task)


def test_a_files_whole_starting_text_is_known_only_where_the_state_shows_all_of_it():
    state = StartingState.of_files({"notes.txt": NOTES, "out/a.txt": "5\n", "big.txt": "x" * (MAX_FILE_CHARS + 1)})
    assert state.file_text("notes.txt") == NOTES and state.file_text("/work/out/a.txt") == "5\n"
    assert state.file_text("./out/../notes.txt") == NOTES
    assert state.file_text("out/missing.txt") == ""  # every file is listed: it does not exist
    assert state.file_text("big.txt") is None  # cut short
    assert state.file_text("/etc/passwd") is None and state.file_text("../x") is None  # outside the workspace
    assert StartingState(observation="hello").file_text("a.txt") is None  # no files recorded
    many = StartingState.of_files({f"f{i:03}.txt": "" for i in range(MAX_FILES + 1)})
    assert many.file_text("zzz.txt") is None  # some files left out: absent from the listing says nothing
    binary = StartingState.of_tar(_tar({"b.bin": b"\0\1"}))
    assert binary.file_text("b.bin") is None
