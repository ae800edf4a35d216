"""The task's check as one more turn. A real episode records, in its `outcome.verifier`, the check that decided it as
an action and the environment's answer (`check_turn`): a shell check is the command made to print its exit code
last (`exit code: N`), a tool check is the tool call and its result. The world-model render (training/render.py)
puts that turn after the episode's own, so a world model learns to answer the check exactly as the simulator asks
it (sandboxes/simulated.py); the agent render leaves it out (the agent never took it)."""

import json
from collections.abc import Mapping

from trajforge.schemas.records import Action

KEY = "check_turn"


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
    return {KEY: {"action": action.model_dump(mode="json", exclude_none=True), "observation": observation}}


def recorded_check_turn(row: Mapping) -> tuple[dict, str] | None:
    """(action, observation content) of the check a row's outcome recorded; None when it recorded none."""
    verifier = (row.get("outcome") or {}).get("verifier")
    if not verifier:
        return None
    try:
        turn = json.loads(verifier).get(KEY)
    except (ValueError, AttributeError):
        return None
    if not isinstance(turn, dict) or not isinstance(turn.get("action"), dict):
        return None
    return turn["action"], str(turn.get("observation") or "")
