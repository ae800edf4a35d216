"""One episode: reset the environment, let the policy act until it is done, check success, record it all."""

import json
import time
from datetime import UTC, datetime

from collectors.policies.base import Policy
from sandboxes.base import Environment, EpisodeEnded, Task
from schemas.records import Trajectory, new_trajectory


def run_episode(
    env: Environment, policy: Policy, task: Task, key: str, run_id: str, seed: int, max_turns: int = 30
) -> Trajectory:
    """Run one episode. An InfraError propagates (the runner retries); any other early end is recorded."""
    started = datetime.now(UTC)
    initial = env.reset(task)
    action_space = env.action_space()
    environment = env.describe()
    policy.start(task, action_space, initial, seed)
    turns: list[dict] = []
    outcome: dict = {"status": "unknown"}
    last = None
    try:
        while True:
            action = policy.act(last)
            if action is None:
                break
            if len(turns) >= max_turns:
                outcome = {"status": "timeout", "error": f"the policy was still acting after {max_turns} turns"}
                break
            tick = time.perf_counter()
            try:
                last = env.step(action)
            except EpisodeEnded as ended:
                if ended.observation is not None:
                    turns.append(_turn(len(turns), action, ended.observation, tick))
                raise
            turns.append(_turn(len(turns), action, last, tick))
        if outcome["status"] == "unknown":
            passed = env.check(task)
            if passed is not None:
                outcome = {"status": "success" if passed else "failure", "reward": 1.0 if passed else 0.0}
    except EpisodeEnded as ended:
        if ended.retryable:
            raise
        outcome = {"status": ended.status, "error": ended.reason}
    return new_trajectory(
        domain=task.domain,
        source={"kind": "collected", "by": policy.name, "run_id": run_id, "origin": key},
        environment=environment,
        task_description=task.instruction,
        action_space=json.dumps(action_space, ensure_ascii=False),
        initial_state=initial.content,
        agent={"name": policy.name, "model": policy.model},
        turns=turns,
        outcome=outcome,
        started_at=started,
        ended_at=datetime.now(UTC),
        metadata=json.dumps({"task_id": task.id, "seed": seed}),
    )


def _turn(index: int, action, observation, tick: float) -> dict:
    return {
        "index": index,
        "action": action,
        "observation": observation,
        "latency_ms": round((time.perf_counter() - tick) * 1000, 3),
    }
