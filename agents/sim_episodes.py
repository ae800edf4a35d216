"""The episode part of `sim-check`: one agent on the same held-out tasks, in the real environment and in the world
model (each a `collect` run, so each is a raw run folder that resumes), the simulated episodes' actions replayed
in the real environment (WM2Real), and episodes simulated under sampled control specs (controllability). The
figures go per domain and task family (`agents.agent_eval.family_of`).

A simulated episode's success is read by `simulated_success` (its outcome: the task's check in the world model,
where the simulator decides one; undecided otherwise): pluggable, as SimCheckConfig.simulated_success."""

import dataclasses
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from trajforge.agents.agent_eval import EvaluatedAgent, family_label, family_of, held_out_suites, run_records
from trajforge.collectors.collection import collect, plan_suites, task_name
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.simulation import Simulation
from trajforge.collectors.tasks import Suite
from trajforge.evaluation.fidelity import replay_figures, success_confusion
from trajforge.evaluation.paired import clustered_share_interval
from trajforge.sandboxes.base import Task
from trajforge.sandboxes.controllability import controllability
from trajforge.schemas.records import Trajectory
from trajforge.schemas.splits import REPLAY_SEPARATOR, Part, SplitConfig

Log = Callable[[str], None]


def outcome_success(trajectory: Trajectory) -> bool | None:
    """Success as the episode's outcome says it: True, False, or None when nothing decided it."""
    status = trajectory.outcome.status
    return True if status == "success" else False if status in ("failure", "agent_error", "timeout") else None


@dataclass(frozen=True)
class EpisodePlan:
    run: CollectConfig  # the suites, output, repeats, concurrency ... of every run; `tasks` narrows the held-out ones
    agent: EvaluatedAgent
    simulation: Simulation  # the world model the simulated runs ask, and how (its control is `control`'s)
    run_prefix: str  # the runs are <prefix>-real, -sim, -replay, -controlled under run.output
    split: SplitConfig = SplitConfig()
    control: str | None = "errors"
    simulated_success: Callable[[Trajectory], bool | None] = outcome_success
    part: Part = "test"  # which held-out tasks: the test part, or the validation part that choices read


def held_out_tasks(plan: EpisodePlan) -> list[Suite]:
    """The suites' tasks of the plan's part (those `run.tasks` names, when it names some)."""
    suites = held_out_suites(plan_suites(dataclasses.replace(plan.run, tasks=())), plan.split, plan.part)
    chosen = set(plan.run.tasks)
    if chosen:
        suites = [_only(s, chosen) for s in suites]
    return [s for s in suites if s.tasks]


def _only(suite: Suite, chosen: set[str]) -> Suite:
    return dataclasses.replace(suite, tasks=tuple(t for t in suite.tasks if {t.id, task_name(suite, t)} & chosen))


def run_episodes(plan: EpisodePlan, log: Log, warn: Log, progress) -> dict:
    """Every run, then the figures: {"tasks", "runs", "success", "wm2real", "controllability"}, each per group."""
    suites = held_out_tasks(plan)
    if not suites:
        return {"tasks": 0, "note": "no held-out task in the suites: no episode figures"}
    names = tuple(task_name(s, t) for s in suites for t in s.tasks)
    base = dataclasses.replace(plan.run, tasks=names, **plan.agent.settings)
    simulated = dataclasses.replace(base, simulation=plan.simulation)
    runs = {
        "real": collect(dataclasses.replace(base, run_id=f"{plan.run_prefix}-real"), log, warn, progress),
        "sim": collect(dataclasses.replace(simulated, run_id=f"{plan.run_prefix}-sim"), log, warn, progress),
    }
    real, sim = run_records(runs["real"].run_dir), run_records(runs["sim"].run_dir)
    replay_run = dataclasses.replace(plan.run, tasks=(), policy="scripted", run_id=f"{plan.run_prefix}-replay")
    runs["replay"] = collect(replay_run, log, warn, progress, suites=replay_suites(suites, sim))
    replayed = run_records(runs["replay"].run_dir)
    figures = {
        "tasks": len(names),
        "success": success_figures(suites, real, sim, plan),
        "wm2real": _wm2real(suites, sim, replayed, plan),
    }
    if plan.control:
        controlled = dataclasses.replace(simulated, run_id=f"{plan.run_prefix}-controlled",
                                         simulation=plan.simulation.with_control(plan.control))  # fmt: skip
        runs["controlled"] = collect(controlled, log, warn, progress)
        figures["controllability"] = _per_group(
            suites, run_records(runs["controlled"].run_dir), controllability, plan.split
        )
    figures["runs"] = {name: collected.run_dir for name, collected in runs.items()}
    figures["errors"] = {name: c.result.infra_errors + c.result.task_errors for name, c in runs.items()}
    figures["errors"] = {name: n for name, n in figures["errors"].items() if n}
    return figures


