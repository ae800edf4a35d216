"""The task's check as one more turn. A real episode records, in its `outcome.verifier`, the check that decided it as
an action and the environment's answer (`check_turn`): a shell check is the command made to print its exit code
last (`exit code: N`), a tool check is the tool call and its result. A check that compares one file with one value
(`test "$(cat PATH)" = VALUE`, `compared_file`) also records the file as it was then (`file_turn`: `cat PATH` and
its output). The world-model render (training/render.py) puts after the episode's own turns the turn a simulator
asks (`learned_check_turns`): for a file comparison the file's read alone, never the check's command, which holds the
expected value (sandboxes/simulated.py compares the predicted file with it outside the model); for any other check
the check's turn. The agent render leaves them out (the agent never took them)."""

import json
import re
import shlex
from collections.abc import Mapping

from trajforge.schemas.records import Action

KEY = "check_turn"
FILE_KEY = "file_turn"
FILE_EQUALS = re.compile(r'test "\$\(cat ([^\s"$`()\\]+)\)" = (.+)', re.DOTALL)


def compared_file(command: str) -> tuple[str, str] | None:
    """(path, value) of a check that compares one file's content with one value, `test "$(cat PATH)" = VALUE`
    (the generated terminal families' check); None for any other check."""
    match = FILE_EQUALS.fullmatch(command.strip())
    if match is None:
        return None
    try:
        words = shlex.split(match.group(2))
    except ValueError:
        return None
    return (match.group(1), words[0]) if len(words) == 1 else None


def file_command(path: str) -> str:
    """The shell action that shows a compared file (its path has no quote, space or expansion: FILE_EQUALS)."""
    return f"cat {path}"


def exit_code_command(command: str) -> str:
    """A check command as one shell action that prints its exit code last (`exit code: N`)."""
    body = f"(\n{command}\n)" if "\n" in command else f"( {command} )"
    return f'{body}; echo "exit code: $?"'


def exit_code_observation(output: str, exit_code: int) -> str:
    """What a shell shows for `exit_code_command`: the check's own output, then its exit code."""
    lead = output if not output or output.endswith("\n") else f"{output}\n"
    return f"{lead}exit code: {exit_code}\n"


def check_turn(action: Action, observation: str) -> dict:
    """The check as a turn, for an outcome's verifier JSON."""
    return {KEY: _turn(action, observation)}


def file_turn(path: str, observation: str) -> dict:
    """The compared file as a turn after the check, for an outcome's verifier JSON."""
    return {FILE_KEY: _turn(Action(kind="shell", content=file_command(path)), observation)}


def _turn(action: Action, observation: str) -> dict:
    return {"action": action.model_dump(mode="json", exclude_none=True), "observation": observation}


def recorded_check_turns(row: Mapping) -> list[tuple[dict, str]]:
    """(action, observation content) of the check a row's outcome recorded, then of the compared file where it
    recorded one; none when it recorded no check."""
    verifier = (row.get("outcome") or {}).get("verifier")
    if not verifier:
        return []
    try:
        recorded = json.loads(verifier)
    except ValueError:
        return []
    if not isinstance(recorded, dict):
        return []
    turns = []
    for key in (KEY, FILE_KEY):
        turn = recorded.get(key)
        if not isinstance(turn, dict) or not isinstance(turn.get("action"), dict):
            break
        turns.append((turn["action"], str(turn.get("observation") or "")))
    return turns


def learned_check_turns(row: Mapping) -> list[tuple[dict, str]]:
    """The recorded turn a world model learns after a row's episode, as the simulator asks it: the compared file's
    read where the outcome recorded one (the check's own turn, which shows the expected value, left out), else the
    check's turn; none when it recorded no check."""
    return recorded_check_turns(row)[-1:]
