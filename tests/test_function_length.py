"""Functions stay short (their body, docstring and code, to the last line; a command's parameter list is its flags,
shown as they are): none over 50 lines in the trainer's three long-lived modules, none over 40 in a command module
(ARCHITECTURE.md: a command is thin). A longer one is split into named steps."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = sorted((ROOT / "pipelines" / "commands").glob("*.py"))


def long_functions(source: str, max_lines: int = 50) -> list[tuple[str, int]]:
    """(name, lines) of every function or method whose body is over `max_lines` lines, nested ones included."""
    functions = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    sizes = [(node.name, node.end_lineno - node.body[0].lineno + 1) for node in functions]
    return [(name, lines) for name, lines in sizes if lines > max_lines]


@pytest.mark.parametrize("module", ["rl.py", "stages.py", "loop.py"])
def test_no_trainer_function_is_over_50_lines(module):
    assert long_functions((ROOT / "training" / module).read_text()) == []


@pytest.mark.parametrize("module", COMMANDS, ids=[path.name for path in COMMANDS])
def test_no_command_function_is_over_40_lines(module):
    assert long_functions(module.read_text(), max_lines=40) == []


def test_a_function_of_51_lines_is_found():
    body = "".join(f"    x{i} = {i}\n" for i in range(50))
    assert long_functions(f"def short():\n{body}\n\ndef long():\n{body}    return 0\n") == [("long", 51)]


def test_a_long_parameter_list_is_not_a_long_body():
    parameters = "".join(f"    x{i}: int = {i},\n" for i in range(60))
    assert long_functions(f"def command(\n{parameters}) -> None:\n    return None\n", max_lines=40) == []
