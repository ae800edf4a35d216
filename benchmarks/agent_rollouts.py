"""Agent-RL rollout throughput by concurrency and prefix cache: the same steps' episodes (the same tasks and
sampling seeds) run `--concurrency` at a time, each with every prompt read whole (`--prefix-cache off`) and read on
from the contexts kept from earlier turns and from the group's shared first prompt (`on`, agents/prefix_cache.py),
against the first row as the baseline, measured in the same run.

    .venv/bin/python benchmarks/agent_rollouts.py --init CHECKPOINT --suite SUITE [--concurrency 8 32]
        [--prefix-cache off on]

Each row runs `--steps` steps' rollouts of agent RL (`AgentRL.rollouts`: G episodes of each of the step's tasks,
each in its own real environment, answers sampled in shared batches); no update, so every row samples from the
same model with the same seeds and succeeds about as often. Printed per row: successes, episodes/min, generated
tokens/s, the mean generate batch, the share of prompt tokens taken from the cache, and the ratio to the baseline.
Needs Docker and the sandbox image; `--init smollm2` for the real model.
"""

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from results_record import add_results_option, start_record


def measure(args, concurrency: int, reuse: bool, folder: Path) -> dict:
    from trajforge.agents.config import AgentRLConfig
    from trajforge.agents.rl import AgentRL

    gspo = replace(
        AgentRLConfig.gspo, group_size=args.group_size, max_new_tokens=args.max_new_tokens, temperature=args.temperature
    )
    config = AgentRLConfig(
        output=str(folder / f"c{concurrency}-{reuse}"), init=args.init, gspo=gspo, tasks_per_step=args.tasks_per_step,
        run=replace(AgentRLConfig.run, suites=tuple(args.suite), max_turns=args.max_turns, concurrency=concurrency),
    )  # fmt: skip
    run = AgentRL(config, log=lambda *_: None, warn=print)
    if not reuse:
        run.actor.prefix_cache = None
    episodes, successes, seconds = 0, 0, 0.0
    for step in range(args.steps):
        started = time.perf_counter()
        groups, _ = run.rollouts(step)
        seconds += time.perf_counter() - started
        episodes += sum(len(g) for g in groups)
        successes += int(sum(r.reward for g in groups for r in g))
        print(f"  concurrency {concurrency}, prefix cache {'on' if reuse else 'off'}, step {step + 1}: "
              f"{episodes} episodes, {successes} successes")  # fmt: skip
    batches, cache = run.actor.broker.batch_sizes, run.actor.prefix_cache
    return {
        "concurrency": concurrency,
        "prefix_cache": "on" if reuse else "off",
        "reused": cache.reused if cache else 0.0,
        "episodes": episodes,
        "successes": successes,
        "seconds": seconds,
        "episodes_per_min": 60 * episodes / seconds,
        "tokens_per_s": run.actor.generated_tokens / seconds,
        "mean_batch": statistics.mean(batches) if batches else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", required=True, help="a checkpoint that can act (agent-sft's), or smollm2")
    parser.add_argument("--suite", action="append", default=None, help="suite name or .yaml (default terminal-gen)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32], help="the first is the baseline's")
    parser.add_argument("--prefix-cache", nargs="+", choices=("off", "on"), default=["off", "on"],
                        help="each concurrency with each; the first is the baseline's")  # fmt: skip
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--temperature", type=float, default=0.7)
    add_results_option(parser)
    args = parser.parse_args()
    args.suite = args.suite or ["terminal-gen"]
    record = start_record("agent-rollouts", args)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(args, c, p == "on", Path(tmp)) for c in args.concurrency for p in args.prefix_cache]
    base = rows[0]
    print(f"\nagent-rl rollouts, {args.steps} steps of {args.tasks_per_step} tasks x G {args.group_size}, {args.init}")
    columns = ("concurrency", "prefix cache", "episodes", "success", "seconds", "episodes/min", "tokens/s", "batch",
               "reused")  # fmt: skip
    print(" ".join(f"{c:>12}" for c in columns), "ratio")
    for r in rows:
        ratio = r["episodes_per_min"] / base["episodes_per_min"]
        cells = (r["concurrency"], r["prefix_cache"], r["episodes"], r["successes"], f"{r['seconds']:.1f}",
                 f"{r['episodes_per_min']:.1f}", f"{r['tokens_per_s']:.1f}", f"{r['mean_batch']:.1f}",
                 f"{r['reused']:.0%}")  # fmt: skip
        print(" ".join(f"{c:>12}" for c in cells), f"{ratio:.2f}x")
    record.write({"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
