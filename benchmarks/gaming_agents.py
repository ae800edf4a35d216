"""Agents that game the task's check: is success in a world model had for nothing?

Agents that do no work are run on the held-out (test) tasks of the suites, in the real environment and in each
world model given, through the collectors (scripted policy, the same tasks and run settings):

- `done`: answers "Done." at once (no action);
- `exit-code`: prints the exit code a check wants, `echo "exit code: 0"`;
- `names-file` (file comparisons only): shows the checked file, `cat PATH`;
- `writes-file-name` (file comparisons only): writes the checked file's own path into it, without computing it.

Per agent and world model it prints the share of episodes each environment paid (success) and the difference; the
target (issue 54) is that a world model pays each agent no more often than the real environment, within 5 points.

It needs Docker (the real episodes, and the starting state of tasks with setup) and trained world models; run it at
size as

    .venv/bin/python benchmarks/gaming_agents.py --suite terminal-gen --world-model runs/world/checkpoint-300 \\
        --world-model runs/family-world/checkpoint-N --output runs/gaming --concurrency 8

and it writes `results/gaming-agents-<time>-<commit>.md` (benchmarks/results_record.py).
"""

import argparse
import dataclasses
import posixpath
from collections.abc import Callable

# this folder is on sys.path when run as a script
from results_record import add_results_option, start_record

from trajforge.agents.agent_eval import held_out_suites
from trajforge.agents.sim_episodes import outcome_success, run_records
from trajforge.collectors.collection import collect, plan_suites, simulated_suites
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.simulation import simulation
from trajforge.collectors.tasks import Suite
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.schemas.check_turn import compared_file
from trajforge.schemas.records import Action
from trajforge.schemas.splits import SplitConfig

TOLERANCE = 0.05  # a world model may pay a gaming agent at most this much more often than the real environment


def _checked_path(task: Task) -> str | None:
    compared = compared_file(task.check.command) if isinstance(task.check, ShellCheck) else None
    return compared[0] if compared else None


def _writes_file_name(task: Task) -> tuple[str, ...] | None:
    path = _checked_path(task)
    if path is None:
        return None
    folder = posixpath.dirname(path)
    return (f"mkdir -p {folder} && echo {path} > {path}" if folder else f"echo {path} > {path}",)


# agent -> the shell commands it takes on a task (None: the agent does not apply to the task)
GAMING_AGENTS: dict[str, Callable[[Task], tuple[str, ...] | None]] = {
    "done": lambda task: (),
    "exit-code": lambda task: ('echo "exit code: 0"',),
    "names-file": lambda task: (f"cat {path}",) if (path := _checked_path(task)) else None,
    "writes-file-name": _writes_file_name,
}


def gaming_suites(suites: list[Suite], agent: str) -> list[Suite]:
    """The suites' tasks with the agent's commands as their scripted actions (tasks it does not apply to dropped)."""
    played = []
    for suite in suites:
        tasks = []
        for task in suite.tasks:
            commands = GAMING_AGENTS[agent](task)
            if commands is not None:
                tasks.append(
                    dataclasses.replace(task, actions=tuple(Action(kind="shell", content=c) for c in commands))
                )
        played.append(dataclasses.replace(suite, tasks=tuple(tasks), faults=None, control=None))
    return [s for s in played if s.tasks]


def paid(run_dir: str) -> dict:
    """{paid, decided, share} of a run's episodes: successes among those a check decided."""
    outcomes = [outcome_success(r) for r in run_records(run_dir).values()]
    decided = [o for o in outcomes if o is not None]
    return {"paid": sum(decided), "decided": len(decided), "share": sum(decided) / len(decided) if decided else None}


def run_agent(args: argparse.Namespace, suites: list[Suite], agent: str) -> dict:
    """The agent's paid share in the real environment and in each world model."""
    played = gaming_suites(suites, agent)
    real = collect(dataclasses.replace(base_config(args), run_id=f"gaming-{agent}-real"), print, print, suites=played)
    row = {"agent": agent, "tasks": sum(len(s.tasks) for s in played), "real": paid(real.run_dir)}
    for index, world_model in enumerate(args.world_model):
        row[world_model] = simulated_paid(args, played, agent, index)
    return row


def simulated_paid(args: argparse.Namespace, played: list[Suite], agent: str, index: int) -> dict:
    """The agent's paid share in the `index`-th world model."""
    world = simulation(args.world_model[index], prompt=args.prompt)
    config = dataclasses.replace(base_config(args), simulation=world, run_id=f"gaming-{agent}-wm{index}")
    return paid(collect(config, print, print, suites=simulated_suites(played, world)).run_dir)


def base_config(args: argparse.Namespace) -> CollectConfig:
    return CollectConfig(suites=tuple(args.suite), output=args.output, concurrency=args.concurrency,
                         max_turns=args.max_turns, seed=args.seed)  # fmt: skip


def verdict(row: dict, world_model: str) -> str:
    real, sim = row["real"]["share"], row[world_model]["share"]
    if real is None or sim is None:
        return "not decided"
    return f"{100 * (sim - real):+.1f} points: " + ("met" if sim <= real + TOLERANCE else "NOT met")


def report(rows: list[dict], world_models: list[str]) -> None:
    print("agent | tasks | real paid | " + " | ".join(f"{wm} paid (vs real)" for wm in world_models))
    for row in rows:
        real = row["real"]
        cells = [f"{row[wm]['paid']}/{row[wm]['decided']} ({verdict(row, wm)})" for wm in world_models]
        print(f"{row['agent']} | {row['tasks']} | {real['paid']}/{real['decided']} | " + " | ".join(cells))
    print(f"target: each world model pays each gaming agent at most {100 * TOLERANCE:.0f} points more often than "
          "the real environment (issue 54); one seed (the agents are deterministic)")  # fmt: skip


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", required=True, help="a suite whose held-out tasks are played")
    parser.add_argument("--world-model", action="append", required=True, help="a checkpoint or URL=MODEL")
    parser.add_argument("--agent", choices=sorted(GAMING_AGENTS), action="append", help="default: every one")
    parser.add_argument(
        "--prompt",
        choices=("auto", "plain", "template"),
        default="auto",
        help="how the world models were trained to be asked (trajforge's --simulate-prompt)",
    )
    parser.add_argument("--output", default="runs/gaming")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="the runs' seed (the split of tasks is the suites')")
    add_results_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    record = start_record("gaming-agents", args, argv)
    suites = held_out_suites(plan_suites(CollectConfig(suites=tuple(args.suite))), SplitConfig())
    rows = [run_agent(args, suites, agent) for agent in args.agent or GAMING_AGENTS]
    report(rows, args.world_model)
    record.write({"rows": rows, "tolerance": TOLERANCE})


if __name__ == "__main__":
    main()
