"""Harbor's Agent Trajectory Interchange Format (ATIF v1.x), as terminal-bench records agent runs.

Import: the user message(s) before the first agent step are the task; each tool call of an agent step, with
the observation result whose `source_call_id` names it, is one turn; an agent step with results but no tool
calls is one `message` turn. What has no place in a turn (the agent's own system prompt, a final answer with
no observation, later user messages, reasoning) is kept under `metadata.atif`, so nothing is lost.
Export writes what import reads, and keeps trajforge's action kind and observation fields in step `extra`.
"""

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trajforge.schemas.atomic import atomic_write
from trajforge.schemas.formats import ImportOptions, finish, imported_source, read_converted_lines, text_content
from trajforge.schemas.jsonl import decode_line
from trajforge.schemas.records import SYSTEM_PROMPT_PARTS, Trajectory
from trajforge.schemas.system_prompt import has_sections, parse_system_prompt, render_system_prompt
from trajforge.schemas.validation import Problem, ReadResult

ATIF_VERSION = "ATIF-v1.4"
EXTRA_KEY = "trajforge"


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    path = Path(path)
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        yield from read_converted_lines(path, convert, options)
        return
    raw = path.read_bytes()
    line = decode_line("file", raw if raw.endswith(b"\n") else raw + b"\n")
    if not raw.strip():
        line.problems.append(Problem("", "empty file: no records"))
    if line.problems or not isinstance(line.value, dict):
        problems = line.problems or [Problem("", "expected a JSON object")]
        yield ReadResult(str(path), "file", None, problems, raw)
        return
    record, problems = finish(*convert(line.value, path.name, options), options)
    yield ReadResult(str(path), "file", record, problems, None if record else raw)


def _require(obj: dict, key: str, kind: type, path: str, problems: list[Problem]) -> Any:
    value = obj.get(key)
    if value is None:
        problems.append(Problem(f"{path}{key}", "missing"))
    elif not isinstance(value, kind):
        problems.append(Problem(f"{path}{key}", f"expected {kind.__name__}, got {type(value).__name__}"))
        value = None
    return value


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    problems: list[Problem] = []
    version = _require(value, "schema_version", str, "", problems)
    if version and not version.startswith("ATIF-v1."):
        problems.append(Problem("schema_version", f"unsupported ATIF version {version!r} (accepted: ATIF-v1.x)"))
    agent = _require(value, "agent", dict, "", problems) or {}
    steps = _require(value, "steps", list, "", problems) or []
    parts: dict[str, str] = {"task_description": "", "action_space": "[]"}
    kept: dict[str, Any] = {"session_id": value.get("session_id"), "skipped_steps": []}
    turns: list[dict] = []
    tasks: list[str] = []
    for i, step in enumerate(steps):
        path = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(Problem(path, f"expected an object, got {type(step).__name__}"))
            continue
        source = step.get("source")
        message = text_content(step.get("message", ""), f"{path}.message", problems)
        if source == "system":
            if has_sections(message):
                parts.update(parse_system_prompt(message))
            else:
                kept["agent_system_prompt"] = message
        elif source == "user":
            if turns:
                kept["skipped_steps"].append({"step_id": step.get("step_id"), "user_message": message})
            else:
                tasks.append(message)
        elif source == "agent":
            new = _agent_step_turns(step, path, message, problems)
            if not new:
                kept["skipped_steps"].append({"step_id": step.get("step_id"), "agent_message": message})
            for turn in new:
                turns.append({**turn, "index": len(turns)})
        else:
            problems.append(Problem(f"{path}.source", f"expected system, user or agent, got {source!r}"))
    if tasks:
        parts["task_description"] = "\n\n".join(tasks)
    if isinstance(agent.get("tool_definitions"), list):
        parts["action_space"] = json.dumps(agent["tool_definitions"], ensure_ascii=False)
    if value.get("notes"):
        kept["notes"] = value["notes"]
    ours = (value.get("extra") or {}).get(EXTRA_KEY) or {}
    if problems:
        return None, problems
    if not kept["skipped_steps"]:
        del kept["skipped_steps"]
    environment = ours.get("environment") or {"name": "harbor"}
    if options.environment:
        environment = {"name": options.environment}
    return {
        "schema_version": "1",
        "domain": options.domain or ours.get("domain") or "terminal",
        "source": imported_source("atif", origin, options),
        "environment": environment,
        "outcome": ours.get("outcome") or {"status": "unknown"},
        **parts,
        "agent": {"name": str(agent.get("name") or "unknown"), "model": agent.get("model_name")},
        "turns": turns,
        "metadata": json.dumps({"atif": kept}, ensure_ascii=False),
    }, []


