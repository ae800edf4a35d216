"""Does each stage do its job on a real model? CPT, CPT without masking, SFT and RL from a starting model, then one
evaluation table over the held-out tasks (the demo's table), and the throughput of every stage.

    .venv/bin/python benchmarks/learning_signal.py --init smollm2 --steps 4            # CPU: a small N
    .venv/bin/python benchmarks/learning_signal.py --init smollm2 --steps 300 \\
        --context-length 1024 --batch-size 8 --eval-limit 40 --max-new-tokens 256      # one GPU: minutes

It reads the data that `make demo` leaves under data/demo (corpus, sft, rl; `--data` for another folder) and runs
the same `trajforge` commands as the demo's train and eval lines, scaled by the options. The rows: the starting
model as it is ("untrained" when it is trained from scratch), CPT, CPT with every observation in the loss
(`--no-mask`, same steps), SFT from CPT, RL from SFT. It prints the evaluation table, the RL reward of the first
and last steps, and tokens/s per stage (CPT/SFT: tokens through forward and backward; RL: sampled tokens per
second of whole steps; eval: answers per minute).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from results_record import add_results_option, start_record


def trajforge(*args: str) -> float:
    """Run one CLI command in this interpreter's environment; its wall time in seconds."""
    return measured_trajforge(*args)[0]


def measured_trajforge(*args: str, episode_errors_allowed: bool = False) -> tuple[float, float]:
    """Run one CLI command in this interpreter's environment; its wall time in seconds and its peak resident memory
    in MiB (the command's process, or the largest process it waited for: sandboxes' containers are not counted).
    With `episode_errors_allowed` (collect, agent-eval, sim-check), exit code 1, some episodes ended with an
    infrastructure or task error (counted in the command's JSON, never the agent's failures), is said and the
    benchmark goes on; any other failure raises."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "trajforge", *args]
    print("+ trajforge " + " ".join(args), flush=True)
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode == 1 and episode_errors_allowed:
        print(f"  (trajforge {args[0]}: some episodes ended with an infrastructure or task error; see its JSON)")
    elif process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def metrics(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def model_size_arguments(parser: argparse.ArgumentParser) -> None:
    """The tiny default model's width and depth, for a benchmark that can train it."""
    parser.add_argument("--hidden-size", type=int, help="the tiny model's width (default: train's)")
    parser.add_argument("--layers", type=int, help="the tiny model's depth (default: train's)")


