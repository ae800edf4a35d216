"""A text environment for RL frameworks: `reset(task) -> observation`, `step(text) -> (observation, reward, done,
info)`, over any sandbox, real or simulated (a world model: sandboxes/simulated.py).

`step` reads the agent's text with the action codec, as the llm and checkpoint policies read an answer
(collectors/policies/llm.py `answer_action`): an action is taken in the environment; text without an action ends
the episode, and the task's check decides its reward (1 success, 0 otherwise; in a simulated environment the check
runs in the world model); text that cannot be read ends it with reward 0 (`agent_error`); so do the turn limit
(`timeout`) and an environment that cannot go on (`EpisodeEnded`: its status). `info["status"]` says how it ended,
`info["check"]` how the check decided. The first observation is the one a collected episode starts with
(the rendering of the task's starting state, collectors/episode.py `starting_observation`).

verl, SkyRL and TRL environment hooks wrap it in a few lines: docs/simulation.md shows one."""

import json
from dataclasses import dataclass, field

from trajforge.collectors.collection import ground_simulated, plan_suites
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.environments import KindSpec, Settings, build_environment
from trajforge.collectors.episode import checked_outcome, starting_observation
from trajforge.collectors.policies.base import UnparseableAnswer
from trajforge.collectors.policies.llm import answer_action
from trajforge.collectors.simulation import Simulation
from trajforge.endpoints.model_ref import parse_model
from trajforge.sandboxes.base import EpisodeEnded, Sandbox, Task


@dataclass
class TextEnvironment:
    sandbox: Sandbox
    max_turns: int = 30
    task: Task | None = None
    turns: int = 0
    done: bool = True
    tools: list[dict] = field(default_factory=list)

    def reset(self, task: Task) -> str:
        """Start an episode of `task`; the first observation."""
        self.task, self.turns, self.done = task, 0, False
        initial = starting_observation(self.sandbox, task, self.sandbox.reset(task))
        self.tools = self.sandbox.action_space()
        return initial.content

    def step(self, text: str) -> tuple[str, float, bool, dict]:
        """The agent's answer `text` applied: (observation, reward, done, info)."""
        if self.done:
            raise RuntimeError("step() after the episode ended: reset() first")
        try:
            action = answer_action(text, self.tools)
        except UnparseableAnswer as exc:
            return self._end("", {"status": exc.status, "error": exc.reason})
        if action is not None and self.turns >= self.max_turns:
            return self._end("", {"status": "timeout", "error": f"still acting after {self.max_turns} turns"})
        try:
            if action is None:  # the final answer: the task's check decides
                return self._end("", checked_outcome(self.sandbox, self.task) or {"status": "unknown"})
            self.turns += 1
            observation = self.sandbox.step(action)
        except EpisodeEnded as ended:  # the environment (or the world model, or its judge) could not go on
            content = ended.observation.content if ended.observation is not None else ""
            return self._end(content, {"status": ended.status, "error": ended.reason})
        return observation.content, 0.0, False, {"status": "running", "turn": self.turns, "action": action}

    def _end(self, observation: str, outcome: dict) -> tuple[str, float, bool, dict]:
        self.done = True
        reward = float(outcome.get("reward") or 0.0)
        info = {"status": outcome["status"], "turn": self.turns, **{k: v for k, v in outcome.items() if k == "error"}}
        if "verifier" in outcome:
            info["check"] = json.loads(outcome["verifier"])
        return observation, reward, True, info

    def close(self) -> None:
        self.sandbox.close()

    @classmethod
    def of(cls, environment: KindSpec, settings: Settings = Settings(), max_turns: int = 30) -> "TextEnvironment":
        """A text environment over a suite's environment (`Suite.environment`: real, or simulated)."""
        return cls(build_environment(environment, settings), max_turns)

    @classmethod
    def simulated(
        cls, suite: str, simulation: Simulation | str, max_turns: int = 30, log=print, **settings
    ) -> tuple["TextEnvironment", tuple[Task, ...]]:
        """A text environment in the world model of `simulation` (a Simulation, or the world model as a command line
        names it, with the Simulation's `settings`) standing in for the bundled suite or .yaml `suite`, as `collect
        --world-model` runs it; and the suite's tasks, grounded in their real starting states."""
        if isinstance(simulation, str):
            simulation = Simulation(parse_model(simulation, "--world-model"), **settings)
        config = CollectConfig(suites=(suite,), simulation=simulation)
        (planned,) = ground_simulated(plan_suites(config), config, "text-env", log)
        return cls.of(planned.environment, max_turns=max_turns), planned.tasks
