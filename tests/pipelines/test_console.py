"""The console's width into a pipe or a file: wide enough that a table's headers are not cut, unless $COLUMNS says
otherwise."""

import os
import subprocess
import sys

WIDTHS = "from trajforge.pipelines.console import console, out; print(out.width, console.width)"


def widths(**env) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | env
    done = subprocess.run([sys.executable, "-c", WIDTHS], capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_pipe_gets_160_columns_and_columns_overrides_it():
    assert widths() == "160 160"
    assert widths(COLUMNS="100") == "100 100"


def test_help_into_a_pipe_keeps_whole_option_names():
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    trajforge = os.path.join(os.path.dirname(sys.executable), "trajforge")
    done = subprocess.run([trajforge, "collect", "--help"], capture_output=True, text=True, env=environment)
    assert done.returncode == 0 and "--simulate-judge-key-env" in done.stdout and "…" not in done.stdout
