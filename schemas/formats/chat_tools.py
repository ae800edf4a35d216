"""OpenAI chat-completion messages of an agent that calls tools, as the OpenHands trajectories of SWE-rebench and
SWE-ZERO on the Hugging Face Hub hold them (one run a row): the messages (`messages`, or `trajectory` as those sets
name them) with the system prompt, the user's task, assistant messages whose `tool_calls` are the agent's actions
and `tool` messages (`tool_call_id`) holding what each call returned; `tools`, the tool definitions it was offered.

Import: the first user message is the task; each tool call with the tool message that answers it (by
`tool_call_id`, else the oldest call not yet answered) is one `tool_call` turn, its arguments the call's JSON
object. `tools` is the action space. `resolved` (SWE-bench style) gives the outcome; the domain is swe for a run
with an `instance_id`, else other. Kept under `metadata.chat_tools`: the agent's system prompt, its text beside its
calls (thoughts) and its messages with none (a last answer), later user messages, calls nothing answered, each
turn's `tool_call_id`, and the run's ids (`instance_id` as the task: a task's runs stay on one side of the split;
`trajectory_id`, `exit_status`). A tool message that answers no call, a call with no function name or arguments
that are not a JSON object, or an unknown role rejects the run with the message's path.

The `chat` format reads a conversation the other way round (the user's message is the action, the assistant's
answer the observation: a world model's view of a chat); a run of tool calls is an agent's. Import only.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
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
    text_content,
)
from trajforge.schemas.jsonl import JsonLine
from trajforge.schemas.system_prompt import EMPTY_ACTION_SPACE
from trajforge.schemas.validation import Problem, ReadResult

NAME = "chat-tools"
RUN_IDS = ("trajectory_id", "exit_status")


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_values(str(path), json_values(path), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, values, convert, options)


def write(records: Iterable, path: str | Path) -> NoReturn:
    refuse_export(NAME)


@dataclass
class _Run:
    """The walk through the messages: calls waiting for their result, the turns so far, what is kept aside."""

    problems: list[Problem] = field(default_factory=list)
    turns: list[dict] = field(default_factory=list)
    pending: dict[str, dict] = field(default_factory=dict)  # tool_call_id (or the call's path) -> its action
    task: str | None = None
    kept: dict[str, Any] = field(default_factory=lambda: {k: [] for k in ("thoughts", "answers", "user_messages")})

    def add(self, path: str, message: Any) -> None:
        if not isinstance(message, dict):
            self.problems.append(Problem(path, f"expected an object, got {type(message).__name__}"))
            return
        role, text = message.get("role"), self._text(path, message)
        if role == "system":
            self.kept.setdefault("agent_system_prompt", text)
        elif role == "user" and self.task is None:
            self.task = text
        elif role == "user":
            self.kept["user_messages"].append(text)
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if text:
                self.kept["thoughts" if calls else "answers"].append({"message": path, "text": text})
            for j, call in enumerate(calls if isinstance(calls, list) else []):
                self._call(f"{path}.tool_calls[{j}]", call)
        elif role == "tool":
            self._answer(path, message.get("tool_call_id"), text)
        else:
            self.problems.append(Problem(f"{path}.role", f"unsupported role {role!r}"))

    def _text(self, path: str, message: dict) -> str:
        content = message.get("content")
        if content is None and message.get("role") in ("assistant", "tool"):
            return ""  # an assistant message that only calls tools
        return text_content(content, f"{path}.content", self.problems)

    def _call(self, path: str, call: Any) -> None:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            self.problems.append(Problem(f"{path}.function.name", "missing"))
            return
        arguments = function.get("arguments") or "{}"
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = None
        if not isinstance(arguments, dict):
            self.problems.append(Problem(f"{path}.function.arguments", "not a JSON object"))
            return
        ident = call.get("id")
        self.pending[ident if isinstance(ident, str) and ident else path] = {
            "kind": "tool_call",
            "name": name,
            "content": payload_text(arguments),
        }

    def _answer(self, path: str, ident: Any, text: str) -> None:
        if ident is None and self.pending:
            ident = next(iter(self.pending))
        if ident not in self.pending:
            self.problems.append(Problem(f"{path}.tool_call_id", f"answers no call ({ident!r})"))
            return
        observation = {"content": text, "format": "text"}
        self.turns.append({"index": len(self.turns), "action": self.pending.pop(ident), "observation": observation})
        self.kept.setdefault("turn_tool_call_ids", []).append(ident)


def _messages(value: dict, problems: list[Problem]) -> tuple[str, list]:
    for key in ("messages", "trajectory"):
        if isinstance(value.get(key), list):
            return key, value[key]
    problems.append(Problem("messages", "missing (expected `messages` or `trajectory`: a list of messages)"))
    return "messages", []


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    problems: list[Problem] = []
    key, messages = _messages(value, problems)
    run = _Run(problems)
    for i, message in enumerate(messages):
        run.add(f"{key}[{i}]", message)
    if not run.turns and not problems:
        problems.append(Problem(key, "no tool call answered by a tool message: no turn"))
    if problems:
        return None, problems
    tools = value.get("tools")
    return {
        "schema_version": "1",
        "domain": options.domain or ("swe" if value.get("instance_id") else "other"),
        "source": imported_source(NAME, origin, options),
        "environment": {"name": options.environment or str(value.get("repo") or "imported")},
        "outcome": {"status": resolved_status(value.get("resolved"))},
        "task_description": run.task or "",
        "action_space": json.dumps(tools, ensure_ascii=False) if isinstance(tools, list) else EMPTY_ACTION_SPACE,
        "agent": {"name": "unknown"},
        "turns": run.turns,
        "metadata": json.dumps({"chat_tools": _kept(value, run)}, ensure_ascii=False),
    }, []


def _kept(value: dict, run: _Run) -> dict:
    kept = {**run.kept, "unanswered_calls": list(run.pending.values())}
    if value.get("instance_id") is not None:
        kept["task_id"] = value["instance_id"]  # the SWE instance: its runs stay on one side of the split
    kept.update({k: value[k] for k in RUN_IDS if value.get(k) is not None})
    return {k: v for k, v in kept.items() if v not in (None, [], "")}
