"""Groups of episodes with the current policy: G episodes of each task, each in its own real environment, run
concurrently by the collectors' runner, their answers generated in shared batches on the device (the checkpoint
policy's broker), and each episode's tokens kept as they were generated (agents/transcript.py). Every episode is
also written as a raw trajectory (the run folder `collect` writes), so RL episodes feed the corpus too."""

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trajforge.agents.checkpoint_policy import Actor, CheckpointPolicy
from trajforge.agents.transcript import Transcript
from trajforge.collectors.runner import EpisodeSpec, RunResult, run_collection
from trajforge.collectors.tasks import Suite
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import Sandbox, Task
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.records import Trajectory

NOT_THE_AGENTS = ("infra_error", "task_error")  # outcomes no policy caused: never rewarded nor penalised


@dataclass(frozen=True)
class Rollout:
    spec: EpisodeSpec
    trajectory: Trajectory
    transcript: Transcript | None  # None when the episode never reached the policy (its environment failed)
    guided: bool = False  # an off-policy guide's episode (agents/guidance.py), not the policy's own

    @property
    def reward(self) -> float:
        """The task's check: 1 for success, 0 for anything else (an unparseable answer, the turn limit, failure)."""
        return 1.0 if self.trajectory.outcome.status == "success" else 0.0

    @property
    def trainable(self) -> bool:
        """Whether the episode says something about the policy: it acted, and no infrastructure or broken task
        decided its end."""
        acted = self.transcript is not None and self.transcript.generated > 0
        return acted and self.trajectory.outcome.status not in NOT_THE_AGENTS


def plan_groups(tasks: list[tuple[Suite, Task]], group_size: int, seed: int, tag: str) -> list[list[EpisodeSpec]]:
    """G episode specs per task. Keys `<suite>/<task>#<tag>.<g>` keep the split's task key (the part before `#`);
    each episode's sampling seed comes from the run's seed and its key."""
    groups = []
    for suite, task in tasks:
        keys = [f"{suite.name}/{task.id}#{tag}.{g}" for g in range(group_size)]
        seeds = [int(content_hash(f"{seed}:{k}", 8), 16) for k in keys]
        groups.append(
            [
                EpisodeSpec(k, task, s, suite.environment, suite.faults, suite.control)
                for k, s in zip(keys, seeds, strict=True)
            ]
        )
    return groups


class KeepingWriter(RunWriter):
    """The run writer, also keeping each finished episode by its key for the caller."""

    def __init__(self, run_dir: Path):
        super().__init__(run_dir)
        self.kept: dict[str, Trajectory] = {}

    def add(self, trajectory: Trajectory) -> None:
        self.kept[trajectory.source.origin] = trajectory
        super().add(trajectory)


class _Policies:
    """Makes the episodes' policies (one Actor behind them all) and finds each episode's by its seed: the last one
    made for a seed is the final attempt's (the runner retries an infrastructure failure with a new policy)."""

    def __init__(self, actor: Actor, folder: str, max_new_tokens: int):
        self.actor, self.folder, self.max_new_tokens = actor, folder, max_new_tokens
        self.made: list[CheckpointPolicy] = []
        self._lock = threading.Lock()

    def __call__(self) -> CheckpointPolicy:
        policy = CheckpointPolicy(self.folder, actor=self.actor, max_new_tokens=self.max_new_tokens)
        with self._lock:
            self.made.append(policy)
        return policy

    def transcript_of(self, seed: int) -> Transcript | None:
        started = [p for p in self.made if p.transcript is not None and p.seed == seed]
        return started[-1].transcript if started else None


def run_rollouts(
    specs: list[EpisodeSpec],
    actor: Actor,
    make_env: Callable[[EpisodeSpec], Sandbox],
    run_dir: Path,
    folder: str,
    concurrency: int,
    max_turns: int,
    max_new_tokens: int,
    retries: int = 1,
) -> tuple[list[Rollout], RunResult]:
    """Run the episodes (all concurrently up to `concurrency`), in `specs` order; `run_dir` is written afresh."""
    shutil.rmtree(run_dir, ignore_errors=True)  # an interrupted step runs again whole, with the restored model
    writer = KeepingWriter(run_dir)
    policies = _Policies(actor, folder, max_new_tokens)
    actor.broker.expect(min(concurrency, len(specs)))  # the first episodes start together
    try:
        result = run_collection(
            specs, writer, make_env, policies, run_dir.name, concurrency, retries=retries, max_turns=max_turns
        )
    finally:
        actor.broker.unexpect()
    rollouts = [Rollout(s, writer.kept[s.key], policies.transcript_of(s.seed)) for s in specs]
    return rollouts, result
