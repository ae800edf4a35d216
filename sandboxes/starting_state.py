"""What an episode starts with, as a world model must be told it: the working directory's files (names and
contents, capped), the tool calls the task's setup made and what they returned (an MCP server's seed data), and
the first thing the environment shows (an MCP server's greeting, a browser's start page).

A real sandbox captures it right after `reset` (`Sandbox.starting_state`); its rendering is the trajectory's
`initial_state`, for real and simulated episodes alike, so a world model is trained on the prompt it simulates from.
A terminal task without setup commands starts with exactly its `files:`, so its state needs no sandbox at all
(`of_files`); the capture of a real workspace renders the same text for the same files."""

import io
import posixpath
import re
import tarfile
from dataclasses import asdict, dataclass, field

MAX_FILES = 40
MAX_FILE_CHARS = 2_000
MAX_TOTAL_CHARS = 12_000
WORKDIR = "/work"
SHOWN = re.compile(r"\((\d+) bytes\)\n(.*)", re.DOTALL)  # a file as `_capped` shows it: its size, then its text


@dataclass(frozen=True)
class StartingState:
    observation: str = ""  # what the environment shows first, when that is part of its state (MCP, browser)
    files: dict[str, str] | None = None  # path under the working directory -> its content as rendered (capped)
    setup: list[tuple[str, str]] = field(default_factory=list)  # (setup call, its result), in order
    action_space: list[dict] = field(default_factory=list)  # what the real environment offers (an MCP server's tools)
    omitted_files: int = 0  # files beyond MAX_FILES, counted

    def render(self) -> str:
        """The `initial_state` text: the first observation, then the files, then the setup's calls."""
        sections = [self.observation] if self.observation else []
        if self.files is not None:
            sections.append(_render_files(self.files, self.omitted_files))
        if self.setup:
            calls = "\n".join(f"{call}\n-> {result}" for call, result in self.setup)
            sections.append(f"Before the first turn, the task's setup made these calls:\n{calls}")
        return "\n\n".join(sections)

    def file_text(self, path: str) -> str | None:
        """The whole text of the file at `path` (relative to the working directory, or under it) as the episode
        starts, "" for a file it does not hold; None when the state cannot say (no files recorded, a path outside
        the working directory, files left out, a file cut short or binary)."""
        relative = posixpath.normpath(posixpath.join(WORKDIR, path))
        if self.files is None or not relative.startswith(f"{WORKDIR}/"):
            return None
        shown = self.files.get(relative.removeprefix(f"{WORKDIR}/"))
        if shown is None:
            return "" if not self.omitted_files else None
        match = SHOWN.fullmatch(shown)
        if match is None or len(match.group(2).encode("utf-8")) != int(match.group(1)):
            return None
        return match.group(2)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "StartingState":
        return cls(**{**data, "setup": [tuple(pair) for pair in data.get("setup", [])]})

    @classmethod
    def of_files(cls, files: dict[str, str]) -> "StartingState":
        """A workspace holding exactly `files` (a task's `files:`), rendered as a capture of it would be."""
        return _capped({path: content.encode("utf-8") for path, content in files.items()})

    @classmethod
    def of_tar(cls, archive: bytes) -> "StartingState":
        """The regular files of a tar of the working directory (`tar -C /work -cf - .`)."""
        files = {}
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    files[member.name.removeprefix("./")] = tar.extractfile(member).read()
        return _capped(files)


def _capped(files: dict[str, bytes]) -> StartingState:
    """The files in path order, each decoded and cut at MAX_FILE_CHARS, at most MAX_FILES of them."""
    shown = {}
    for path in sorted(files)[:MAX_FILES]:
        data = files[path]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = "\0"
        if "\0" in text:
            shown[path] = f"({len(data)} bytes of binary data)"
            continue
        cut = f"\n[... {len(text) - MAX_FILE_CHARS} more characters]" if len(text) > MAX_FILE_CHARS else ""
        shown[path] = f"({len(data)} bytes)\n{text[:MAX_FILE_CHARS]}{cut}"
    return StartingState(files=shown, omitted_files=max(0, len(files) - MAX_FILES))


def _render_files(files: dict[str, str], omitted: int) -> str:
    if not files:
        return f"The working directory {WORKDIR} is empty."
    lines, total = [f"The working directory {WORKDIR} holds these files:"], 0
    for path, shown in files.items():
        if total + len(shown) > MAX_TOTAL_CHARS:
            shown = shown.split("\n", 1)[0] + "\n[contents not shown: the listing is long]"
        total += len(shown)
        lines.append(f"--- {path} {shown}")
    if omitted:
        lines.append(f"[... and {omitted} more files]")
    return "\n".join(lines)