def agent_training_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags the agent benchmarks (agent_learning, sim_rl) share: the CPT/SFT shape and the agent-RL settings."""
    parser.add_argument("--lr", type=float, help="CPT/SFT peak learning rate (default: train's, by model)")
    parser.add_argument("--rl-lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--context-length", type=int, default=512)
    model_size_arguments(parser)
    parser.add_argument("--group-size", type=int, default=4, help="agent-rl episodes per task")
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=4, help="turns per episode (agent-rl and agent-eval)")
    parser.add_argument("--rl-temperature", type=float, help="agent-rl sampling temperature (default: train's)")
    parser.add_argument(
        "--guide",
        default="none",
        choices=["none", "scripted", "scripted-weighted"],
        help="agent-rl --guide: a demonstration step inside the GSPO update (the task's scripted episode joins a "
        "group whose episodes all failed); with a guide, every RL run also runs unguided from the same start, seeds "
        "and episodes",
    )
    parser.add_argument(
        "--held-out-family-tasks",
        type=int,
        default=40,
        help="tasks of a generated family of the same environment that no stage trains on (terminal-files beside "
        "the terminal family), every row evaluated on them for the held-out-family rows (0: none)",
    )


def agent_rl_flags(args: argparse.Namespace, guide: str | None = None, seed: int | None = None) -> list[str]:
    """The agent-RL settings every RL row of a benchmark shares (`guide`, `seed`: one arm's, else --guide and
    agent-rl's default seed); a step's episodes run at once, so their answers share one generate batch
    (benchmarks/agent_rollouts.py)."""
    flags = ["--lr", str(args.rl_lr), "--group-size", str(args.group_size), "--tasks-per-step"]
    flags += [str(args.tasks_per_step), "--max-turns", str(args.max_turns), "--guide", guide or args.guide]
    flags += ["--concurrency", str(args.group_size * args.tasks_per_step)]
    flags += ["--seed", str(seed)] if seed is not None else []
    return flags + (["--temperature", str(args.rl_temperature)] if args.rl_temperature is not None else [])


def aligned(*outcomes: list[dict]) -> list[dict[str, list[int]]]:
    """Rows' per-task outcomes (each row: one dict task -> outcomes per seed) laid side by side, one dict per row:
    a row of one seed stands beside each seed of the others, rows of the same seeds pair seed with seed; a task
    counts where every seed of every row scored it, with as many samples as the fewest of them."""
    seeds = max(len(o) for o in outcomes)
    if any(len(o) not in (1, seeds) for o in outcomes):
        raise ValueError(f"rows of {sorted({len(o) for o in outcomes})} seeds cannot be paired seed with seed")
    rows = [o * seeds if len(o) == 1 else o for o in outcomes]
    tasks = sorted(set.intersection(*(set(seed) for row in rows for seed in row)))
    kept = {t: min(len(seed[t]) for row in rows for seed in row) for t in tasks}
    return [{t: [x for seed in row for x in seed[t][: kept[t]]] for t in tasks} for row in rows]


def shape(args: argparse.Namespace, sized: bool = True) -> list[str]:
    """The training flags every CPT/SFT run of a benchmark shares: context, batch, peak learning rate and, for the
    tiny default when the run builds it (`sized`; a run from --init takes its checkpoint's), its width and depth."""
    flags = ["--context-length", str(args.context_length), "--batch-size", str(args.batch_size)]
    flags += ["--lr", str(args.lr)] if args.lr is not None else []
    if args.init == "tiny" and sized:
        flags += ["--hidden-size", str(args.hidden_size)] if args.hidden_size else []
        flags += ["--layers", str(args.layers)] if args.layers else []
    return flags


def steps_flags(steps: int, checkpoints: int = 1) -> list[str]:
    """A run of `steps` steps, evaluated on the validation part and saved `checkpoints` times, evenly spaced, the
    last at its end."""
    every = str(max(1, steps // max(1, checkpoints)))
    return ["--max-steps", str(steps), "--eval-every", every, "--save-every", every]


def rl_steps_flags(steps: int) -> list[str]:
    """An agent-RL run of `steps` steps saved every quarter of them: a stopped run, started again, loses a quarter
    of its steps at worst (a SmolLM2 RL step takes minutes on a CPU). Once it finished, `drop_resume_points`."""
    return ["--max-steps", str(steps), "--save-every", str(max(1, steps // 4))]


def drop_resume_points(final: Path) -> None:
    """Remove the checkpoints a finished run saved before `final` only to resume from (rl_steps_flags): the tables
    read the final one, and a SmolLM2 checkpoint is 0.5 GB (a Sim RL table trains about twenty such runs)."""
    from trajforge.training.checkpoint import numbered_checkpoints

    if not final.exists():  # the run has not finished: its resume points are what it needs
        return
    step = int(final.name.split("-")[1])
    for number, folder in numbered_checkpoints(final.parent):
        if number < step:
            shutil.rmtree(folder)


def lowest_validation_loss(run: Path) -> tuple[Path, dict[int, float]]:
    """The run's saved checkpoint at the lowest validation loss (its in-training eval on the validation part; the
    earlier step on a tie) and every evaluated step's loss: a choice the test part never makes."""
    losses = {m["step"]: m["eval_loss"] for m in metrics(run) if "eval_loss" in m}  # a resumed step: its last line
    saved = {step: loss for step, loss in losses.items() if (run / f"checkpoint-{step}").is_dir()}
    if not saved:
        raise ValueError(f"{run} has no saved checkpoint with a validation loss")
    best = min(saved, key=lambda step: (saved[step], step))
    return run / f"checkpoint-{best}", losses


def mean_throughput(run: Path) -> float | None:
    """Mean tokens/s over the run's steps, the first one left out when there are others (warm-up)."""
    figures = [m["tokens_per_s"] for m in metrics(run) if "tokens_per_s" in m]
    figures = figures[1:] if len(figures) > 1 else figures
    return sum(figures) / len(figures) if figures else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default="smollm2", help="smollm2, a model folder, or `tiny` (the demo's model)")
    parser.add_argument("--steps", type=int, default=4, help="CPT and SFT steps (RL: a quarter, at least 2)")
    parser.add_argument("--rl-steps", type=int, help="RL steps (default: steps / 4, at least 2)")
    parser.add_argument("--data", default="data/demo", help="a folder with corpus/, sft/ and rl/ (make demo's)")
    parser.add_argument("--output", default="runs/learning-signal")
    parser.add_argument("--context-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=1)
    model_size_arguments(parser)
    parser.add_argument("--lr", type=float, help="CPT/SFT peak learning rate (default: by model size)")
    parser.add_argument("--rl-lr", type=float, default=1e-5)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=96, help="RL samples and eval answers")
    parser.add_argument("--eval-limit", type=int, default=2, help="held-out trajectories to evaluate on")
    add_results_option(parser)
    args = parser.parse_args()

    record = start_record("learning-signal", args)
    data, out = Path(args.data), Path(args.output)
    for part in ("corpus", "sft", "rl"):
        if not (data / part).is_dir():
            sys.exit(f"{data / part} is missing: run `make demo` first, or give --data")
    steps, rl_steps = args.steps, args.rl_steps or max(2, args.steps // 4)
    init = [] if args.init == "tiny" else ["--init", args.init]
    common = [*steps_flags(steps), *shape(args)]
    seconds = {}
    seconds["cpt"] = trajforge("train", "cpt", "--data", str(data / "corpus"), "-o", str(out / "cpt"), *init, *common)
    seconds["cpt --no-mask"] = trajforge(
        "train",
        "cpt",
        "--data",
        str(data / "corpus"),
        "--no-mask",
        "-o",
        str(out / "cpt-nomask"),
        *init,
        *common,
    )
    seconds["sft"] = trajforge(
        "train",
        "sft",
        "--data",
        str(data / "sft"),
        "-o",
        str(out / "sft"),
        "--init",
        str(out / f"cpt/checkpoint-{steps}"),
        *steps_flags(steps),
        *shape(args, sized=False),
    )
    seconds["rl"] = trajforge(
        "train", "rl", "--data", str(data / "rl"), "-o", str(out / "rl"),
        "--init", str(out / f"sft/checkpoint-{steps}"), "--max-steps", str(rl_steps), "--save-every", str(rl_steps),
        "--lr", str(args.rl_lr), "--group-size", str(args.group_size), "--max-new-tokens", str(args.max_new_tokens),
    )  # fmt: skip
    start = ["--untrained"] if args.init == "tiny" else ["--world-model", _starting_folder(args.init)]
    checkpoints = [out / f"cpt/checkpoint-{steps}", out / f"cpt-nomask/checkpoint-{steps}",
                   out / f"sft/checkpoint-{steps}", out / f"rl/checkpoint-{rl_steps}"]  # fmt: skip
    seconds["eval"] = trajforge(
        "eval", "--corpus", str(data / "corpus"), "--no-plain", "--limit", str(args.eval_limit),
        "--max-new-tokens", str(args.max_new_tokens), *start,
        *(x for c in checkpoints for x in ("--world-model", str(c))),
        "--report", str(out / "eval.json"),
    )  # fmt: skip

    rl = metrics(out / "rl")
    print(f"\nlearning signal from {args.init}: {steps} CPT/SFT steps, {rl_steps} RL steps")
    if rl:
        k = max(1, len(rl) // 4)
        first, last = (sum(m["reward"] for m in part) / k for part in (rl[:k], rl[-k:]))
        print(f"RL mean reward on its prompts: first {k} steps {first:.2f} -> last {k} steps {last:.2f}")
    reports = json.loads((out / "eval.json").read_text()) if (out / "eval.json").exists() else []
    answers = sum(r.get("samples", 0) for r in reports)
    print("stage            wall s   tokens/s")
    for stage, run in (("cpt", "cpt"), ("cpt --no-mask", "cpt-nomask"), ("sft", "sft"), ("rl", "rl")):
        rate = mean_throughput(out / run)
        print(f"{stage:<15} {seconds[stage]:>7.0f}   {rate:>8.1f}" if rate else f"{stage:<15} {seconds[stage]:>7.0f}")
    per_minute = f"   {60 * answers / seconds['eval']:.1f} answers/min" if answers else ""
    print(f"{'eval':<15} {seconds['eval']:>7.0f}{per_minute}")
    record.write({"seconds": seconds, "eval": reports})


def _starting_folder(init: str) -> str:
    from trajforge.training.model import resolve_init

    return str(resolve_init(init))


if __name__ == "__main__":
    main()
