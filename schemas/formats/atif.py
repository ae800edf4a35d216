"""Harbor's Agent Trajectory Interchange Format (ATIF v1.x, harbor-framework/harbor RFC 0001), as Harbor,
terminal-bench, Devin CLI and NeMo Relay record agent runs; read up to v1.7, written as v1.7.

Import: the user message(s) before the first agent step are the task; each tool call of an agent step, with
the observation result whose `source_call_id` names it, is one turn; an agent step with results but no tool
calls is one `message` turn. `agent.tool_definitions` is the action space. A step copied from an earlier context
(`is_copied_context`) gives turns of loss weight 0: never in the loss. Each embedded sub-agent trajectory
(`subagent_trajectories`, v1.7) is a record of its own: the parent's id is in its `metadata.atif.parent`, the
children's ids in the parent's `metadata.atif.subagents`, and every record of the run carries the root's
`task_id`, so the split keeps them on one side. What has no place in a turn is kept under `metadata.atif`: the
source's ids (`session_id`, `trajectory_id`, each turn's step and tool call), the agent's own system prompt,
reasoning (`reasoning_content`), steps that made no turn, notes.

Export writes what import reads, as ATIF-v1.7: the record's fields that ATIF has no place for travel in the
root's and steps' `extra.trajforge`, so a file trajforge wrote reads back as the same records; a turn of loss
weight 0 is marked `is_copied_context`; a record exported with its parent is embedded in the parent's
`subagent_trajectories`.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.schemas.actions import payload_text
from trajforge.schemas.atomic import atomic_write
from trajforge.schemas.formats import (
    ImportOptions,
    finish,
    imported_source,
    json_values,
    origin_of,
    rejected_value,
    text_content,
)
from trajforge.schemas.jsonl import JsonLine
from trajforge.schemas.records import SYSTEM_PROMPT_PARTS, Trajectory
from trajforge.schemas.system_prompt import (
    EMPTY_ACTION_SPACE,
    has_sections,
    parse_system_prompt,
    render_system_prompt,
)
from trajforge.schemas.validation import Problem, ReadResult

ATIF_VERSION = "ATIF-v1.7"
EXTRA_KEY = "trajforge"
# The record's fields with no ATIF place, kept in the root's extra; `source` there marks a file trajforge wrote.
RECORD_EXTRA = {"domain", "environment", "outcome", "source", "started_at", "ended_at", "metadata"}
SUBAGENTS = "subagent_trajectories"


@dataclass(frozen=True)
class _Place:
    source: str  # the file
    locator: str  # where in it: "file", "line 3", "file subagent_trajectories[0]"
    origin: str  # the record's source.origin

    def child(self, i: int) -> "_Place":
        at = f"{SUBAGENTS}[{i}]"
        return _Place(self.source, f"{self.locator} {at}", f"{self.origin} {at}")


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    """One result per trajectory: a .json file or each line of JSON Lines, then its embedded sub-agents."""
    return read_values(str(path), json_values(path), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    for value in values:
        if (rejected := rejected_value(source, value)) is not None:
            yield rejected
            continue
        place = _Place(source, value.locator, origin_of(source, value.locator))
        yield from _family(value.value, place, options, value.raw)


def _family(value: dict, place: _Place, options: ImportOptions, raw: bytes, up: dict | None = None) -> list[ReadResult]:
    """A trajectory and its embedded sub-agents, each one result, the parent first. `up`, for a sub-agent: its
    parent's link and the root's run."""
    record, problems = finish(*convert(value, place.origin, options), options)
    subagents = value.get(SUBAGENTS) or []
    if not isinstance(subagents, list):
        record, problems = None, [*problems, Problem(SUBAGENTS, f"expected a list, got {type(subagents).__name__}")]
        subagents = []
    run = up["task_id"] if up else value.get("session_id") or value.get("trajectory_id") or _id(record)
    down = {"task_id": run, "parent": {"trajectory_id": _id(record), "atif_trajectory_id": value.get("trajectory_id")}}
    children: list[ReadResult] = []
    links: list[dict] = []
    seen: set[str] = set()
    for i, child in enumerate(subagents):
        at = place.child(i)
        if problem := _subagent_problem(child, seen):
            family = [ReadResult(at.source, at.locator, None, [problem], _raw(child))]
        else:
            family = _family(child, at, options, _raw(child), down)
        links.append({"trajectory_id": _id(family[0].record), "atif_trajectory_id": _get(child, "trajectory_id")})
        children += family
    if record is not None and (up or links) and "source" not in _ours(value):
        record = _linked(record, {"task_id": run, **({"parent": up["parent"]} if up else {}), "subagents": links})
    return [ReadResult(place.source, place.locator, record, problems, None if record else raw), *children]


def _subagent_problem(child: Any, seen: set) -> Problem | None:
    """v1.7: every embedded sub-agent is an object with a `trajectory_id` unique among its siblings."""
    if not isinstance(child, dict):
        return Problem("", f"expected a JSON object, got {type(child).__name__}")
    ident = child.get("trajectory_id")
    if not isinstance(ident, str) or not ident:
        return Problem("trajectory_id", "missing (required on an embedded sub-agent trajectory)")
    if ident in seen:
        return Problem("trajectory_id", f"{ident!r} is not unique among its parent's {SUBAGENTS}")
    seen.add(ident)
    return None


def _id(record: Trajectory | None) -> str | None:
    return record.trajectory_id if record is not None else None


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _raw(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _linked(record: Trajectory, links: dict) -> Trajectory:
    """The record with its run's links under metadata.atif (metadata is not part of the content id)."""
    meta = json.loads(record.metadata or "{}")
    meta.setdefault("atif", {}).update({k: v for k, v in links.items() if v})
    return record.model_copy(update={"metadata": json.dumps(meta, ensure_ascii=False)})


