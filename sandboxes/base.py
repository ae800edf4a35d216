"""The one interface every environment implements, and how an episode can end early."""

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from trajforge.schemas.records import Action, Observation

if TYPE_CHECKING:
    from trajforge.sandboxes.starting_state import StartingState


class ShellCheck(BaseModel):
    """Success when this bash command exits 0 in the task's sandbox (terminal)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    command: str


class ToolCheck(BaseModel):
    """Success when calling `tool` with `arguments` returns no error and its text contains `contains` (MCP)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tool: str
    arguments: dict = {}
    contains: str = ""


class PageCheck(BaseModel):
    """Success when the current page's URL and accessibility tree contain these (browser)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url_contains: str = ""
    contains: str = ""


Check = ShellCheck | ToolCheck | PageCheck


@dataclass(frozen=True)
class Task:
    """What an episode starts from. Suites load these from YAML (collectors/suites)."""

    id: str
    instruction: str
    domain: str = "terminal"
    image: str | None = None  # None: the sandbox base image
    setup: tuple[str | Action, ...] = ()  # commands (or tool calls) run before the first turn, not recorded
    files: dict[str, str] = field(default_factory=dict)  # workspace-relative path -> content
    actions: tuple[Action, ...] = ()  # scripted actions, for the scripted policy
    check: Check | None = None  # how the environment decides success; the kind of check fits the environment
    vocabulary: tuple[str, ...] = ()  # words that seed the explorer policy
    config: dict[str, Any] = field(default_factory=dict)
    family: str | None = None  # the task family that generated it (collectors/families); None: written by hand


def tool_check_action(check: ToolCheck) -> Action:
    """A tool check as the tool call it makes."""
    return Action(kind="tool_call", name=check.tool, content=json.dumps(check.arguments, ensure_ascii=False))


def json_arguments(action: Action) -> dict | None:
    """An action's content as a JSON object (empty content: no arguments); None when it is not one."""
    try:
        arguments = json.loads(action.content or "{}")
    except ValueError:
        return None
    return arguments if isinstance(arguments, dict) else None


class EpisodeEnded(Exception):
    """The episode cannot go on. `status` says whose fault (agent_error, infra_error, task_error)."""

    status = "agent_error"

    def __init__(self, reason: str, observation: Observation | None = None):
        super().__init__(reason)
        self.reason = reason
        self.observation = observation  # what the last action produced, if anything


class ResourceLimitExceeded(EpisodeEnded):
    """The agent hit a sandbox limit (processes, memory, disk): contained, labelled, the agent's fault."""


class InfraError(EpisodeEnded):
    """The environment broke (container died, daemon error): never a training target; the runner retries."""

    status = "infra_error"


class TaskSetupError(EpisodeEnded):
    """The task itself is broken (a setup command or call failed): the episode never started. Neither the agent's
    fault nor the infrastructure's: a task error, never retried (it would fail the same way), never a target."""

    status = "task_error"


class Sandbox(ABC):
    """One environment an episode runs in (Docker terminal, MCP server, browser, world model); its trajectory's
    `environment` record is what `describe()` returns."""

    name: str = "environment"
    source_kind: str = "collected"  # a world model standing in for the environment says "simulated"
    _check_turn: dict = {}  # the last `check` as a turn (schemas/check_turn.py), set by environments that record it

    @abstractmethod
    def reset(self, task: Task) -> Observation:
        """Start a fresh episode of `task`; returns the initial state."""

    @abstractmethod
    def step(self, action: Action) -> Observation:
        """Apply one action; raises EpisodeEnded when the episode cannot go on."""

    @abstractmethod
    def action_space(self) -> list[dict]:
        """Tool schemas or an action grammar, as stored in a trajectory's `action_space`."""

    def check(self, task: Task) -> bool | None:
        """Whether the task succeeded; None when the task has no check."""
        return None

    def check_details(self) -> dict:
        """How the last `check` decided (the trajectory's `outcome.verifier`), with the check as a turn where the
        environment recorded one (`_check_turn`, schemas/check_turn.py)."""
        return {"decided_by": "the task's check, in the real environment"} | self._check_turn

    def starting_state(self, task: Task) -> "StartingState | None":
        """What the episode `reset` just started holds, as a world model must be told it (its rendering is the
        trajectory's `initial_state`); None: the first observation says it all."""
        return None

    def describe(self) -> dict:
        """The `environment` part of a trajectory record."""
        return {"name": self.name}

    def simulation_instruction(self) -> str:
        """What a world model must know to simulate this environment as it behaved (e.g. injected faults)."""
        return ""

    def episode_metadata(self) -> dict:
        """What the trajectory's metadata records of this episode beyond the task (e.g. its control spec)."""
        return {}

    @abstractmethod
    def close(self) -> None:
        """Release everything the episode held."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class WrappedSandbox(Sandbox):
    """An environment around another one (fault injection, per-episode control): every method is the inner
    environment's unless the wrapper overrides it, so a method added to Sandbox reaches through every wrapper."""

    def __init__(self, env: Sandbox):
        self.env = env
        self.name, self.source_kind = env.name, env.source_kind

    def reset(self, task: Task) -> Observation:
        return self.env.reset(task)

    def step(self, action: Action) -> Observation:
        return self.env.step(action)

    def action_space(self) -> list[dict]:
        return self.env.action_space()

    def check(self, task: Task) -> bool | None:
        return self.env.check(task)

    def check_details(self) -> dict:
        return self.env.check_details()

    def starting_state(self, task: Task) -> "StartingState | None":
        return self.env.starting_state(task)

    def describe(self) -> dict:
        return self.env.describe()

    def simulation_instruction(self) -> str:
        return self.env.simulation_instruction()

    def episode_metadata(self) -> dict:
        return self.env.episode_metadata()

    def close(self) -> None:
        self.env.close()
