"""AgentWorldBench JSONL: one evaluation turn per line.

Fields: `task` (the domain), `id`, `prompt[]` (earlier actions, "### Turn N" blocks), `response[]` (their
observations, "**Environment Observation:**" blocks), `current_prompt` (the action to predict the observation
of), `system_str` (the world model's system prompt), `turn_idx` (1-based) and `total_turns`.
The published files hold no ground truth in the line itself; trajforge writes it under `reference`, and
reads it back when present. A line without one imports as its history, with the pending action kept in
`metadata.agentworldbench`.
"""

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from schemas.atomic import atomic_write
from schemas.formats import ImportOptions, imported_source, read_converted_lines, text_content
from schemas.hashing import content_hash
from schemas.records import DOMAINS, Trajectory, Turn
from schemas.system_prompt import parse_system_prompt, render_system_prompt
from schemas.validation import Problem, ReadResult

UNTAGGED = "simulation_instruction"  # system_str is the world model's role prompt
_TURN_HEADER = re.compile(r"^### Turn \d+\n")
_ACTION_HEADER = "**Action:**\n"
_OBSERVATION_HEADER = "**Environment Observation:**\n"
_FENCE = re.compile(r"^```(json|bash)\n(.*)\n```$", flags=re.DOTALL)


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted_lines(Path(path), convert, options)


def parse_action(block: str) -> dict:
    text = _TURN_HEADER.sub("", block, count=1)
    text = text.removeprefix(_ACTION_HEADER)
    fence = _FENCE.match(text)
    if fence and fence.group(1) == "bash":
        return {"kind": "shell", "content": fence.group(2)}
    if fence:
        try:
            call = json.loads(fence.group(2))
        except ValueError:
            return {"kind": "message", "content": text}
        if isinstance(call, dict) and isinstance(call.get("name"), str) and "arguments" in call:
            return {
                "kind": "tool_call",
                "name": call["name"],
                "content": json.dumps(call["arguments"], ensure_ascii=False),
            }
        return {"kind": "tool_call", "content": fence.group(2)}
    return {"kind": "message", "content": text}


def format_action(turn: Turn) -> str:
    action = turn.action
    if action.kind == "shell":
        body = f"```bash\n{action.content}\n```"
    elif action.kind == "tool_call" and action.name:
        try:
            arguments = json.loads(action.content)
        except ValueError:
            arguments = action.content
        body = "```json\n" + json.dumps({"name": action.name, "arguments": arguments}, ensure_ascii=False) + "\n```"
    else:
        body = action.content
    return f"### Turn {turn.index + 1}\n{_ACTION_HEADER}{body}"


def parse_observation(block: str) -> str:
    return block.removeprefix(_OBSERVATION_HEADER)


def format_observation(turn: Turn) -> str:
    return _OBSERVATION_HEADER + turn.observation.content


def _strings(value: dict, key: str, problems: list[Problem]) -> list[str]:
    items = value.get(key)
    if not isinstance(items, list):
        problems.append(Problem(key, "missing" if items is None else "expected a list of strings"))
        return []
    return [text_content(item, f"{key}[{i}]", problems) for i, item in enumerate(items)]


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    problems: list[Problem] = []
    prompts = _strings(value, "prompt", problems)
    responses = _strings(value, "response", problems)
    if len(prompts) != len(responses):
        problems.append(Problem("response", f"{len(responses)} entries for {len(prompts)} prompts"))
    current = text_content(value.get("current_prompt"), "current_prompt", problems)
    system = text_content(value.get("system_str", ""), "system_str", problems)
    task = value.get("task")
    if not isinstance(task, str):
        problems.append(Problem("task", "missing" if task is None else "expected a string"))
    reference = value.get("reference")
    if reference is not None and not isinstance(reference, str):
        problems.append(Problem("reference", "expected a string"))
    if problems:
        return None, problems
    pairs = list(zip(prompts, map(parse_observation, responses), strict=True))
    if reference is not None:
        pairs.append((current, reference))
    turns = [
        {"index": i, "action": parse_action(p), "observation": {"content": o, "format": "text"}}
        for i, (p, o) in enumerate(pairs)
    ]
    kept = {k: value.get(k) for k in ("id", "turn_idx", "total_turns")}
    if reference is None:
        kept["pending_action"] = parse_action(current)
    return {
        "schema_version": "1",
        "domain": options.domain or (task if task in DOMAINS else "other"),
        "source": imported_source("agentworldbench", origin, options),
        "environment": {"name": options.environment or f"agentworldbench-{task}"},
        **parse_system_prompt(system, untagged_part=UNTAGGED),
        "agent": {"name": "unknown"},
        "turns": turns,
        "metadata": json.dumps({"agentworldbench": kept}, ensure_ascii=False),
    }, []


def to_lines(record: Trajectory, turn_indices: Iterable[int] | None = None) -> Iterator[dict]:
    """One benchmark line per chosen turn (all by default), each with its ground truth under `reference`."""
    system = render_system_prompt(record.model_dump(), untagged_part=UNTAGGED)
    numeric_id = int(content_hash(record.trajectory_id, 13), 16)
    total = len(record.turns)
    for k in turn_indices if turn_indices is not None else range(total):
        turn = record.turns[k]
        yield {
            "task": record.domain,
            "id": numeric_id,
            "prompt": [format_action(t) for t in record.turns[:k]],
            "response": [format_observation(t) for t in record.turns[:k]],
            "current_prompt": format_action(turn),
            "system_str": system,
            "turn_idx": k + 1,
            "total_turns": total,
            "reference": turn.observation.content,
        }


def write(records: Iterable[Trajectory], path: str | Path) -> int:
    count = 0
    with atomic_write(path, "w") as f:
        for record in records:
            for line in to_lines(record):
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
    return count
