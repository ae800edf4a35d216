"""A trajforge suite served as an OpenEnv environment (`trajforge env-serve`): OpenEnv's own server (openenv-core's
`create_fastapi_app`: WebSocket sessions at /ws, /reset, /step, /state, /schema, /health), so its clients
(`GenericEnvClient`, `EnvClient` subclasses, the trainers that integrate them) drive it as they drive any OpenEnv
environment.

Each session is one `SuiteSession`: a `TextEnvironment` over a sandbox of its own (a container, an MCP server, a
browser; or a simulated environment asking the shared world model), so a session that dies, or whose sandbox is
killed, takes no other session's state with it.

- reset(task_id=..., seed=...): an episode of that task (any of the suite's), else of task number `seed` (default
  0) of the served part: the training tasks, as agent-rl's, unless the server was given its tasks by name.
  The observation: `text` (the first observation), `instruction`, `task_id`, `tools` (the action space), `prompt`
  (the chat a text agent starts from, as trajforge's own agents act: training/agent_render.py `agent_messages`;
  each step's `text` is the next user message).
- step({"text": answer}) reads the agent's answer with the action codec, as `collect` does; or
  step({"tool": name, "arguments": {...}}) calls a tool. `done`, `reward` (the check's verdict when it ends: 1 or 0),
  `status` (running, success, failure, timeout, agent_error, infra_error...), `error`, `check`.
- state: `episode_id`, `step_count`, `task_id`, `status`, `sandbox` (alive, or why it is gone).

A sandbox that dies under an episode (its container killed, out of memory) ends that episode as `infra_error`,
saying so; `reset` starts another in a new one. A sandbox the server closed (the session idle past
`--idle-timeout`, or the server stopping) answers every later message with an error that says so: open a new
session. openenv-core is imported here, so only by what serves (pipelines/commands/env_serve.py)."""

import weakref
from typing import Any, ClassVar

from openenv.core.env_server import Action, ConcurrencyConfig, Environment, Observation, State, create_fastapi_app
from pydantic import Field

from trajforge.collectors.suite_env import OpenSuite
from trajforge.collectors.text_env import TextEnvironment
from trajforge.schemas.actions import payload_text, write_action
from trajforge.schemas.records import Action as TrajforgeAction
from trajforge.training.agent_render import agent_messages


class SuiteAction(Action):
    text: str | None = Field(default=None, description="The agent's answer, read with trajforge's action codec.")
    tool: str | None = Field(default=None, description="Or: the name of a tool to call.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool call's arguments.")


class SuiteObservation(Observation):
    text: str = Field(default="", description="What the environment answered (at reset: the first observation).")
    status: str = Field(default="running", description="running, or how the episode ended.")
    task_id: str | None = None
    instruction: str | None = None
    tools: list[dict] | None = Field(default=None, description="At reset: the action space (name, input_schema).")
    prompt: list[dict] | None = Field(default=None, description="At reset: the chat a text agent starts from.")
    error: str | None = None
    check: dict | None = Field(default=None, description="When the check decided: how.")


class SandboxClosed(RuntimeError):
    """A message to a session whose sandbox the server has closed."""


class SuiteSession(Environment[SuiteAction, SuiteObservation, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own sandbox
    suite: ClassVar[OpenSuite]
    part: ClassVar[str] = "train"
    idle_timeout: ClassVar[float | None] = None

    def __init__(self):
        super().__init__()
        self._environment: TextEnvironment = self.suite.environment()
        self._closer = weakref.finalize(self, self._environment.close)  # the server stopping closes it too
        self._state = State(step_count=0, task_id=None, status="no episode yet")
        self._ended: dict | None = None
        self._closed: str | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, **kwargs):
        self._alive()
        task = self.suite.task(task_id) if task_id is not None else self.suite.task_numbered(seed or 0, self.part)
        first = self._environment.reset(task)
        self._state = State(episode_id=episode_id, step_count=0, task_id=task.id, status="running")
        self._ended = None
        tools = self._environment.tools
        prompt = agent_messages(task.instruction, tools, initial_state=first)
        return SuiteObservation(text=first, task_id=task.id, instruction=task.instruction, tools=tools, prompt=prompt)

    def step(self, action: SuiteAction, timeout_s: float | None = None, **kwargs) -> SuiteObservation:
        self._alive()
        if self._state.task_id is None:
            raise RuntimeError("no episode yet: send reset first")
        if self._ended is not None:
            raise RuntimeError(
                f"the episode of {self._state.task_id} has ended ({self._ended['status']}"
                f"{': ' + self._ended['error'] if 'error' in self._ended else ''}): send reset to start another"
            )
        observation, reward, done, info = self._environment.step(answer_text(action))
        self._state.step_count += 1
        self._state.status = info["status"]
        if done:
            self._ended = info
        return SuiteObservation(
            text=observation, done=done, reward=reward if done else 0.0, status=info["status"],
            task_id=self._state.task_id, error=info.get("error"), check=info.get("check"),
        )  # fmt: skip

    @property
    def state(self) -> State:
        self._state.sandbox = self._closed or "open"
        return self._state

    def close(self) -> None:
        if self._closed is None:
            after = f" (idle past --idle-timeout {self.idle_timeout:g}s," if self.idle_timeout else " ("
            self._closed = f"closed by the server{after} or the server stopping): open a new session"
        self._closer()

    def _alive(self) -> None:
        if self._closed is not None:
            raise SandboxClosed(f"this session's sandbox was {self._closed}")


def answer_text(action: SuiteAction) -> str:
    """The action as the agent's text: its `text`, or its tool call written by the action codec."""
    if action.tool:
        call = TrajforgeAction(kind="tool_call", name=action.tool, content=payload_text(action.arguments))
        return write_action(call)
    if action.text is None:
        raise ValueError('an action is {"text": "<the agent\'s answer>"} or {"tool": NAME, "arguments": {...}}')
    return action.text


def openenv_app(opened: OpenSuite, max_sessions: int, idle_timeout: float | None = None, part: str = "train"):
    """OpenEnv's FastAPI app over the suite: at most `max_sessions` sessions at once, each closed (its sandbox with
    it) after `idle_timeout` seconds without a message; a reset by seed draws from the suite's `part`
    (OpenSuite.tasks_in)."""
    opened.tasks_in(part)  # a part without tasks is refused before the server starts
    session = type("SuiteSession", (SuiteSession,), {"suite": opened, "part": part, "idle_timeout": idle_timeout})
    concurrency = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout)
    return create_fastapi_app(session, SuiteAction, SuiteObservation, concurrency_config=concurrency)