def _ours(obj: dict) -> dict:
    ours = _get(obj.get("extra"), EXTRA_KEY)
    return ours if isinstance(ours, dict) else {}


def _require(obj: dict, key: str, kind: type, path: str, problems: list[Problem]) -> Any:
    value = obj.get(key)
    if value is None:
        problems.append(Problem(f"{path}{key}", "missing"))
    elif not isinstance(value, kind):
        problems.append(Problem(f"{path}{key}", f"expected {kind.__name__}, got {type(value).__name__}"))
        value = None
    return value


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    """One ATIF trajectory (its sub-agents aside) -> a record dict, or the problems that stop it."""
    problems: list[Problem] = []
    version = _require(value, "schema_version", str, "", problems)
    if version and not version.startswith("ATIF-v1."):
        problems.append(Problem("schema_version", f"unsupported ATIF version {version!r} (accepted: ATIF-v1.x)"))
    agent = _require(value, "agent", dict, "", problems) or {}
    steps = _require(value, "steps", list, "", problems) or []
    parts, kept, turns = _read_steps(steps, problems)
    if parts["action_space"] == EMPTY_ACTION_SPACE and isinstance(agent.get("tool_definitions"), list):
        parts["action_space"] = json.dumps(agent["tool_definitions"], ensure_ascii=False)
    if problems:
        return None, problems
    ours = _ours(value)
    kept = {"schema_version": version, "session_id": value.get("session_id"), **kept}
    kept.update({k: value[k] for k in ("trajectory_id", "notes") if value.get(k)})
    environment = {"name": options.environment} if options.environment else ours.get("environment")
    return {
        "schema_version": "1",
        "domain": options.domain or ours.get("domain") or "terminal",
        "source": ours.get("source") or imported_source("atif", origin, options),
        "environment": environment or {"name": "harbor"},
        "outcome": ours.get("outcome") or {"status": "unknown"},
        **parts,
        "agent": {"name": str(agent.get("name") or "unknown"), "model": agent.get("model_name")},
        "turns": turns,
        "metadata": ours.get("metadata") if "source" in ours else json.dumps({"atif": kept}, ensure_ascii=False),
        **{k: ours[k] for k in ("started_at", "ended_at") if k in ours},
    }, []


