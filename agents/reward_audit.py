"""`agent-rl --simulate --audit-every N`: are the world model's rewards true of the episodes RL actually trains on?
sim-check measures success agreement on held-out tasks with the starting agent; RL samples other episodes (at its
temperature, from a policy that moves), and a policy that finds where the simulator calls a failure a success is
paid for it. Every N steps the step's simulated episodes are replayed in the real environment, their actions as a
scripted policy (sim-check's WM2Real replay, agents/sim_episodes.py), and the step's metrics get `audit`: how often
the simulated reward agreed with the real outcome, and the real share of the simulated successes. Real
interactions: the replays are counted (`audit.episodes`) so a run says what its audits cost."""

import dataclasses
from collections.abc import Callable
from pathlib import Path

from trajforge.agents.sim_episodes import replay_suites, replayed_pairs, run_records
from trajforge.collectors.collection import collect
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.tasks import Suite
from trajforge.evaluation.fidelity import replay_figures, success_confusion
from trajforge.schemas.records import Trajectory

Log = Callable[[str], None]


def audit_due(step: int, every: int) -> bool:
    """Whether step `step` (1-based) is audited: every `every` steps, none when 0."""
    return every > 0 and step % every == 0


def audit_rewards(
    real_suites: list[Suite], simulated: list[Trajectory], run: CollectConfig, log: Log, warn: Log
) -> dict:
    """Replay `simulated` (episodes of `real_suites`' tasks, keyed `<suite>/<task>#<repeat>`) in the real
    environment with `run`'s settings (output, run id, concurrency, image, ...); the audit's figures."""
    episodes = {t.source.origin: t for t in simulated if t.outcome.status != "infra_error"}
    config = dataclasses.replace(run, tasks=(), policy="scripted")
    collected = collect(config, log, warn, suites=replay_suites(real_suites, episodes))
    replays = replayed_pairs(sorted(episodes), episodes, run_records(collected.run_dir))
    agreement = success_confusion([(real, simulated) for _, _, simulated, real in replays])
    wm2real = replay_figures(replays)
    real_successes = sum(bool(real) for *_, real in replays)
    return {
        "episodes": len(replays),
        "agreement": agreement["agreement"],
        "sim_successes_real": wm2real["real_share_of_simulated_successes"],
        "real_success": real_successes / len(replays) if replays else None,
        "turn_exact": wm2real["exact_match"],
        "run": str(Path(collected.run_dir)),
    }
