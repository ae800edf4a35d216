"""The collection runner: plan episodes, shard them, run them in parallel, retry infrastructure failures only
(never an agent's failure, never a task whose setup failed), and resume an interrupted run without redoing or
duplicating finished episodes."""

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from trajforge.collectors.environments import KindSpec
from trajforge.collectors.environments.terminal import TerminalSpec
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.base import Policy
from trajforge.collectors.tasks import Suite
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import Sandbox, Task
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.records import Trajectory, new_trajectory

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeSpec:
    key: str  # "<suite>/<task>#<repeat>": stable across runs and machines
    task: Task
    seed: int
    environment: KindSpec = TerminalSpec()
    faults: dict | None = None
    control: dict | None = None  # a control distribution (sandboxes/control.py): a simulated episode's faults


@dataclass
class RunResult:
    planned: int
    skipped: int  # finished by an earlier, interrupted run
    ran: int = 0
    retries: int = 0
    infra_errors: int = 0
    task_errors: int = 0  # tasks whose setup failed: a broken suite, not a broken run
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' with 0 <= i < n."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/n (e.g. 0/4), got {text!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"--shard {text}: need 0 <= i < n")
    return index, count


def plan_episodes(
    suites: list[Suite], repeats: int, shard: tuple[int, int] = (0, 1), seed: int = 0
) -> list[EpisodeSpec]:
    """Every (task, repeat) of the suites, then this shard's share, chosen by a hash of the key."""
    index, count = shard
    episodes = []
    for suite in suites:
        for task in suite.tasks:
            for repeat in range(repeats):
                key = f"{suite.name}/{task.id}#{repeat}"
                if int(content_hash(key, 8), 16) % count == index:
                    episode_seed = int(content_hash(f"{seed}:{key}", 8), 16)
                    spec = EpisodeSpec(key, task, episode_seed, suite.environment, suite.faults, suite.control)
                    episodes.append(spec)
    return episodes


def run_collection(
    episodes: list[EpisodeSpec],
    writer: RunWriter,
    make_env: Callable[[EpisodeSpec], Sandbox],
    make_policy: Callable[[], Policy],
    run_id: str,
    concurrency: int = 2,
    retries: int = 2,
    max_turns: int = 30,
    progress: Callable[[Iterator, int], Iterator] = lambda items, total: items,
) -> RunResult:
    todo = [e for e in episodes if e.key not in writer.done]
    result = RunResult(planned=len(episodes), skipped=len(episodes) - len(todo))
    started = time.monotonic()

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = [pool.submit(run_with_retries, s, make_env, make_policy, run_id, retries, max_turns) for s in todo]
        for future in progress(as_completed(futures), len(futures)):
            trajectory, attempts = future.result()
            writer.add(trajectory)
            result.ran += 1
            result.retries += attempts
            status = trajectory.outcome.status
            result.outcomes[status] = result.outcomes.get(status, 0) + 1
            result.infra_errors += status == "infra_error"
            result.task_errors += status == "task_error"
    writer.flush()
    result.seconds = time.monotonic() - started
    return result


def run_with_retries(
    spec: EpisodeSpec,
    make_env: Callable[[EpisodeSpec], Sandbox],
    make_policy: Callable[[], Policy],
    run_id: str,
    retries: int = 2,
    max_turns: int = 30,
) -> tuple[Trajectory, int]:
    """One episode, run again after an infrastructure failure up to `retries` times: (trajectory, retries made)."""
    for attempt in range(retries + 1):
        try:
            with make_env(spec) as env:
                trajectory = run_episode(env, make_policy(), spec.task, spec.key, run_id, spec.seed, max_turns)
        except Exception as exc:  # noqa: BLE001 - a broken environment must not stop the run
            log.exception("%s: the environment failed", spec.key)
            trajectory = _infra_failure(spec, run_id, f"{type(exc).__name__}: {exc}")
        if trajectory.outcome.status != "infra_error" or attempt == retries:
            return trajectory, attempt
        log.warning("%s: infrastructure failure (attempt %d): %s", spec.key, attempt + 1, trajectory.outcome.error)
    raise AssertionError("unreachable")


def _infra_failure(spec: EpisodeSpec, run_id: str, error: str) -> Trajectory:
    """An episode the infrastructure never let finish: recorded, labelled, never a training target."""
    return new_trajectory(
        domain=spec.task.domain,
        source={"kind": "collected", "by": "runner", "run_id": run_id, "origin": spec.key},
        environment={"name": "unavailable"},
        task_description=spec.task.instruction,
        agent={"name": "none"},
        turns=[],
        outcome={"status": "infra_error", "error": error},
    )
