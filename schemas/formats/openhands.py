"""OpenHands event streams (All-Hands-AI/OpenHands, events as `event_to_dict` writes them): a run saved as a .json
list of events (or an object holding them under `history` or `trajectory`), or evaluation output as JSON Lines,
one run a line with its events under `history` (SWE-bench-style runs, such as SWE-rebench's, with `instance_id`).

An event is an action (`action`: run, run_ipython, read, edit, write, browse, browse_interactive, think, message,
finish, ...; its `args`) or an observation (`observation`: run, run_ipython, read, edit, browse, error, ...; its
`content` and `extras`), with an `id`, a `source` (agent, user, environment) and, for an observation, a `cause`:
the id of the action it answers. Import: the first user message is the task; the `system` action's prompt is
kept and its tools are the action space. Each agent action with the observation whose `cause` names it is one
turn: `run` a shell command (with `is_input`, keystrokes), `browse` the browser's `goto`, an MCP call
(`call_tool_mcp`) the tool it names, any other action a tool call named by its `tool_call_metadata` (else by the
action), its arguments the `args` without OpenHands' bookkeeping. A `run` observation's exit code is its
`extras.metadata.exit_code` (OpenHands' -1, "unknown", is none); an `error` observation is an error. The domain
is swe (OpenHands works on repositories), web when the agent only browsed. Kept under `metadata.openhands`: the
source's ids (`instance_id`, as `task_id`: the split keeps a task's runs together; each turn's action and
observation event ids and tool call id), the agent's thoughts, later user messages, the agent's actions nothing
answered (its last message, `finish`). An observation whose `cause` names no event, or a second observation of
one action, rejects the run with the event's path.

Read only: export to OpenHands is not offered.
"""

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from trajforge.schemas.actions import payload_text
from trajforge.schemas.formats import (
    ImportOptions,
    imported_source,
    json_values,
    read_converted,
    refuse_export,
    resolved_status,
)
from trajforge.schemas.jsonl import JsonLine
from trajforge.schemas.records import Trajectory
from trajforge.schemas.system_prompt import EMPTY_ACTION_SPACE
from trajforge.schemas.validation import Problem, ReadResult

# Action arguments that are OpenHands' own bookkeeping, not what the agent asked for.
BOOKKEEPING = frozenset(
    {
        "thought",
        "confirmation_state",
        "is_confirmed",
        "security_risk",
        "blocking",
        "is_static",
        "cwd",
        "hidden",
        "impl_source",
        "kernel_init_code",
        "include_extra",
        "image_urls",
        "wait_for_response",
    }
)
BROWSING = frozenset({"browse", "browse_interactive"})
UNKNOWN_EXIT_CODE = -1


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_values(str(path), json_values(path), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, _runs(values), convert, options)


def _runs(values: Iterable[JsonLine]) -> Iterator[JsonLine]:
    """Each run: a list of events, or an object holding them."""
    for value in values:
        if not value.problems and isinstance(value.value, list):
            value = JsonLine(value.locator, {"history": value.value}, [], value.raw)
        yield value


def _events(value: dict, problems: list[Problem]) -> tuple[str, list]:
    for key in ("history", "trajectory"):
        if isinstance(value.get(key), list):
            return key, value[key]
    kind = "one event, not a run" if "action" in value or "observation" in value else "missing"
    problems.append(Problem("history", f"{kind} (expected a list of events, or an object with `history`)"))
    return "history", []


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    problems: list[Problem] = []
    key, events = _events(value, problems)
    agent_actions, answers, kept = _pair(key, events, problems)
    turns = []
    for i, event in agent_actions:
        if event.get("id") not in answers:
            kept["unanswered"].append({k: event.get(k) for k in ("id", "action", "args")})
            continue
        j, observation = answers[event["id"]]
        turn = {"index": len(turns), "action": _action(event, f"{key}[{i}]", problems)}
        turns.append({**turn, "observation": _observation(observation, f"{key}[{j}]", problems)})
        ids = {"action": event["id"], "observation": observation.get("id"), "tool_call_id": _tool_call_id(event)}
        kept["turn_events"].append({k: v for k, v in ids.items() if v is not None})
    if not turns and not problems:
        problems.append(Problem(key, "no agent action is answered by an observation (`cause`): no turn"))
    if problems:
        return None, problems
    task = kept.pop("task") or [value.get("instruction") or ""]
    return {
        "schema_version": "1",
        "domain": options.domain or _domain(event.get("action") for _, event in agent_actions),
        "source": imported_source("openhands", origin, options),
        "environment": {"name": options.environment or "openhands"},
        "outcome": {"status": _status(value)},
        "task_description": str(task[0]),
        "action_space": kept.pop("action_space"),
        "agent": _agent(value),
        "turns": turns,
        "metadata": json.dumps({"openhands": _kept(value, kept)}, ensure_ascii=False),
    }, []


