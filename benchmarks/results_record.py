"""One results file per benchmark run: what the docs quote, with what it takes to rerun it.

A benchmark calls `start_record(name, args)` once its flags are parsed (from then on what it prints is also kept)
and `record.write(result)` when the run is done. The file, `RESULTS/<name>-<UTC time>-<short commit>.md`, holds
the command line, the commit (and whether the tree had changes), the machine, the seeds, the date, what the run
printed and its JSON result. A run that fails writes nothing.
"""

import argparse
import datetime
import io
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def add_results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default="results", help="the folder the run's results file is written to")


def git_commit(repository: Path = REPOSITORY) -> tuple[str, bool]:
    """The checked-out commit and whether the tree differs from it; ("not recorded", False) outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repository, capture_output=True, text=True,
                                check=True).stdout.strip()  # fmt: skip
        status = subprocess.run(["git", "status", "--porcelain"], cwd=repository, capture_output=True, text=True,
                                check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "not recorded", False
    return commit, bool(status.strip())


def short_commit() -> str:
    commit, _ = git_commit()
    return commit[:7] if commit != "not recorded" else "nocommit"


def torch_device() -> str:
    """The accelerator torch would use, by name; 'cpu' without one, 'no torch' where torch is not installed."""
    try:
        import torch
    except ImportError:
        return "no torch"
    if torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)} (x{torch.cuda.device_count()})"
    return "cpu"


def machine() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch_device": torch_device(),
    }


def seeds(args: argparse.Namespace) -> dict:
    """Every flag whose name says it is a seed, with its value."""
    return {name: value for name, value in sorted(vars(args).items()) if "seed" in name}


class _Tee(io.TextIOBase):
    """Writes to the stream it wraps and keeps a copy."""

    def __init__(self, stream):
        self.stream, self.kept = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    # What the run's own code asks of its stdout (a progress bar: is it a terminal?) is the wrapped stream's answer.
    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", "utf-8")


class RunRecord:
    def __init__(self, benchmark: str, args: argparse.Namespace, argv: list[str], started: datetime.datetime):
        self.benchmark, self.args, self.argv, self.started = benchmark, args, argv, started
        self._tee: _Tee | None = None

    def keep_printed(self) -> None:
        self._tee = _Tee(sys.stdout)
        sys.stdout = self._tee

    def printed(self) -> str:
        return self._tee.kept.getvalue() if self._tee else ""

    def text(self, result: dict | None) -> str:
        commit, dirty = git_commit()
        lines = [
            f"# {self.benchmark}: a benchmark run",
            "",
            "Written by the benchmark itself (benchmarks/results_record.py).",
            "",
            f"- command: `{shlex.join(self.argv)}`",
            f"- commit: `{commit}`" + (" (with uncommitted changes)" if dirty else ""),
            "- machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()),
            "- seeds: " + (", ".join(f"{k} {v}" for k, v in seeds(self.args).items()) or "none among the flags"),
            f"- date: {self.started.strftime('%Y-%m-%d %H:%M UTC')}",
            "",
            "## What it printed",
            "",
            "```",
            self.printed().rstrip("\n"),
            "```",
        ]
        if result is not None:
            lines += ["", "## Its result", "", "```json", json.dumps(result, indent=2, default=str), "```"]
        return "\n".join(lines) + "\n"

    def path(self, folder: Path) -> Path:
        return folder / f"{self.benchmark}-{self.started.strftime('%Y-%m-%dT%H%MZ')}-{short_commit()}.md"

    def write(self, result: dict | None = None) -> Path:
        folder = Path(getattr(self.args, "results", "results"))
        folder.mkdir(parents=True, exist_ok=True)
        path = self.path(folder)
        path.write_text(self.text(result))
        if self._tee:
            sys.stdout = self._tee.stream
        print(f"results -> {path}")
        return path


def start_record(benchmark: str, args: argparse.Namespace, argv: list[str] | None = None) -> RunRecord:
    """Begin the record of one run: from now on what the run prints is kept for its results file. `argv`: the flags
    when they are not the command line's (a benchmark's `main(argv)` called from Python)."""
    started = datetime.datetime.now(datetime.UTC)
    command = [sys.executable, *sys.argv] if argv is None else [sys.executable, sys.argv[0], *argv]
    record = RunRecord(benchmark, args, command, started)
    record.keep_printed()
    return record
