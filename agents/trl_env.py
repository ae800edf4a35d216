"""A trajforge suite as TRL's environment: `GRPOTrainer(environment_factory=trl_environment("terminal"), ...)`.

TRL (1.16, experimental there) builds one instance per concurrent rollout, calls `reset(**row)` with the dataset
row (our rows carry `task_id`: `trl_dataset`), appends what it returns (the first observation) to the prompt's last
user message, and offers the instance's public methods as tools: here one method per tool of the suite's action
space (a terminal's `shell` and `keystrokes`, an MCP server's tools, a browser's actions), each taking one step of
a `TextEnvironment` with its own sandbox, real or in a world model. When the model stops calling tools, TRL asks
`get_reward()`: the episode ends there as a final answer and the task's check decides (1 success, 0 otherwise; in
a world model the check runs in it), as in `collect`. The episode's outcome stays on the instance (`outcome`).

`trl` is not imported here: the class is plain Python that TRL inspects."""

import inspect
import keyword
import weakref
from typing import Any, ClassVar

from trajforge.collectors.policies.llm import SYSTEM
from trajforge.collectors.simulation import Simulation
from trajforge.collectors.suite_env import OpenSuite, open_suite
from trajforge.sandboxes.base import Task
from trajforge.schemas.actions import payload_text, write_action
from trajforge.schemas.records import Action

INITIAL_STATE = "Initial state:\n"
RESERVED = ("reset", "get_reward")  # TRL's own names: never tools
JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}  # fmt: skip


class TRLEnvironment:
    """One rollout's environment over a suite opened once per class (`trl_environment` makes the class)."""

    suite: ClassVar[OpenSuite]

    def __init__(self):
        self._environment = self.suite.environment()
        weakref.finalize(self, self._environment.close)  # TRL never closes one: its sandbox goes with it
        self.task_id: str | None = None
        self.outcome: dict | None = None  # how the last episode ended: status, reward, the check's details

    def reset(self, task_id: str, **row) -> str:
        """Start an episode of the suite's task `task_id` (the other columns of the row are TRL's)."""
        self.task_id, self.outcome = task_id, None
        return self._environment.reset(self.suite.task(task_id))

    def get_reward(self) -> float:
        """The episode's reward: its check's verdict, the episode ended here as a final answer if it still ran."""
        if self.outcome is None:
            self._take("")  # no action in the answer: the final answer, which the task's check decides
        return self.outcome["reward"]

    def _take(self, text: str) -> str:
        if self.outcome is not None:
            return f"The episode has ended ({self.outcome['status']}): no action is taken."
        observation, reward, done, info = self._environment.step(text)
        if done:
            self.outcome = {"task_id": self.task_id, "reward": reward, **info}
            ended = f"[the episode ended: {info['status']}{': ' + info['error'] if 'error' in info else ''}]"
            return "\n".join(filter(None, (observation, ended)))
        return observation

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """A tool call as the agent's text (the action codec), stepped as `collect` steps an answer."""
        given = {key: value for key, value in arguments.items() if value is not None}
        return self._take(write_action(Action(kind="tool_call", name=name, content=payload_text(given))))


def tool_method(tool: dict):
    """A method named as the tool, typed and documented from its JSON schema, as TRL and transformers read a
    tool's schema from a Python function (its signature and Google-style docstring)."""
    name, schema = tool["name"], tool.get("input_schema") or {}
    if name in RESERVED or name.startswith("_"):
        raise ValueError(f"the suite's tool {name!r} has a name TRL keeps for itself ({', '.join(RESERVED)}, _...)")
    properties, required = schema.get("properties", {}), set(schema.get("required", ()))
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations, described = {}, []
    for argument, spec in properties.items():
        if not argument.isidentifier() or keyword.iskeyword(argument):
            raise ValueError(f"the tool {name!r} has an argument TRL cannot pass by name: {argument!r}")
        kind = JSON_TYPES.get(spec.get("type"), str)
        annotations[argument] = kind if argument in required else kind | None
        default = inspect.Parameter.empty if argument in required else None
        parameters.append(
            inspect.Parameter(
                argument, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotations[argument]
            )
        )
        described.append(f"    {argument}: {spec.get('description') or spec.get('type', 'value')}")

    def method(self, **arguments) -> str:
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)
    method.__annotations__ = {**annotations, "return": str}
    args = "\n\nArgs:\n" + "\n".join(described) if described else ""
    method.__doc__ = f"{tool.get('description') or name}{args}\n\nReturns:\n    The environment's observation."
    return method


def trl_environment(suite: str, world_model: Simulation | str | None = None, **options) -> type[TRLEnvironment]:
    """The `environment_factory` class of the bundled suite or .yaml `suite`, real or in `world_model` (see
    collectors/suite_env.py `open_suite` for the options: tasks, max_turns, image, command_timeout, and the
    Simulation's settings such as prompt and max_tokens). The suite is opened here, once: Docker started, a
    simulated suite grounded and its world model loaded."""
    opened = open_suite(suite, world_model, run_id="trl-env", **options)
    methods = {tool["name"]: tool_method(tool) for tool in opened.action_space()}
    name = "".join(part.capitalize() for part in opened.suite.name.replace("-", "_").split("_")) or "Suite"
    return type(f"Trajforge{name}Environment", (TRLEnvironment,), {"suite": opened, **methods})


def trl_prompt(task: Task) -> list[dict]:
    """The chat a tool-calling agent starts from, the llm policy's (collectors/policies/llm.py): its system prompt
    with the task, then `Initial state:`, which TRL completes with what reset returns (the first observation)."""
    return [
        {"role": "system", "content": SYSTEM.format(task=task.instruction)},
        {"role": "user", "content": INITIAL_STATE},
    ]


def trl_dataset(environment: type[TRLEnvironment], repeats: int = 1, part: str = "train"):
    """A `datasets.Dataset` of the suite's tasks of `part` for GRPOTrainer (default the training tasks: a trainer
    never sees a validation or test task; `OpenSuite.tasks_in`): `prompt` (`trl_prompt`) and `task_id`, `repeats`
    rows per task."""
    from datasets import Dataset

    tasks = environment.suite.tasks_in(part)
    return Dataset.from_list(
        [{"prompt": trl_prompt(task), "task_id": task.id} for task in tasks for _ in range(repeats)]
    )