def _read_steps(steps: list, problems: list[Problem]) -> tuple[dict[str, str], dict[str, Any], list[dict]]:
    """The system prompt's parts, what is kept in metadata, and the turns."""
    parts: dict[str, str] = {"task_description": "", "action_space": EMPTY_ACTION_SPACE}
    kept: dict[str, Any] = {"skipped_steps": [], "turn_sources": [], "reasoning": []}
    turns: list[dict] = []
    tasks: list[str] = []
    opened = False  # a turn of this context seen: later user messages are not the task (copied ones are history)
    for i, step in enumerate(steps):
        path = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(Problem(path, f"expected an object, got {type(step).__name__}"))
            continue
        source, step_id = step.get("source"), step.get("step_id")
        message = text_content(step.get("message", ""), f"{path}.message", problems)
        if source == "system":
            if has_sections(message):
                parts.update(parse_system_prompt(message))
            else:
                kept["agent_system_prompt"] = message
        elif source == "user":
            if opened:
                kept["skipped_steps"].append({"step_id": step_id, "user_message": message})
            else:
                tasks.append(message)
        elif source == "agent":
            new = _agent_step_turns(step, path, message, problems)
            if not new:
                kept["skipped_steps"].append({"step_id": step_id, "agent_message": message})
            opened = opened or bool(new) and step.get("is_copied_context") is not True
            if isinstance(step.get("reasoning_content"), str):
                kept["reasoning"].append({"step_id": step_id, "reasoning_content": step["reasoning_content"]})
            for turn, ids in new:
                turns.append({**turn, "index": len(turns)})
                kept["turn_sources"].append({"step_id": step_id, **ids})
        else:
            problems.append(Problem(f"{path}.source", f"expected system, user or agent, got {source!r}"))
    if tasks:
        parts["task_description"] = "\n\n".join(tasks)
    return parts, {k: v for k, v in kept.items() if v}, turns


def _agent_step_turns(step: dict, path: str, message: str, problems: list[Problem]) -> list[tuple[dict, dict]]:
    """The turns of one agent step, each with the source's ids of its call and result."""
    results = (step.get("observation") or {}).get("results") or []
    if not isinstance(results, list):
        problems.append(Problem(f"{path}.observation.results", "expected a list"))
        return []
    copied = step.get("is_copied_context")
    if copied is not None and not isinstance(copied, bool):
        problems.append(Problem(f"{path}.is_copied_context", f"expected a boolean, got {type(copied).__name__}"))
    by_call = {r.get("source_call_id"): r for r in results if isinstance(r, dict)}
    ours = _ours(step)
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
        action = {"kind": "tool_call", "name": name, "content": _call_content(call)}
        ids = {"tool_call_id": call.get("tool_call_id"), **_refs(result), **_extras(call=call, result=result)}
        turns.append((_turn(action, result, ours, copied, cpath, problems), ids))
    unmatched = [r for r in results if isinstance(r, dict) and r.get("source_call_id") is None]
    if unmatched and not step.get("tool_calls"):
        action = {"kind": ours.get("action_kind", "message"), "name": ours.get("action_name"), "content": message}
        merged = {"content": "\n".join(str(r.get("content") or "") for r in unmatched)}
        turns.append((_turn(action, merged, ours, copied, path, problems), _refs(*unmatched)))
    return turns


def _call_content(call: dict) -> str:
    written = _ours(call).get("content")  # the action's exact text, when trajforge wrote a non-canonical one
    if isinstance(written, str):
        return written
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else payload_text(arguments)


def _refs(*results: dict) -> dict:
    refs = [ref for r in results for ref in (r.get("subagent_trajectory_ref") or [])]
    return {"subagent_trajectory_ref": refs} if refs else {}


def _extras(**parts: dict) -> dict:
    """The source's own `extra` of a tool call and of its result (v1.7), as `call_extra`, `result_extra`."""
    kept = {}
    for name, obj in parts.items():
        extra = _get(obj, "extra")
        if isinstance(extra, dict) and (theirs := {k: v for k, v in extra.items() if k != EXTRA_KEY}):
            kept[f"{name}_extra"] = theirs
    return kept


def _turn(action: dict, result: dict, ours: dict, copied: Any, path: str, problems: list[Problem]) -> dict:
    content = result.get("content")
    if isinstance(content, list):
        content = text_content(content, f"{path}.observation", problems)
    elif content is not None and not isinstance(content, str):
        problems.append(Problem(f"{path}.observation", "result content is not text"))
    turn = {
        **ours.get("turn", {}),
        "action": action,
        "observation": {"content": content or "", **ours.get("observation", {})},
    }
    if copied is True:
        turn.setdefault("loss_weight", 0.0)  # copied from an earlier context: already learned, never in the loss
    return turn


