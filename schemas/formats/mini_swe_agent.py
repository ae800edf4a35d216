"""mini-swe-agent trajectories (`.traj.json`, `trajectory_format` mini-swe-agent-1 or 1.x), as `mini` and its batch
runs save them: the chat the agent had (`messages`) and `info` (exit status, submission, model stats, the run's
config).

Import: the first user message is the task (the agent's instance prompt, which holds it); each bash command an
agent message issued, with the output the next observation message holds, is one shell turn. mini-swe-agent 2 keeps
both apart from the chat text (`extra.actions`; `extra.raw_output` and `extra.returncode`) whatever the model's API
(text, tool calls, responses); version 1 kept only the text, so the command is what the run's `action_regex` finds
in the agent's message and the output is read back from the rendered `<returncode>`/`<output>` template. What has no
place in a turn (the agent's system prompt, a command the run never answered such as the final submit, format
errors and interruptions, the exit status and submission) is kept under `metadata.mini_swe_agent`, with the
instance id (the batch's `instance_id`, else the file's name) and the run (the folder above the instance's folder,
in a batch run's layout).
"""

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
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

NAME = "mini-swe-agent"
SUFFIXES = (".traj.json",)
V1_ACTION_REGEX = r"```bash\s*\n(.*?)\n```"  # mini-swe-agent 1's default, when the file's config names none
RENDERED_OUTPUT = re.compile(r"<returncode>(-?\d+)</returncode>\s*<output>\n?(.*)</output>\s*$", re.DOTALL)


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(str(path), json_values(path), partial(convert, folders=folders_above(path)), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, values, convert, options)


def write(records: Iterable, path: str | Path) -> NoReturn:
    refuse_export(NAME)


@dataclass
class _Chat:
    """The walk through `messages`: commands waiting for their output, the turns so far, what is kept aside."""

    action_regex: str
    problems: list[Problem] = field(default_factory=list)
    turns: list[dict] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    task: str | None = None
    kept: dict[str, Any] = field(default_factory=lambda: {"unanswered_actions": [], "interruptions": []})

    def add(self, i: int, message: Any) -> None:
        path = f"messages[{i}]"
        if not isinstance(message, dict):
            self.problems.append(Problem(path, f"expected an object, got {type(message).__name__}"))
            return
        extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
        role = message.get("role")
        if "actions" in extra:
            self._issue(self._v2_actions(extra["actions"], f"{path}.extra.actions"))
        elif "interrupt_type" in extra:
            self.kept["interruptions"].append(extra["interrupt_type"])
        elif "raw_output" in extra or "returncode" in extra:
            self._answer_v2(extra, f"{path}.extra")
        elif role == "exit":
            self.kept.update({k: extra.get(k) for k in ("exit_status", "submission")})
        elif role == "system":
            self.kept["agent_system_prompt"] = text_content(message.get("content"), f"{path}.content", self.problems)
        elif role == "user" and self.task is None:
            self.task = text_content(message.get("content"), f"{path}.content", self.problems)
        elif role == "assistant":  # mini-swe-agent 1: the command is in the text
            content = text_content(message.get("content"), f"{path}.content", self.problems)
            found = re.findall(self.action_regex, content, re.DOTALL)
            self._issue([found[0].strip()] if len(found) == 1 else [])
        elif role == "user" and self.pending:
            self._answer_v1(text_content(message.get("content"), f"{path}.content", self.problems))

    def _v2_actions(self, actions: Any, path: str) -> list[str]:
        if not isinstance(actions, list):
            self.problems.append(Problem(path, f"expected a list, got {type(actions).__name__}"))
            return []
        commands = [a.get("command") if isinstance(a, dict) else None for a in actions]
        for j, command in enumerate(commands):
            if not isinstance(command, str):
                self.problems.append(Problem(f"{path}[{j}].command", "missing" if command is None else "not text"))
        return [c for c in commands if isinstance(c, str)]

    def _issue(self, commands: list[str]) -> None:
        self.kept["unanswered_actions"] += self.pending
        self.pending = commands

    def _answer_v2(self, extra: dict, path: str) -> None:
        output, code, exception = extra.get("raw_output", ""), extra.get("returncode"), extra.get("exception_info")
        if not isinstance(output, str):
            self.problems.append(Problem(f"{path}.raw_output", f"expected text, got {type(output).__name__}"))
        if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
            self.problems.append(Problem(f"{path}.returncode", f"expected an integer, got {code!r}"))
        if not self.pending:
            self.problems.append(Problem(path, "an output with no command before it"))
            return
        detail = {"exception_info": exception} if exception else {}
        self.turns.append(shell_turn(len(self.turns), self.pending.pop(0), output, code, **detail))

    def _answer_v1(self, content: str) -> None:
        rendered = RENDERED_OUTPUT.search(content)
        output, code = (rendered.group(2), int(rendered.group(1))) if rendered else (content, None)
        self.turns.append(shell_turn(len(self.turns), self.pending.pop(0), output, code))


def convert(
    value: dict, origin: str, options: ImportOptions, folders: tuple[str, ...] = ()
) -> tuple[dict | None, list[Problem]]:
    """`folders`: those the file lies in, nearest first (a batch run's RUN/INSTANCE/)."""
    version = value.get("trajectory_format")
    messages = value.get("messages")
    info = object_field(value, "info")
    config = object_field(info, "config")
    regex = object_field(config, "agent").get("action_regex") or object_field(config, "model").get("action_regex")
    chat = _Chat(regex or V1_ACTION_REGEX)
    if not isinstance(version, str) or not version.startswith("mini-swe-agent-1"):
        shown = "missing" if version is None else f"expected mini-swe-agent-1.x, got {version!r}"
        chat.problems.append(Problem("trajectory_format", shown))
    if not isinstance(messages, list):
        chat.problems.append(Problem("messages", "missing" if messages is None else "expected a list"))
        messages = []
    for i, message in enumerate(messages):
        chat.add(i, message)
    chat.kept["unanswered_actions"] += chat.pending
    if not chat.turns and not chat.problems:
        chat.problems.append(Problem("messages", "no command with its output: nothing to import"))
    if chat.problems:
        return None, chat.problems
    return _record(value, origin, options, chat, info, config, folders), []


def _record(
    value: dict, origin: str, options: ImportOptions, chat: _Chat, info: dict, config: dict, folders: tuple
) -> dict:
    instance = str(value.get("instance_id") or origin.removesuffix(".traj.json"))
    nearest, above = (*folders, None, None)[:2]
    kept = {
        "instance_id": instance,
        "run": above if nearest == instance else None,
        "trajectory_format": value["trajectory_format"],
        "mini_version": info.get("mini_version"),
        "model_stats": info.get("model_stats"),
        "exit_status": chat.kept.get("exit_status", info.get("exit_status")),
        "submission": chat.kept.get("submission", info.get("submission")),
        **{k: v for k, v in chat.kept.items() if v and k not in ("exit_status", "submission")},
    }
    kind = str(config.get("environment_type") or "unknown").rsplit(".", 1)[-1]
    return {
        "schema_version": "1",
        "domain": options.domain or "swe",
        "source": imported_source(NAME, origin, options),
        "environment": {"name": options.environment or str(object_field(config, "environment").get("image") or kind)},
        "task_description": chat.task or "",
        "action_space": "[]",  # the file does not say which tools the model was offered
        "agent": {"name": NAME, "model": object_field(config, "model").get("model_name")},
        "turns": chat.turns,
        "metadata": json.dumps(
            {"mini_swe_agent": {k: v for k, v in kept.items() if v is not None}}, ensure_ascii=False
        ),
    }