def _agent_step_turns(step: dict, path: str, message: str, problems: list[Problem]) -> list[dict]:
    results = (step.get("observation") or {}).get("results") or []
    if not isinstance(results, list):
        problems.append(Problem(f"{path}.observation.results", "expected a list"))
        return []
    by_call = {r.get("source_call_id"): r for r in results if isinstance(r, dict)}
    ours = (step.get("extra") or {}).get(EXTRA_KEY) or {}
    turns = []
    for j, call in enumerate(step.get("tool_calls") or []):
        cpath = f"{path}.tool_calls[{j}]"
        name = call.get("function_name") if isinstance(call, dict) else None
        if not isinstance(name, str):
            problems.append(Problem(f"{cpath}.function_name", "missing"))
            continue
        result = by_call.get(call.get("tool_call_id"))
        if result is None:
            continue  # a call the run never answered: nothing to learn as an observation
        arguments = call.get("arguments", {})
        content = json.dumps(arguments, ensure_ascii=False) if not isinstance(arguments, str) else arguments
        turns.append(_turn({"kind": "tool_call", "name": name, "content": content}, result, ours, cpath, problems))
    unmatched = [r for r in results if isinstance(r, dict) and r.get("source_call_id") is None]
    if unmatched and not step.get("tool_calls"):
        action = {"kind": ours.get("action_kind", "message"), "name": ours.get("action_name"), "content": message}
        merged = {"content": "\n".join(str(r.get("content") or "") for r in unmatched)}
        turns.append(_turn(action, merged, ours, path, problems))
    return turns


def _turn(action: dict, result: dict, ours: dict, path: str, problems: list[Problem]) -> dict:
    content = result.get("content")
    if content is not None and not isinstance(content, str):
        problems.append(Problem(f"{path}.observation", "result content is not text"))
    observation = {"content": content or "", **ours.get("observation", {})}
    return {**ours.get("turn", {}), "action": action, "observation": observation}


def to_atif(record: Trajectory) -> dict:
    steps: list[dict[str, Any]] = []
    others = {p: getattr(record, p) for p in SYSTEM_PROMPT_PARTS if p != "task_description"}
    if system := render_system_prompt(others):
        steps.append({"source": "system", "message": system})
    steps.append({"source": "user", "message": record.task_description})
    for turn in record.turns:
        action, obs = turn.action, turn.observation
        extra_obs = obs.model_dump(exclude={"content"}, exclude_defaults=True)
        step: dict[str, Any] = {"source": "agent", "message": ""}
        extra_turn = turn.model_dump(exclude={"index", "action", "observation"}, exclude_none=True)
        ours = {k: v for k, v in (("observation", extra_obs), ("turn", extra_turn)) if v}
        if action.kind == "tool_call" and action.name:
            call_id = f"call_{turn.index}"
            try:
                arguments = json.loads(action.content)
            except ValueError:
                arguments = action.content
            step["tool_calls"] = [{"tool_call_id": call_id, "function_name": action.name, "arguments": arguments}]
            step["observation"] = {"results": [{"source_call_id": call_id, "content": obs.content}]}
        else:
            step["message"] = action.content
            step["observation"] = {"results": [{"content": obs.content}]}
            ours.update({"action_kind": action.kind, **({"action_name": action.name} if action.name else {})})
        if ours:
            step["extra"] = {EXTRA_KEY: ours}
        steps.append(step)
    for i, step in enumerate(steps, start=1):
        step["step_id"] = i
    return {
        "schema_version": ATIF_VERSION,
        "session_id": record.trajectory_id,
        "agent": {"name": record.agent.name, "version": "unknown", "model_name": record.agent.model},
        "steps": steps,
        "extra": {EXTRA_KEY: record.model_dump(include={"domain", "environment", "outcome"}, exclude_none=True)},
    }


def write(records: Iterable[Trajectory], path: str | Path) -> int:
    """One trajectory: a .json file; several (or a .jsonl path): JSON Lines."""
    records = list(records)
    path = Path(path)
    with atomic_write(path, "w") as f:
        if path.suffix == ".json" and len(records) == 1:
            json.dump(to_atif(records[0]), f, ensure_ascii=False, indent=2)
            f.write("\n")
        else:
            for record in records:
                f.write(json.dumps(to_atif(record), ensure_ascii=False) + "\n")
    return len(records)
