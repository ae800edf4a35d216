"""No function in the trainer's three long-lived modules is over 50 lines (from its `def` to its last line): a
longer one is split into named steps."""

import ast
from pathlib import Path

import pytest

MAX_LINES = 50
TRAINING = Path(__file__).resolve().parents[2] / "training"


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of every function or method over MAX_LINES lines, nested ones included."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]


@pytest.mark.parametrize("module", ["rl.py", "stages.py", "loop.py"])
def test_no_function_is_over_50_lines(module):
    assert long_functions((TRAINING / module).read_text()) == []


def test_a_function_of_51_lines_is_found():
    body = "".join(f"    x{i} = {i}\n" for i in range(49))
    assert long_functions(f"def short():\n{body}\n\ndef long():\n{body}    return 0\n") == [("long", 51)]
