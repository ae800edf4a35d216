"""The Agent Data Protocol's standardized trajectories (neulab/agent-data-protocol, schema 1.x): `id`, `content`
(the actions and observations in order, each named by its `class_`) and `details`; a .json file (one trajectory
or a list of them) or JSON Lines (one a line, as a Hugging Face dataset's rows).

Import: the observations before the first action are the start: the user's text is the task, the environment's
the initial state. Each action with the observation that answers it is one turn: the observation whose
`tool_call_id` names the action (ADP 1.2), else the next observation. A `code_action` in a shell language is a
shell command, in any other language a tool call named after it with arguments {"code": ...}; an `api_action`
is a tool call (`function`, `kwargs`), a browser action in a web trajectory; a `message_action` is a message. A
`text_observation` is text, a `json_observation` JSON, a `web_observation` its accessibility tree (format aria)
or else its HTML, with its URL in the observation's metadata. The domain: web with a web observation, else
terminal with a code action, else mcp with an API action, else other. `available_apis` (names only) are the
tools the action space declares. Kept under `metadata.adp`: the source's ids (`id`, each turn's content positions
and tool_call_id), `details`, the agent's reasoning (`description`, `reasoning_content`), an action nothing
answers and an observation that answers nothing. What cannot be read (an unknown `class_`, an image, a missing or
mistyped field) rejects the trajectory, with the field's path.

Read only: export to ADP is not offered.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from trajforge.schemas.actions import payload_text
from trajforge.schemas.formats import ImportOptions, imported_source, json_values, read_converted, refuse_export
from trajforge.schemas.jsonl import JsonLine
from trajforge.schemas.records import Trajectory
from trajforge.schemas.system_prompt import EMPTY_ACTION_SPACE
from trajforge.schemas.validation import Problem, ReadResult

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "commandline"})
ACTIONS = ("api_action", "code_action", "message_action")
USER_SOURCES = ("user", "user_msg")  # `user_msg` in ADP 1.0


def read(path: str | Path, options: ImportOptions) -> Iterator[ReadResult]:
    return read_values(str(path), json_values(path), options)


def read_values(source: str, values: Iterable[JsonLine], options: ImportOptions) -> Iterator[ReadResult]:
    return read_converted(source, _trajectories(values), convert, options)


def _trajectories(values: Iterable[JsonLine]) -> Iterator[JsonLine]:
    """Each trajectory of the values: an object, or each item of a list (a .json file may hold one)."""
    for value in values:
        if value.problems or not isinstance(value.value, list):
            yield value
        elif not value.value:
            yield JsonLine(value.locator, None, [Problem("", "an empty list: no trajectories")], value.raw)
        else:
            for i, item in enumerate(value.value):
                yield JsonLine(f"{value.locator} [{i}]", item, [], json.dumps(item, ensure_ascii=False).encode())


@dataclass
class _Reading:
    """What the content says so far: the start, the actions waiting for an observation, the turns."""

    web: bool  # a web trajectory: its API actions are browser actions
    problems: list[Problem] = field(default_factory=list)
    task: list[str] = field(default_factory=list)
    initial: list[str] = field(default_factory=list)
    pending: list[tuple[int, dict, Any]] = field(default_factory=list)  # (position, action, tool_call_id)
    turns: list[tuple[int, dict, dict]] = field(default_factory=list)  # (action position, turn, source ids)
    kept: dict[str, list] = field(default_factory=lambda: {"reasoning": [], "unpaired": []})

    def action(self, i: int, item: dict, action: dict) -> None:
        self.pending.append((i, action, item.get("tool_call_id")))
        thoughts = {k: item[k] for k in ("description", "reasoning_content") if isinstance(item.get(k), str)}
        if thoughts:
            self.kept["reasoning"].append({"content_index": i, **thoughts})

    def observation(self, i: int, item: dict, observation: dict) -> None:
        ident = item.get("tool_call_id")
        if ident is not None:
            match = [p for p in self.pending if p[2] == ident]
            if not match:
                self.problems.append(Problem(f"content[{i}].tool_call_id", f"no earlier action has {ident!r}"))
                return
            answered = match[0]
        elif self.pending:
            answered = self.pending[-1]
        elif not self.turns:
            start = self.task if item.get("source") in USER_SOURCES else self.initial
            start.append(observation["content"])
            return
        else:
            self.kept["unpaired"].append({"content_index": i, **item})
            return
        self.pending.remove(answered)
        position, action, ident = answered
        ids = {"action": position, "observation": i, **({"tool_call_id": ident} if ident is not None else {})}
        self.turns.append((position, {"action": action, "observation": observation}, ids))


def convert(value: dict, origin: str, options: ImportOptions) -> tuple[dict | None, list[Problem]]:
    content = value.get("content")
    state = _Reading(web=isinstance(content, list) and any(_class(item) == "web_observation" for item in content))
    _header_problems(value, state.problems)
    for i, item in enumerate(content if isinstance(content, list) else []):
        _read_item(i, item, state)
    if not state.turns and not state.problems:
        state.problems.append(Problem("content", "no action is answered by an observation: no turn to learn from"))
    if state.problems:
        return None, state.problems
    ordered = sorted(state.turns, key=lambda t: t[0])
    kept = {"id": value["id"], "schema_version": value.get("schema_version"), "turn_sources": [t[2] for t in ordered]}
    kept["unanswered"] = [{"content_index": i, **content[i]} for i, _, _ in state.pending]
    kept.update({k: v for k, v in state.kept.items() if v})
    kept.update({k: value[k] for k in ("details",) if value.get(k)})
    return {
        "schema_version": "1",
        "domain": options.domain or _domain(content),
        "source": imported_source("adp", origin, options),
        "environment": {"name": options.environment or "adp"},
        "task_description": "\n\n".join(state.task),
        "initial_state": "\n\n".join(state.initial),
        "action_space": _action_space(value.get("available_apis")),
        "agent": {"name": "unknown"},
        "turns": [{"index": n, **turn} for n, (_, turn, _) in enumerate(ordered)],
        "metadata": json.dumps({"adp": {k: v for k, v in kept.items() if v is not None and v != []}}),
    }, []


def _header_problems(value: dict, problems: list[Problem]) -> None:
    version = value.get("schema_version")
    if version is not None and not (isinstance(version, str) and version.startswith("1.")):
        problems.append(Problem("schema_version", f"unsupported ADP schema version {version!r} (accepted: 1.x)"))
    if not isinstance(value.get("id"), str | int) or isinstance(value.get("id"), bool):
        problems.append(Problem("id", "missing" if value.get("id") is None else "expected a string"))
    if not isinstance(value.get("content"), list):
        problems.append(Problem("content", "missing" if value.get("content") is None else "expected a list"))


def _action_space(apis: Any) -> str:
    """`available_apis` (names only, no schemas) as the tools declared, or none."""
    if not isinstance(apis, list) or not apis or not all(isinstance(name, str) for name in apis):
        return EMPTY_ACTION_SPACE
    return json.dumps([{"name": name} for name in apis])


def _class(item: Any) -> Any:
    return item.get("class_") if isinstance(item, dict) else None


def _domain(content: list) -> str:
    classes = {_class(item) for item in content}
    for cls, domain in (("web_observation", "web"), ("code_action", "terminal"), ("api_action", "mcp")):
        if cls in classes:
            return domain
    return "other"


def _read_item(i: int, item: Any, state: _Reading) -> None:
    path = f"content[{i}]"
    if not isinstance(item, dict):
        state.problems.append(Problem(path, f"expected an object, got {type(item).__name__}"))
        return
    cls = item.get("class_")
    reader = READERS.get(cls)
    if reader is None:
        why = "images are not read" if cls == "image_observation" else f"unknown class_ {cls!r}"
        state.problems.append(Problem(f"{path}.class_", why))
        return
    before = len(state.problems)
    read_item = reader(item, path, state)
    if len(state.problems) > before:
        return
    (state.action if cls in ACTIONS else state.observation)(i, item, read_item)


def _text(item: dict, key: str, path: str, problems: list[Problem], required: bool = True) -> str | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        problems.append(
            Problem(f"{path}.{key}", "missing" if value is None else f"expected text, got {type(value).__name__}")
        )
        return None
    return value


def _api_action(item: dict, path: str, state: _Reading) -> dict:
    function = _text(item, "function", path, state.problems)
    kwargs = item.get("kwargs")
    if not isinstance(kwargs, dict):
        state.problems.append(Problem(f"{path}.kwargs", "missing" if kwargs is None else "expected an object"))
    return {"kind": "browser" if state.web else "tool_call", "name": function, "content": payload_text(kwargs)}


def _code_action(item: dict, path: str, state: _Reading) -> dict:
    language, code = (_text(item, key, path, state.problems) for key in ("language", "content"))
    if language is not None and language.lower() in SHELL_LANGUAGES:
        return {"kind": "shell", "content": code}
    return {"kind": "tool_call", "name": language, "content": payload_text({"code": code})}


def _message_action(item: dict, path: str, state: _Reading) -> dict:
    return {"kind": "message", "content": _text(item, "content", path, state.problems)}


def _text_observation(item: dict, path: str, state: _Reading) -> dict:
    return _observation(item, _text(item, "content", path, state.problems), "text")


def _json_observation(item: dict, path: str, state: _Reading) -> dict:
    if not isinstance(item.get("content"), dict):
        state.problems.append(Problem(f"{path}.content", "expected an object"))
    return _observation(item, payload_text(item.get("content")), "json")


def _web_observation(item: dict, path: str, state: _Reading) -> dict:
    axtree, html = (_text(item, key, path, state.problems, required=False) for key in ("axtree", "html"))
    if not axtree and not html:
        state.problems.append(Problem(path, "a web observation with neither axtree nor html: nothing to read"))
    url = _text(item, "url", path, state.problems, required=False)
    return _observation(item, axtree or html or "", "aria" if axtree else "html", url=url)


def _observation(item: dict, content: str | None, fmt: str, **meta: Any) -> dict:
    meta = {k: v for k, v in {**meta, "reward": item.get("reward")}.items() if v is not None}
    return {"content": content, "format": fmt, **({"metadata": json.dumps(meta, ensure_ascii=False)} if meta else {})}


READERS = {
    "api_action": _api_action,
    "code_action": _code_action,
    "message_action": _message_action,
    "text_observation": _text_observation,
    "json_observation": _json_observation,
    "web_observation": _web_observation,
}


def write(records: Iterable[Trajectory], path: str | Path) -> NoReturn:
    refuse_export("adp")
