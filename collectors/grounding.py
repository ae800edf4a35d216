"""Simulated tasks grounded in their real starting state: before a simulated run, each task gets the state a real
episode of it starts with (`config.starting_state`, a sandboxes.starting_state.StartingState), so the world model
is told what the real environment holds (the files and their contents, what the setup left, the MCP server's tools
and seed data, the start page) in the same words a real trajectory's `initial_state` records it.

A terminal task without setup commands starts with exactly its `files:`: no sandbox is needed. Any other task's
state is recorded once from a real episode's reset (a Docker sandbox, an MCP server, a browser) and cached under
TRAJFORGE_CACHE (default ~/.cache/trajforge)/starting-states/, keyed by the task and its environment."""

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

from trajforge.collectors.environments import KindSpec, Settings, parse_environment
from trajforge.collectors.environments.simulated import SimulatedSpec
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.base import EpisodeEnded, Task
from trajforge.sandboxes.starting_state import StartingState
from trajforge.schemas.atomic import write_bytes_atomic
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.turn_text import action_text


def cache_folder() -> Path:
    return Path(os.environ.get("TRAJFORGE_CACHE") or Path.home() / ".cache" / "trajforge") / "starting-states"


def ground_suites(
    suites: list[Suite], make_settings: Callable[[], Settings], log: Callable[[str], None]
) -> list[Suite]:
    """The suites, each simulated one's tasks carrying their real starting state; `make_settings` (the real
    environments' settings: Docker, image) is called only if some state must be recorded. ValueError names a task
    whose state could not be recorded."""
    settings: list[Settings] = []

    def real_settings() -> Settings:
        if not settings:
            settings.append(make_settings())
        return settings[0]

    grounded = []
    for suite in suites:
        spec = suite.environment
        if isinstance(spec, SimulatedSpec) and spec.real:
            real = parse_environment(spec.real, where=f"{suite.name}: environment")
            tasks = tuple(_grounded(task, real, real_settings, log) for task in suite.tasks)
            suite = dataclasses.replace(suite, tasks=tasks)
        grounded.append(suite)
    return grounded


def _grounded(task: Task, real: KindSpec, settings: Callable[[], Settings], log) -> Task:
    state = starting_state_of(task, real, settings, log)
    return dataclasses.replace(task, config={**task.config, "starting_state": state.as_dict()})


def starting_state_of(task: Task, real: KindSpec, settings: Callable[[], Settings], log) -> StartingState:
    """The task's starting state: from its files (a terminal task without setup), from the cache, or recorded."""
    if real.kind == "terminal" and not task.setup:
        return StartingState.of_files(task.files)
    path = cache_folder() / f"{state_key(task, real)}.json"
    if path.is_file():
        return StartingState.from_dict(json.loads(path.read_text(encoding="utf-8")))
    state = record_starting_state(task, real, settings(), log)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, json.dumps(state.as_dict(), ensure_ascii=False).encode("utf-8"))
    return state


def state_key(task: Task, real: KindSpec) -> str:
    """What a task's starting state depends on: its environment, image, files, setup and start page."""
    return config_hash(
        {
            "environment": real.model_dump(mode="json"),
            "image": task.image,
            "files": task.files,
            "setup": [step if isinstance(step, str) else action_text(step.model_dump()) for step in task.setup],
            "start_path": task.config.get("start_path"),
        }
    )


def record_starting_state(task: Task, real: KindSpec, settings: Settings, log) -> StartingState:
    """One real episode's reset of `task`, and the state it starts with."""
    log(f"recording the starting state of {task.id} from a real {real.kind} environment (once: it is cached)")
    if problem := real.prepare(settings, log):
        raise ValueError(f"task {task.id}: cannot record its starting state: {problem}")
    env = real.build(settings)
    try:
        initial = env.reset(task)
        return env.starting_state(task) or StartingState(observation=initial.content)
    except EpisodeEnded as exc:
        raise ValueError(
            f"task {task.id}: cannot record its starting state from a real {real.kind} environment: {exc.reason}"
        ) from exc
    finally:
        env.close()
