"""Functions stay short (from `def` to the last line): none over 50 lines in the trainer's three long-lived modules,
none over 40 in a command module (ARCHITECTURE.md: a command is thin). A longer one is split into named steps."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = sorted((ROOT / "pipelines" / "commands").glob("*.py"))


def long_functions(source: str, max_lines: int = 50) -> list[tuple[str, int]]:
    """(name, lines) of every function or method over `max_lines` lines, nested ones included."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > max_lines
    ]


@pytest.mark.parametrize("module", ["rl.py", "stages.py", "loop.py"])
def test_no_trainer_function_is_over_50_lines(module):
    assert long_functions((ROOT / "training" / module).read_text()) == []


@pytest.mark.parametrize("module", COMMANDS, ids=[path.name for path in COMMANDS])
def test_no_command_function_is_over_40_lines(module):
    assert long_functions(module.read_text(), max_lines=40) == []


def test_a_function_of_51_lines_is_found():
    body = "".join(f"    x{i} = {i}\n" for i in range(49))
    assert long_functions(f"def short():\n{body}\n\ndef long():\n{body}    return 0\n") == [("long", 51)]
