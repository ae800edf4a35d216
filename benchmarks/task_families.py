"""The task families in their real environments: how many generated tasks their own scripted solutions solve, and
how fast a generated suite collects. Prints figures; a model-free measurement (the scripted policy).

    .venv/bin/python benchmarks/task_families.py solve [--per-family 1000] [--offset 0] [--suite NAME] [--concurrency 2]
    .venv/bin/python benchmarks/task_families.py collect [--episodes 2000] [--concurrency 2]

Targets: `solve` >= 99% per family (terminal-gen, mcp-kvstore-gen, mcp-workspace-gen); `collect` runs the
terminal family with `--policy scripted` in minutes on 2 cores, and says what an episode's time goes to.
"""

import argparse
import dataclasses
import statistics
import tempfile
import time

from results_record import add_results_option, start_record

from trajforge.collectors.collection import collect, start_docker
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.environments.terminal import TerminalSpec
from trajforge.collectors.tasks import load_suite
from trajforge.collectors.verify import unsolved_generated
from trajforge.sandboxes.base import Task

SUITES = ("terminal-gen", "mcp-kvstore-gen", "mcp-workspace-gen")


def solve(suites: list[str], per_family: int, offset: int, concurrency: int) -> None:
    client, docker_config = start_docker(None, log=print)
    settings = Settings(run_id="benchmark", image=docker_config["image"], docker_client=client)
    for name in suites:
        suite = load_suite(name)
        suite = dataclasses.replace(suite, tasks=suite.tasks[offset : offset + per_family])
        suite.environment.prepare(settings, print)
        started = time.monotonic()
        problems = unsolved_generated([suite], lambda spec: build_environment(spec.environment, settings), concurrency)
        seconds, n = time.monotonic() - started, len(suite.tasks)
        solved = n - len(problems)
        print(f"{name}: scripted solves {solved}/{n} = {100 * solved / n:.1f}% in {seconds:.0f}s "
              f"({60 * n / seconds:.0f} episodes/min)")  # fmt: skip
        for problem in problems[:10]:
            print(f"  {problem}")


def collect_run(episodes: int, concurrency: int) -> None:
    suite = load_suite("terminal-gen")
    tasks = tuple(t.id for t in suite.tasks[:episodes])
    with tempfile.TemporaryDirectory() as output:
        config = CollectConfig(suites=("terminal-gen",), tasks=tasks, output=output, concurrency=concurrency)
        started = time.monotonic()
        collected = collect(config, log=print, warn=print)
        seconds = time.monotonic() - started
    outcomes = {k.split(".", 1)[1]: v for k, v in collected.counts.items() if k.startswith("outcome.")}
    ran = collected.result.ran
    print(f"collect terminal-gen --policy scripted --concurrency {concurrency}: {ran} episodes in {seconds:.0f}s "
          f"= {60 * ran / seconds:.0f} episodes/min; outcomes {outcomes}")  # fmt: skip
    breakdown(suite.tasks[0])


def breakdown(task: Task, runs: int = 20) -> None:
    """Where one terminal episode's time goes, sequentially: start (container, shell, files), actions, check and
    removal of the container."""
    client, docker_config = start_docker(None, log=lambda _: None)
    settings = Settings(run_id="benchmark", image=docker_config["image"], docker_client=client)
    parts: dict[str, list[float]] = {"start": [], "actions": [], "check": [], "remove": []}
    for _ in range(runs):
        env = build_environment(TerminalSpec(), settings)
        ticks = [time.perf_counter()]
        env.reset(task)
        ticks.append(time.perf_counter())
        for action in task.actions:
            env.step(action)
        ticks.append(time.perf_counter())
        env.check(task)
        ticks.append(time.perf_counter())
        env.close()
        ticks.append(time.perf_counter())
        for part, before, after in zip(parts, ticks, ticks[1:], strict=False):
            parts[part].append(after - before)
    medians = ", ".join(f"{part} {1000 * statistics.median(s):.0f} ms" for part, s in parts.items())
    print(f"one terminal episode, sequential, median of {runs}: {medians}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("solve", "collect"))
    parser.add_argument("--per-family", type=int, default=1000, help="solve: the first N tasks of each family")
    parser.add_argument("--offset", type=int, default=0, help="solve: skip the first tasks of each family")
    parser.add_argument("--episodes", type=int, default=2000, help="collect: episodes of the terminal family")
    parser.add_argument("--suite", action="append", choices=SUITES, help="solve: only these (repeatable)")
    parser.add_argument("--concurrency", type=int, default=2)
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("task-families", args)
    if args.what == "solve":
        solve(args.suite or list(SUITES), args.per_family, args.offset, args.concurrency)
    else:
        collect_run(args.episodes, args.concurrency)
    record.write()


if __name__ == "__main__":
    main()