def to_atif(record: Trajectory, children: dict[str, list[Trajectory]] | None = None) -> dict:
    """The record as an ATIF-v1.7 trajectory; its sub-agents in `children` (parent id -> records) embedded."""
    steps: list[dict[str, Any]] = []
    others = {p: getattr(record, p) for p in SYSTEM_PROMPT_PARTS if p != "task_description"}
    if system := render_system_prompt(others):
        steps.append({"source": "system", "message": system})
    steps.append({"source": "user", "message": record.task_description})
    steps += [_step(turn) for turn in record.turns]
    for i, step in enumerate(steps, start=1):
        step["step_id"] = i
    agent = {"name": record.agent.name, "version": "unknown", "model_name": record.agent.model}
    if tools := _tool_definitions(record.action_space):
        agent["tool_definitions"] = tools
    document = {
        "schema_version": ATIF_VERSION,
        "session_id": record.trajectory_id,
        "trajectory_id": record.trajectory_id,
        "agent": {k: v for k, v in agent.items() if v is not None},
        "steps": steps,
        "extra": {EXTRA_KEY: record.model_dump(include=RECORD_EXTRA, exclude_none=True, mode="json")},
    }
    if nested := (children or {}).get(record.trajectory_id):
        document[SUBAGENTS] = [to_atif(child, children) for child in nested]
    return document


def _step(turn) -> dict[str, Any]:
    action, obs = turn.action, turn.observation
    step: dict[str, Any] = {"source": "agent", "message": ""}
    extra_obs = obs.model_dump(exclude={"content"}, exclude_defaults=True)
    extra_turn = turn.model_dump(exclude={"index", "action", "observation"}, exclude_none=True)
    ours = {k: v for k, v in (("observation", extra_obs), ("turn", extra_turn)) if v}
    if action.kind == "tool_call" and action.name:
        call_id = f"call_{turn.index}"
        step["tool_calls"] = [{"tool_call_id": call_id, "function_name": action.name, **_arguments(action.content)}]
        step["observation"] = {"results": [{"source_call_id": call_id, "content": obs.content}]}
    else:
        step["message"] = action.content
        step["observation"] = {"results": [{"content": obs.content}]}
        ours.update({"action_kind": action.kind, **({"action_name": action.name} if action.name else {})})
    if turn.loss_weight == 0:
        step["is_copied_context"] = True  # never in the loss: what ATIF's consumers leave out of training
    if ours:
        step["extra"] = {EXTRA_KEY: ours}
    return step


def _arguments(content: str) -> dict[str, Any]:
    """ToolCall.arguments is an object: the content's, with the exact text kept aside when it is not canonical."""
    try:
        arguments = json.loads(content)
    except ValueError:
        arguments = None
    if isinstance(arguments, dict) and payload_text(arguments) == content:
        return {"arguments": arguments}
    return {"arguments": arguments if isinstance(arguments, dict) else {}, "extra": {EXTRA_KEY: {"content": content}}}


def _tool_definitions(action_space: str) -> list[dict] | None:
    try:
        tools = json.loads(action_space)
    except ValueError:
        return None
    return tools if isinstance(tools, list) and tools and all(isinstance(t, dict) for t in tools) else None


def _parent_of(record: Trajectory) -> str | None:
    try:
        meta = json.loads(record.metadata or "{}")
    except ValueError:
        return None
    parent = ((meta.get("atif") or {}).get("parent") or {}) if isinstance(meta, dict) else {}
    return parent.get("trajectory_id") if isinstance(parent, dict) else None


def write(records: Iterable[Trajectory], path: str | Path) -> int:
    """One trajectory (with its embedded sub-agents): a .json file; several (or a .jsonl path): JSON Lines. A record
    whose parent is written too is embedded in it."""
    records = list(records)
    ids = {r.trajectory_id for r in records}
    children: dict[str, list[Trajectory]] = {}
    roots = []
    for record in records:
        parent = _parent_of(record)
        (children.setdefault(parent, []) if parent in ids and parent != record.trajectory_id else roots).append(record)
    path = Path(path)
    with atomic_write(path, "w") as f:
        if path.suffix == ".json" and len(roots) == 1:
            json.dump(to_atif(roots[0], children), f, ensure_ascii=False, indent=2)
            f.write("\n")
        else:
            for record in roots:
                f.write(json.dumps(to_atif(record, children), ensure_ascii=False) + "\n")
    return len(records)
