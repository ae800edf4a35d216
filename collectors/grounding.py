"""Simulated tasks grounded in their real starting state: before a simulated run, each task gets the state a real
episode of it starts with (`config.starting_state`, a sandboxes.starting_state.StartingState), so the world model
is told what the real environment holds (the files and their contents, what the setup left, the MCP server's tools
and seed data, the start page) in the same words a real trajectory's `initial_state` records it.

A terminal task without setup commands starts with exactly its `files:`: no sandbox is needed. Any other task's
state is recorded once from a real episode's reset (a Docker sandbox, an MCP server, a browser) and cached under
TRAJFORGE_CACHE (default ~/.cache/trajforge)/starting-states/, keyed by the task and its environment."""

import dataclasses
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trajforge.collectors.environments import KindSpec, Settings, parse_environment
from trajforge.collectors.environments.simulated import SimulatedSpec
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.base import EpisodeEnded, Task
from trajforge.sandboxes.starting_state import StartingState
from trajforge.schemas.atomic import write_bytes_atomic
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.storage import cache_root
from trajforge.schemas.turn_text import action_text

PROGRESS_EVERY = 100  # tasks recorded between progress lines, at the least


def cache_folder() -> Path:
    return cache_root() / "starting-states"


def ground_suites(
    suites: list[Suite], make_settings: Callable[[], Settings], log: Callable[[str], None], workers: int = 4
) -> list[Suite]:
    """The suites, each simulated one's tasks carrying their real starting state; `make_settings` (the real
    environments' settings: Docker, image) is called once, and only if some state must be recorded (`workers` real
    environments at a time). ValueError names a task whose state could not be recorded."""
    settings: list[Settings] = []
    grounded = []
    for suite in suites:
        spec = suite.environment
        if not (isinstance(spec, SimulatedSpec) and spec.real):
            grounded.append(suite)
            continue
        real = parse_environment(spec.real, where=f"{suite.name}: environment")
        if missing := [task for task in suite.tasks if needs_recording(task, real)]:
            settings = settings or [make_settings()]
            _record(suite.name, missing, real, settings[0], log, workers)
        tasks = tuple(_grounded(task, starting_state_of(task, real)) for task in suite.tasks)
        grounded.append(dataclasses.replace(suite, tasks=tasks))
    return grounded


def _grounded(task: Task, state: StartingState) -> Task:
    return dataclasses.replace(task, config={**task.config, "starting_state": state.as_dict()})


def needs_recording(task: Task, real: KindSpec) -> bool:
    """Whether the task's starting state is known only from a real environment, and not cached yet."""
    return not (real.kind == "terminal" and not task.setup) and not _cached(task, real).is_file()


def starting_state_of(task: Task, real: KindSpec) -> StartingState:
    """The task's starting state: from its files (a terminal task without setup), else as recorded (cached)."""
    if real.kind == "terminal" and not task.setup:
        return StartingState.of_files(task.files)
    return StartingState.from_dict(json.loads(_cached(task, real).read_text(encoding="utf-8")))


def _cached(task: Task, real: KindSpec) -> Path:
    return cache_folder() / f"{state_key(task, real)}.json"


def _record(suite: str, tasks: list[Task], real: KindSpec, settings: Settings, log, workers: int) -> None:
    """Record and cache the starting states of `tasks`, `workers` real environments at a time."""
    log(
        f"{suite}: recording the starting state of {len(tasks)} task(s) from a real {real.kind} environment "
        f"(once: cached in {cache_folder()})"
    )
    if problem := real.prepare(settings, log):
        raise ValueError(f"{suite}: cannot record the tasks' starting states: {problem}")

    def record(task: Task) -> None:
        path = _cached(task, real)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = record_starting_state(task, real, settings)
        write_bytes_atomic(path, json.dumps(state.as_dict(), ensure_ascii=False).encode("utf-8"))

    every = max(PROGRESS_EVERY, len(tasks) // 10)  # a line a tenth of the way: log files show it too
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done, _ in enumerate(pool.map(record, tasks), 1):
            if done % every == 0 and done < len(tasks):
                rate = done / (time.monotonic() - start)
                log(f"{suite}: {done}/{len(tasks)} starting states recorded ({rate:.1f}/s, "
                    f"~{(len(tasks) - done) / rate:.0f} s left)")  # fmt: skip


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


def record_starting_state(task: Task, real: KindSpec, settings: Settings) -> StartingState:
    """One real episode's reset of `task`, and the state it starts with."""
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
