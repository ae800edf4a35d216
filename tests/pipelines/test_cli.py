"""The command line as a whole: every command registered, listed on one line by `trajforge --help`, and each with
its whole docstring in its own --help."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from trajforge.pipelines.cli import app

runner = CliRunner()
REGISTERED = typer.main.get_command(app).commands
COMMANDS = [
    "collect",
    "build-corpus",
    "curate-sft",
    "prepare-rl",
    "eval",
    "agent-eval",
    "sim-check",
    "judge-check",
    "report",
    "train",
    "plot",
    "serve",
    "env-serve",
    "inspect",
    "import",
    "export",
    "sandbox-image",
]


def _words(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_the_console_script_lists_every_command_on_one_line():
    env = {key: value for key, value in os.environ.items() if key != "TERMINAL_WIDTH"} | {"COLUMNS": "80"}
    trajforge = Path(sys.executable).parent / "trajforge"
    result = subprocess.run([str(trajforge), "--help"], capture_output=True, text=True, check=True, env=env)
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "─ Commands ─" in line) + 1
    panel = lines[start : next(i for i in range(start, len(lines)) if lines[i].startswith("╰"))]
    listed = [line.strip("│ ").split(None, 1) for line in panel]
    assert all(line.startswith("│ ") and not line.startswith("│  ") for line in panel), result.stdout  # no wrapping
    assert [name for name, _ in listed] == COMMANDS and set(REGISTERED) == set(COMMANDS)
    for name, line in listed:
        assert line == REGISTERED[name].short_help


TRAIN = REGISTERED["train"].commands  # a command of commands: one per stage


@pytest.mark.parametrize("name", [*(c for c in COMMANDS if c != "train"), *(f"train {stage}" for stage in TRAIN)])
def test_each_command_has_its_whole_docstring_in_its_help(name):
    result = runner.invoke(app, [*name.split(), "--help"], terminal_width=80)
    assert result.exit_code == 0 and "Usage:" in result.output
    command = TRAIN[name.split()[1]] if name.startswith("train ") else REGISTERED[name]
    assert _words(inspect.getdoc(command.callback)) in _words(result.output)


def test_train_is_described_as_training_world_models_and_agents():
    line = REGISTERED["train"].short_help
    assert "world model" in line and "agent" in line
    listed = runner.invoke(app, ["train", "--help"], terminal_width=200)
    assert listed.exit_code == 0 and all(stage in listed.output for stage in TRAIN)