def replay_suites(suites: list[Suite], simulated: dict[str, Trajectory]) -> list[Suite]:
    """One task per simulated episode, whose scripted actions are that episode's actions (the real task's files,
    setup and check otherwise): run with the scripted policy, it replays the episode in the real environment."""
    replays = []
    for suite in suites:
        tasks = []
        for task in suite.tasks:
            for key, record in sorted(simulated.items()):
                if key.rpartition("#")[0] == task_name(suite, task) and record.outcome.status != "infra_error":
                    repeat = key.rpartition("#")[2]
                    actions = tuple(t.action for t in record.turns)
                    tasks.append(dataclasses.replace(task, id=f"{task.id}{REPLAY_SEPARATOR}{repeat}", actions=actions))
        replays.append(dataclasses.replace(suite, tasks=tuple(tasks), faults=None, control=None))
    return replays


def _group(suite: Suite, task: Task, split: SplitConfig) -> str:
    return f"{suite.domain}/{family_label(family_of(suite, task), split)}"


def _keys(suites: list[Suite], records: dict[str, Trajectory], split: SplitConfig) -> dict[str, list[str]]:
    """group -> the episode keys of `records` that are of its tasks."""
    groups: dict[str, list[str]] = defaultdict(list)
    for suite in suites:
        for task in suite.tasks:
            for key in sorted(records):
                if key.rpartition("#")[0] == task_name(suite, task):
                    groups[_group(suite, task, split)].append(key)
                    groups["all"].append(key)
    return dict(groups)


def _per_group(suites: list[Suite], records: dict[str, Trajectory], figure: Callable, split: SplitConfig) -> dict:
    return {group: figure([records[k] for k in keys]) for group, keys in _keys(suites, records, split).items()}


def success_figures(suites, real, sim, plan: EpisodePlan) -> dict:
    """Per group, the confusion of real and simulated success (the simulated one as `simulated_success` reads it),
    and the agreement's 95% interval over the decided episodes, the repeats of one task one cluster
    (`agreement_interval`; None where none was decided)."""

    def figure(keys: list[str]) -> dict:
        keys = [k for k in keys if k in sim]
        pairs = [(outcome_success(real[k]), plan.simulated_success(sim[k])) for k in keys]
        decided = [(k.rpartition("#")[0], float(r == s)) for k, (r, s) in zip(keys, pairs, strict=True)
                   if r is not None and s is not None]  # fmt: skip
        interval = clustered_share_interval([a for _, a in decided], [t for t, _ in decided])[1:] if decided else None
        return success_confusion(pairs) | {"agreement_interval": list(interval) if interval else None}

    return {group: figure(keys) for group, keys in _keys(suites, real, plan.split).items()}


def replay_key(key: str) -> str:
    """The key of the replay (replay_suites) of the simulated episode `key`."""
    place, _, repeat = key.rpartition("#")
    return f"{place}{REPLAY_SEPARATOR}{repeat}#0"


def replayed_pairs(
    keys: list[str], sim: dict[str, Trajectory], replayed: dict[str, Trajectory], simulated_success=outcome_success
) -> list[tuple]:
    """(simulated turns, replayed turns, simulated success, real success of the replay) of each of `keys` that was
    replayed: what replay_figures reads."""
    return [
        (
            [t.model_dump() for t in sim[k].turns],
            [t.model_dump() for t in replayed[replay_key(k)].turns],
            simulated_success(sim[k]),
            outcome_success(replayed[replay_key(k)]),
        )
        for k in keys
        if replay_key(k) in replayed
    ]


def _wm2real(suites, sim, replayed, plan: EpisodePlan) -> dict:
    def figure(keys: list[str]) -> dict:
        return replay_figures(replayed_pairs(keys, sim, replayed, plan.simulated_success))

    return {group: figure(keys) for group, keys in _keys(suites, sim, plan.split).items()}
