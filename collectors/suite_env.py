"""A suite opened for another trainer's environment loop (TRL, verifiers, OpenEnv: agents/trl_env.py,
verifiers_env.py, openenv_env.py): its tasks, and a fresh `TextEnvironment` (its own sandbox) per rollout or
session, real or in a world model, started as `collect` starts them (the Docker daemon and image, MCP server
packages; a simulated suite's tasks grounded in their real starting states, its world model loaded once)."""

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from trajforge.collectors.collection import (
    ground_simulated,
    plan_suites,
    prepare_environments,
    start_docker,
)
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.simulation import Simulation
from trajforge.collectors.tasks import Suite, task_split
from trajforge.collectors.text_env import TextEnvironment
from trajforge.endpoints.model_ref import parse_model
from trajforge.sandboxes.base import Task
from trajforge.schemas.splits import PART_SPLITS, readable_by

TRAINER_PARTS = ("train", *PART_SPLITS, "all")  # what tasks_in takes


@dataclass
class OpenSuite:
    """One suite, ready: `environment()` builds a new episode's environment; `tasks` are what `reset` takes."""

    suite: Suite
    settings: Settings
    max_turns: int = 30
    simulated: bool = False
    _seeds: itertools.count = field(default_factory=itertools.count)

    @property
    def tasks(self) -> tuple[Task, ...]:
        return self.suite.tasks

    def tasks_in(self, part: str) -> tuple[Task, ...]:
        """The suite's tasks of `part`: train (those a trainer may train on: the training split, as agent-rl's),
        validation (what choices read), test (read once, by the final table) or all. ValueError for another part
        or one that holds no task of the suite."""
        if part not in TRAINER_PARTS:
            raise ValueError(f"part {part!r}: expected one of {', '.join(TRAINER_PARTS)}")
        chosen = self._parts[part]
        if not chosen:
            raise ValueError(f"suite {self.suite.name} has no task in the {part} part ({len(self.suite.tasks)} tasks)")
        return chosen

    @functools.cached_property
    def _parts(self) -> dict[str, tuple[Task, ...]]:
        """Each part's tasks, in the suite's order, sorted once (a reset by seed reads them every time)."""
        splits = {task.id: task_split(self.suite, task) for task in self.suite.tasks}

        def holds(part: str, task: Task) -> bool:
            split = splits[task.id]
            return part == "all" or (readable_by(split, "rl") if part == "train" else split == PART_SPLITS[part])

        return {part: tuple(t for t in self.suite.tasks if holds(part, t)) for part in TRAINER_PARTS}

    def task_numbered(self, number: int, part: str) -> Task:
        """Task `number` of `part` (tasks_in's order, cycled): what a reset by seed gets."""
        tasks = self.tasks_in(part)
        return tasks[number % len(tasks)]

    def task(self, task_id: str) -> Task:
        """The suite's task `task_id`; KeyError naming the ids there are."""
        for task in self.suite.tasks:
            if task.id == task_id:
                return task
        known = ", ".join(t.id for t in self.suite.tasks)
        raise KeyError(f"suite {self.suite.name} has no task {task_id!r} (its tasks: {known})")

    def environment(self) -> TextEnvironment:
        """A text environment over a sandbox of its own (faults and control drawn with a seed of its own)."""
        suite = self.suite
        sandbox = build_environment(suite.environment, self.settings, suite.faults, next(self._seeds), suite.control)
        return TextEnvironment(sandbox, self.max_turns)

    def action_space(self) -> list[dict]:
        """The tools an agent is offered (name, description, input_schema), known before an episode where the kind
        says them (a terminal's, a browser's, a simulation's), else read from one episode started and closed (an
        MCP server's)."""
        spec = self.suite.environment
        declared = getattr(spec, "action_space", None) if self.simulated else spec.simulated_action_space()
        if declared:
            return list(declared)
        probe = self.environment()
        try:
            probe.reset(self.tasks[0])
            return list(probe.tools)
        finally:
            probe.close()


def open_suite(
    suite: str,
    world_model: Simulation | str | None = None,
    *,
    tasks: tuple[str, ...] = (),
    max_turns: int = 30,
    image: str | None = None,
    command_timeout: float = 10.0,
    run_id: str = "trainer-env",
    log: Callable[[str], None] = print,
    **simulation_settings,
) -> OpenSuite:
    """The bundled suite or .yaml `suite` (only `tasks` when given), in its real environment or, with
    `world_model` (a Simulation, or a model as `--world-model` names it with the Simulation's settings: prompt,
    max_tokens, ...), in that world model. ValueError for a bad suite, task, model or a missing Docker daemon."""
    if isinstance(world_model, str):
        world_model = Simulation(parse_model(world_model, "--world-model"), **simulation_settings)
    config = CollectConfig(
        suites=(suite,), tasks=tasks, simulation=world_model, image=image, command_timeout=command_timeout
    )
    (planned,) = plan_suites(config)
    settings = Settings(run_id=run_id, command_timeout=command_timeout)
    if world_model is not None:
        (planned,) = ground_simulated([planned], config, run_id, log)
    elif planned.environment.needs_docker():
        client, docker_config = start_docker(image, log)
        settings = Settings(run_id, docker_config["image"], command_timeout, client)
    if not prepare_environments([planned], settings, log):
        raise ValueError(f"suite {planned.name}: its environment could not be prepared (the reason is printed above)")
    return OpenSuite(planned, settings, max_turns, simulated=world_model is not None)
