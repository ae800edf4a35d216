"""SWE-agent trajectories (`<instance_id>.traj`), as `sweagent run` and `run-batch` save them: the steps
(`trajectory`: each with the model's `thought`, the `action` it issued, the `observation` the environment returned,
the environment `state` after it and the `execution_time`), the chat shown to the model (`history`), `info` (exit
status, submission, model stats, versions) and, since SWE-agent 1.0, the run's config (`replay_config`: the problem
statement with its id and text, the model, the environment's image).

Import: the problem statement's text is the task (for files without a replay config: the first user message that is
not a demonstration); each step with an action is one shell turn: SWE-agent's tools (`open`, `edit`,
`str_replace_editor`, `submit`) are commands its shell runs. A step with no action (an exit on cost or error) is
kept aside under `metadata.swe_agent` with the agent's system prompt, the exit status and submission, the instance
id (the problem statement's, else the file's name) and the run (the experiment folder the file lies in).
"""

import json
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from trajforge.schemas.formats import (
    ImportOptions,
    folders_above,
    imported_source,
    json_values,
    object_field,
    read_converted,
    refuse_export,
    shell_turn,
    text_content,
)
from trajforge.schemas.jsonl import JsonLine
from trajforge.schemas.validation import Problem, ReadResult

NAME = "swe-agent"
SUFFIXES = (".traj",)


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(str(path), json_values(path), partial(convert, folders=folders_above(path)), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, values, convert, options)


def write(records: Iterable, path: str | Path) -> NoReturn:
    refuse_export(NAME)


def _replay_config(value: dict, problems: list[Problem]) -> dict:
    config = value.get("replay_config")
    if isinstance(config, str):  # SWE-agent writes it as a JSON string
        try:
            config = json.loads(config)
        except ValueError:
            problems.append(Problem("replay_config", "not valid JSON"))
            return {}
    if config is not None and not isinstance(config, dict):
        problems.append(Problem("replay_config", f"expected an object, got {type(config).__name__}"))
    return config if isinstance(config, dict) else {}


def _step_turn(step: Any, path: str, index: int, problems: list[Problem]) -> dict | None:
    """A step as a shell turn; None for a step with no action."""
    if not isinstance(step, dict):
        problems.append(Problem(path, f"expected an object, got {type(step).__name__}"))
        return None
    action, observation = step.get("action"), step.get("observation", "")
    for key, text in (("action", action), ("observation", observation)):
        if not isinstance(text, str):
            problems.append(
                Problem(f"{path}.{key}", "missing" if text is None else f"not text ({type(text).__name__})")
            )
    if not isinstance(action, str) or not isinstance(observation, str) or not action.strip():
        return None
    state = step.get("state")
    if isinstance(state, str):  # SWE-agent before 1.0 wrote the state as a JSON string
        try:
            state = json.loads(state or "{}")
        except ValueError:
            state = {"state": state}
    state = (
        {("cwd" if k == "working_dir" else k): v for k, v in (state or {}).items()} if isinstance(state, dict) else {}
    )
    turn = shell_turn(index, action.rstrip("\n"), observation, **state)
    seconds = step.get("execution_time")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        turn["latency_ms"] = float(seconds) * 1000
    return turn


def _task(statement: dict, history: Any, problems: list[Problem]) -> str:
    """The problem statement's text; without one, the first user message of the history not a demonstration."""
    for key in ("text", "github_url", "path"):
        if isinstance(statement.get(key), str):
            return statement[key]
    for i, message in enumerate(history if isinstance(history, list) else []):
        if isinstance(message, dict) and message.get("role") == "user" and not message.get("is_demo"):
            return text_content(message.get("content"), f"history[{i}].content", problems)
    return ""


def convert(
    value: dict, origin: str, options: ImportOptions, folders: tuple[str, ...] = ()
) -> tuple[dict | None, list[Problem]]:
    """`folders`: those the file lies in, nearest first (the run's, SWE-agent's experiment folder)."""
    problems: list[Problem] = []
    steps = value.get("trajectory")
    if not isinstance(steps, list):
        problems.append(Problem("trajectory", "missing" if steps is None else "expected a list"))
        steps = []
    config = _replay_config(value, problems)
    turns: list[dict] = []
    skipped = []
    for i, step in enumerate(steps):
        turn = _step_turn(step, f"trajectory[{i}]", len(turns), problems)
        if turn is not None:
            turns.append(turn)
        elif isinstance(step, dict):
            skipped.append({"step": i, "thought": step.get("thought"), "observation": step.get("observation")})
    task = _task(object_field(config, "problem_statement"), value.get("history"), problems)
    if not turns and not problems:
        problems.append(Problem("trajectory", "no step with an action: nothing to import"))
    if problems:
        return None, problems
    return _record(value, origin, options, config, task, turns, skipped, folders), []


def _record(
    value: dict,
    origin: str,
    options: ImportOptions,
    config: dict,
    task: str,
    turns: list,
    skipped: list,
    folders: tuple,
) -> dict:
    info = object_field(value, "info")
    instance = str(object_field(config, "problem_statement").get("id") or origin.removesuffix(".traj"))
    nearest, above = (*folders, None, None)[:2]
    history = value.get("history") if isinstance(value.get("history"), list) else []
    system = [m.get("content") for m in history[:1] if isinstance(m, dict) and m.get("role") == "system"]
    kept = {
        "instance_id": instance,
        "run": (above if nearest == instance else nearest) or None,
        "exit_status": info.get("exit_status"),
        "submission": info.get("submission"),
        "model_stats": info.get("model_stats"),
        "swe_agent_version": info.get("swe_agent_version"),
        "agent_system_prompt": system[0] if system else None,
        "attempts": len(value["attempts"]) if isinstance(value.get("attempts"), list) else None,
        "skipped_steps": skipped or None,
    }
    image = object_field(object_field(config, "env"), "deployment").get("image")
    return {
        "schema_version": "1",
        "domain": options.domain or "swe",
        "source": imported_source(NAME, origin, options),
        "environment": {"name": options.environment or str(image or value.get("environment") or "swe-agent")},
        "task_description": task,
        "action_space": "[]",  # the tools' documentation is only in the rendered system prompt, kept aside
        "agent": {"name": NAME, "model": object_field(object_field(config, "agent"), "model").get("name")},
        "turns": turns,
        "metadata": json.dumps({"swe_agent": {k: v for k, v in kept.items() if v is not None}}, ensure_ascii=False),
    }
