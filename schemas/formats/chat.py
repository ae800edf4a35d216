"""Chat `messages` JSON Lines (OpenAI fine-tuning style, or ShareGPT `conversations`).

One conversation per line. The system message is the world model's system prompt; each user message is an
action and the assistant message after it the observation. An assistant message's optional `weight` (0 or 1
in OpenAI's format) becomes the turn's `loss_weight`.
"""

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trajforge.schemas.atomic import atomic_write
from trajforge.schemas.formats import ImportOptions, imported_source, read_converted, text_content
from trajforge.schemas.jsonl import JsonLine, iter_json_lines
from trajforge.schemas.records import Trajectory
from trajforge.schemas.system_prompt import parse_system_prompt, render_system_prompt
from trajforge.schemas.validation import Problem, ReadResult

# A system message without trajforge's part headers is the world model's instruction.
UNTAGGED = "simulation_instruction"
ROLES = {"system": "system", "user": "user", "human": "user", "assistant": "assistant", "gpt": "assistant"}


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    """Every file as JSON Lines, whatever its ending (export writes JSON Lines to the path it is given)."""
    return read_values(str(path), iter_json_lines(path), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, values, convert, options)


def _messages(value: dict, problems: list[Problem]) -> tuple[str, list[dict]]:
    if isinstance(value.get("messages"), list):
        return "messages", value["messages"]
    if isinstance(value.get("conversations"), list):  # ShareGPT
        return "conversations", [
            {"role": m.get("from"), "content": m.get("value"), **({"weight": m["weight"]} if "weight" in m else {})}
            if isinstance(m, dict)
            else m
            for m in value["conversations"]
        ]
    problems.append(Problem("messages", "missing (expected `messages` or `conversations`)"))
    return "messages", []


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    problems: list[Problem] = []
    key, messages = _messages(value, problems)
    system = ""
    turns: list[dict] = []
    pending: dict | None = None
    for i, message in enumerate(messages):
        path = f"{key}[{i}]"
        if not isinstance(message, dict):
            problems.append(Problem(path, f"expected an object, got {type(message).__name__}"))
            continue
        role = ROLES.get(message.get("role"))
        content = text_content(message.get("content"), f"{path}.content", problems)
        if role is None:
            problems.append(Problem(f"{path}.role", f"unsupported role {message.get('role')!r}"))
        elif role == "system":
            if i != 0:
                problems.append(Problem(f"{path}.role", "a system message must come first"))
            system = content
        elif role == "user":
            if pending is not None:
                problems.append(Problem(path, "two user messages in a row (each action needs an observation)"))
            pending = {"kind": "message", "content": content}
        else:
            if pending is None:
                problems.append(Problem(path, "an assistant message with no user message before it"))
                continue
            weight = message.get("weight")
            if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float))):
                problems.append(Problem(f"{path}.weight", f"expected a number, got {weight!r}"))
                weight = None
            turn = {"index": len(turns), "action": pending, "observation": {"content": content, "format": "text"}}
            if weight is not None:
                turn["loss_weight"] = float(weight)
            turns.append(turn)
            pending = None
    if pending is not None:
        problems.append(Problem(f"{key}[{len(messages) - 1}]", "the last user message has no assistant reply"))
    if problems:
        return None, problems
    return {
        "schema_version": "1",
        "domain": options.domain or "other",
        "source": imported_source("chat", origin, options),
        "environment": {"name": options.environment or "imported"},
        **parse_system_prompt(system, untagged_part=UNTAGGED),
        "agent": {"name": "unknown"},
        "turns": turns,
    }, []


def to_messages(record: Trajectory) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if system := render_system_prompt(record.model_dump(), untagged_part=UNTAGGED):
        messages.append({"role": "system", "content": system})
    for turn in record.turns:
        messages.append({"role": "user", "content": turn.action.content})
        reply: dict[str, Any] = {"role": "assistant", "content": turn.observation.content}
        if turn.loss_weight is not None:
            reply["weight"] = int(turn.loss_weight) if turn.loss_weight.is_integer() else turn.loss_weight
        messages.append(reply)
    return messages


def write(records: Iterable[Trajectory], path: str | Path) -> int:
    count = 0
    with atomic_write(path, "w") as f:
        for record in records:
            f.write(json.dumps({"messages": to_messages(record)}, ensure_ascii=False) + "\n")
            count += 1
    return count