def _pair(key: str, events: list, problems: list[Problem]) -> tuple[list, dict, dict]:
    """The agent's actions in order, each answered one's observation by action id, and what the rest keeps."""
    ids = {event.get("id") for event in events if isinstance(event, dict)}
    kept: dict[str, Any] = {"task": [], "action_space": EMPTY_ACTION_SPACE, "user_messages": [], "thoughts": []}
    kept.update({"unanswered": [], "turn_events": []})
    agent_actions, answers = [], {}
    for i, event in enumerate(events):
        path = f"{key}[{i}]"
        if not isinstance(event, dict) or not isinstance(event.get("action") or event.get("observation"), str):
            problems.append(Problem(path, "not an event (expected an object with `action` or `observation`)"))
        elif isinstance(event.get("action"), str):
            if event.get("source") != "agent" or event["action"] == "system":
                _other_action(event, kept)
                continue
            agent_actions.append((i, event))
            if isinstance(thought := (event.get("args") or {}).get("thought"), str) and thought:
                kept["thoughts"].append({"event": event.get("id"), "thought": thought})
        elif (cause := event.get("cause")) is not None:
            if cause not in ids:
                problems.append(Problem(f"{path}.cause", f"names no event ({cause!r})"))
            elif cause in answers:
                problems.append(Problem(f"{path}.cause", f"a second observation of action {cause!r}"))
            else:
                answers[cause] = (i, event)
    return agent_actions, answers, kept


def _other_action(event: dict, kept: dict) -> None:
    """A user message (the first is the task) or the system action (prompt and tools); others are not the agent's."""
    args = event.get("args") or {}
    if event["action"] == "system":
        kept["system_prompt"] = args.get("content")
        if isinstance(args.get("tools"), list):
            kept["action_space"] = json.dumps(args["tools"], ensure_ascii=False)
    elif event["action"] == "message" and event.get("source") == "user":
        text = args.get("content", event.get("message"))
        if isinstance(text, str):
            (kept["user_messages"] if kept["task"] else kept["task"]).append(text)


def _tool_call_id(event: dict) -> Any:
    metadata = event.get("tool_call_metadata")
    return metadata.get("tool_call_id") if isinstance(metadata, dict) else None


def _action(event: dict, path: str, problems: list[Problem]) -> dict:
    kind, args = event["action"], event.get("args") or {}
    if not isinstance(args, dict):
        problems.append(Problem(f"{path}.args", "expected an object"))
        return {"kind": "message", "content": ""}
    if kind == "run":
        command = args.get("command")
        if not isinstance(command, str):
            problems.append(Problem(f"{path}.args.command", "missing" if command is None else "expected text"))
        if args.get("is_input"):
            return {"kind": "keystrokes", "content": payload_text({"keystrokes": command})}
        return {"kind": "shell", "content": command or ""}
    if kind == "browse":
        return {"kind": "browser", "name": "goto", "content": payload_text({"url": args.get("url")})}
    if kind == "call_tool_mcp":
        return {"kind": "tool_call", "name": args.get("name"), "content": payload_text(args.get("arguments") or {})}
    metadata = event.get("tool_call_metadata")
    name = (metadata.get("function_name") if isinstance(metadata, dict) else None) or kind
    arguments = {k: v for k, v in args.items() if k not in BOOKKEEPING and v is not None}
    return {"kind": "tool_call", "name": name, "content": payload_text(arguments)}


def _observation(event: dict, path: str, problems: list[Problem]) -> dict:
    content, extras = event.get("content", ""), event.get("extras") or {}
    if not isinstance(content, str):
        problems.append(Problem(f"{path}.content", f"expected text, got {type(content).__name__}"))
    observation: dict[str, Any] = {"content": content if isinstance(content, str) else "", "format": "text"}
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
    exit_code = meta.get("exit_code", extras.get("exit_code"))  # extras.exit_code: event streams before 0.14
    if event["observation"] == "run" and isinstance(exit_code, int) and exit_code != UNKNOWN_EXIT_CODE:
        observation["exit_code"] = exit_code
    if event["observation"] == "error":
        observation["is_error"] = True
    where = {"cwd": meta.get("working_dir"), "url": extras.get("url")}
    if where := {k: v for k, v in where.items() if isinstance(v, str) and v}:
        observation["metadata"] = json.dumps(where, ensure_ascii=False)
    return observation


def _domain(actions: Iterable[Any]) -> str:
    kinds = set(actions)
    return "web" if kinds & BROWSING and not kinds - BROWSING - {"message", "finish", "think"} else "swe"


def _status(value: dict) -> str:
    """success or failure when the run says whether it resolved its task (`resolved`, or a test report's)."""
    report = (value.get("test_result") or {}).get("report") if isinstance(value.get("test_result"), dict) else None
    return resolved_status(value.get("resolved", (report or {}).get("resolved") if isinstance(report, dict) else None))


def _agent(value: dict) -> dict:
    meta = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    llm = meta.get("llm_config") if isinstance(meta.get("llm_config"), dict) else {}
    model = llm.get("model")
    return {"name": str(meta.get("agent_class") or "openhands"), "model": model if isinstance(model, str) else None}


def _kept(value: dict, kept: dict) -> dict:
    if value.get("instance_id") is not None:
        kept["task_id"] = value["instance_id"]  # the SWE instance: its runs stay on one side of the split
    return {k: v for k, v in kept.items() if v not in (None, [], "")}


def write(records: Iterable[Trajectory], path: str | Path) -> NoReturn:
    refuse_export("openhands")
