"""One episode: reset the environment, let the policy act until it is done, check success, record it all."""

import json
import time
from datetime import UTC, datetime

from trajforge.collectors.policies.base import Policy
from trajforge.sandboxes.base import EpisodeEnded, Sandbox, Task
from trajforge.schemas.records import Action, Observation, Trajectory, new_trajectory
from trajforge.schemas.splits import task_identity


def run_episode(
    env: Sandbox, policy: Policy, task: Task, key: str, run_id: str, seed: int, max_turns: int = 30
) -> Trajectory:
    """Run one episode and record it, however it ends: an infrastructure failure is recorded too, as
    `infra_error` with the turns made before it, and the runner decides whether to retry."""
    started = datetime.now(UTC)
    turns: list[dict] = []
    outcome: dict = {"status": "unknown"}
    initial, action_space, environment = None, [], {"name": env.name}
    try:
        initial = starting_observation(env, task, env.reset(task))
        action_space = env.action_space()
        environment = env.describe()
        policy.start(task, action_space, initial, seed)
        outcome = _act(env, policy, turns, max_turns) or outcome
        if outcome["status"] == "unknown":
            outcome = checked_outcome(env, task) or outcome
    except EpisodeEnded as ended:
        outcome = {"status": ended.status, "error": ended.reason}
    return new_trajectory(
        domain=task.domain,
        source={"kind": env.source_kind, "by": policy.name, "run_id": run_id, "origin": key},
        environment=environment,
        task_description=task.instruction,
        action_space=json.dumps(action_space, ensure_ascii=False),
        initial_state=initial.content if initial is not None else "",
        simulation_instruction=env.simulation_instruction(),
        agent={"name": policy.name, "model": policy.model},
        turns=turns,
        outcome=outcome,
        started_at=started,
        ended_at=datetime.now(UTC),
        metadata=json.dumps(
            {"task_id": task.id, "task_key": task_identity(task.instruction, task.files), "seed": seed}
            | ({"family": task.family} if task.family else {})
            | env.episode_metadata()
        ),
    )


def starting_observation(env: Sandbox, task: Task, initial: Observation) -> Observation:
    """The first observation of an episode `env` was just reset into, as its policy sees it and its trajectory's
    `initial_state` records it: the rendering of the environment's starting state (sandboxes/starting_state.py),
    the same for a real episode and a simulated one of the same task; the reset's own observation where the
    environment has no starting state to describe."""
    state = env.starting_state(task)
    return initial if state is None else initial.model_copy(update={"content": state.render()})


def checked_outcome(env: Sandbox, task: Task) -> dict | None:
    """The outcome the task's check decides, recording how it decided (`verifier`); None when it has no check."""
    passed = env.check(task)
    if passed is None:
        return None
    verifier = json.dumps(env.check_details(), ensure_ascii=False)
    return {"status": "success" if passed else "failure", "reward": 1.0 if passed else 0.0, "verifier": verifier}


def _act(env: Sandbox, policy: Policy, turns: list[dict], max_turns: int) -> dict | None:
    """Let the policy act until it is done, recording each turn; the timeout outcome when it would act past
    `max_turns`. However it ends, the policy is told the episode is over."""
    last = None
    try:
        while True:
            action = policy.act(last)
            if action is None:
                return None
            if len(turns) >= max_turns:
                return {"status": "timeout", "error": f"the policy was still acting after {max_turns} turns"}
            tick = time.perf_counter()
            try:
                last = env.step(action)
            except EpisodeEnded as ended:
                if ended.observation is not None:
                    turns.append(_turn(len(turns), action, ended.observation, tick))
                raise
            turns.append(_turn(len(turns), action, last, tick))
    finally:
        policy.finish()


def _turn(index: int, action: Action, observation: Observation, tick: float) -> dict:
    """A turn; the environment reports an injected fault or an unchanged state through observation metadata."""
    turn = {
        "index": index,
        "action": action,
        "observation": observation,
        "latency_ms": round((time.perf_counter() - tick) * 1000, 3),
    }
    meta = json.loads(observation.metadata) if observation.metadata else {}
    if isinstance(meta, dict):
        if meta.get("fault"):
            turn["fault"] = meta["fault"]
        if meta.get("no_change") is not None:
            turn["no_change"] = bool(meta["no_change"])
    return turn
