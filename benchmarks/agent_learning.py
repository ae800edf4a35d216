"""Does training agents work, and does world-model training help the agent? One table, measured in the REAL
environment (Docker) on HELD-OUT tasks of the generated terminal family (collectors/families/terminal_text.py).

    .venv/bin/python benchmarks/agent_learning.py                        # the tiny default (make agent-demo)
    .venv/bin/python benchmarks/agent_learning.py --init smollm2 --sft-steps 4 --rl-steps 1   # CPU: a taste
    .venv/bin/python benchmarks/agent_learning.py --init smollm2 --tasks 2000 --sft-steps 300 --cpt-steps 300 \\
        --rl-steps 30 --batch-size 8 --context-length 1024               # one GPU
    .venv/bin/python benchmarks/agent_learning.py --init smollm2 --tasks 2000 --sft-steps 40 --rl-steps 24 \\
        --lr 1e-4 --rl-lr 2e-5 --group-size 8 --guide scripted --rl-temperature 0.7   # guided agent RL (CPU: hours)

It drives the real `trajforge` commands, each in this interpreter's environment:
1. a suite of `--tasks` generated terminal tasks (written to OUTPUT/suite.yaml), collected with the scripted
   policy; the task split (schemas/splits.py, by the task's instruction and files: 10% test, 10% validation)
   decides which tasks no stage reads;
2. build-corpus over those trajectories and `train cpt`: the world model (it predicts observations);
3. the SAME agent-SFT steps three times on the successful trajectories of training tasks: (a) from an untrained
   model, (b) from the world-model checkpoint (LWM warm-up), (c) `--role both` (one model learns both roles);
   the tiny model of every row uses the world model's tokenizer, so the rows differ only in their weights;
4. `train agent-rl` from the SFT row chosen on the VALIDATION tasks (`agent-eval --part validation`: the highest
   success, a tie broken by the lower agent-SFT loss): the test tasks never choose anything. Once per `--seeds`
   seed, and with `--guide` also unguided from the same start and seeds (the same tasks and episode seeds);
5. `agent-eval` of every row on the test tasks, greedy, read once, with the scripted policy (model-free, it says
   so) and the untrained model (the tiny model with no step taken, or `--init` as it is) as reference rows;
6. the same rows on `--held-out-family-tasks` tasks of terminal-files (file-system work, a family no stage trains
   on): the out-of-distribution rows beside the in-family ones.

A stopped run, started again with the same flags and --output, continues where it was (benchmarks/stages.py): the
stages it finished are reused, a training stage resumes from its latest checkpoint.

It prints the table (success with its 95% Wilson interval, mean turns, unparseable-answer rate), whether
world-model training helped the agent and what agent RL did (each arm's mean and spread over the seeds, minus its
start, and guided minus unguided), each as a paired difference over the test tasks with its 95% interval
(evaluation/paired.py; a task's seeds one cluster), and the throughput (collect episodes/min, train tokens/s, agent-rl
episodes/min and sampled tokens/s, agent-eval episodes/min); OUTPUT/agent-learning.json holds all of it.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

# this folder is on sys.path when run as a script
from learning_signal import (
    agent_rl_flags,
    agent_training_arguments,
    aligned,
    drop_resume_points,
    metrics,
    rl_steps_flags,
    shape,
    steps_flags,
)
from results_record import add_results_option, start_record
from stages import Stages

from trajforge.agents.agent_eval import paired_dict, paired_outcomes
from trajforge.evaluation.paired import PairedDifference


def mean_of(run: Path, key: str) -> float | None:
    """The mean of a metric over a run's steps, the first left out when there are others (warm-up)."""
    figures = [m[key] for m in metrics(run) if key in m]
    figures = figures[1:] if len(figures) > 1 else figures
    return sum(figures) / len(figures) if figures else None


HELD_OUT_FAMILY = "terminal-files"  # file-system work, where every stage trains on text processing (terminal-text)
OUT_OF_FAMILY = "held-out family"  # evaluate's part for it: the test part of a suite of that family alone


def write_suite(path: Path, family: str, tasks: int, seed: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"# written by benchmarks/agent_learning.py\nsuite: {family}-bench\ndomain: terminal\n"
        "environment: {kind: terminal, tools: [shell]}\n"
        f"generated:\n  - {{family: {family}, count: {tasks}, seed: {seed}}}\n"
    )
    return path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--init",
        default="tiny",
        help="tiny (the default model, trained from scratch), smollm2, "
        "or a local model folder: the starting weights of the world model and of rows (a), (c)",
    )
    parser.add_argument("--output", default="runs/agent-learning")
    parser.add_argument("--tasks", type=int, default=300, help="generated terminal tasks (10%% test, 10%% validation)")
    parser.add_argument("--task-seed", type=int, default=0)
    parser.add_argument("--cpt-steps", type=int, default=50, help="world-model CPT steps")
    parser.add_argument("--sft-steps", type=int, default=150, help="agent-SFT steps, the same for every row")
    parser.add_argument("--rl-steps", type=int, default=4)
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        help="agent-rl's seeds: each RL arm is trained once per seed from the same start (its mean and spread)",
    )
    agent_training_arguments(parser)
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at once (collect, agent-eval)")
    add_results_option(parser)
    return parser.parse_args(argv)


def collect_and_world_model(args, out: Path, stages: Stages) -> Path:
    """Scripted episodes of every generated task, the corpus built from them and the world model trained on it."""
    suite = write_suite(out / "suite.yaml", "terminal-text", args.tasks, args.task_seed)
    world = out / "world" / f"checkpoint-{args.cpt_steps}"
    stages.run(
        "collect",
        out / "raw" / "scripted" / "_manifest.json",
        "collect",
        "--suite",
        str(suite),
        "--policy",
        "scripted",
        "--output",
        str(out / "raw"),
        "--run-id",
        "scripted",
        "--concurrency",
        str(args.concurrency),
    )
    stages.run(
        "build-corpus",
        out / "corpus" / "_manifest.json",
        "build-corpus",
        "--input",
        str(out / "raw"),
        "--output",
        str(out / "corpus"),
        "--min-turns",
        "0",
        "--no-near-dedup",
    )
    init = [] if args.init == "tiny" else ["--init", args.init]
    stages.run(
        "cpt",
        world,
        "train",
        "cpt",
        "--data",
        str(out / "corpus"),
        "-o",
        str(out / "world"),
        *init,
        *shape(args),
        *steps_flags(args.cpt_steps),
    )
    return world


def agent_sft_rows(args, out: Path, world: Path, stages: Stages) -> dict[str, Path]:
    """The three agent-SFT rows with the same steps, and the untrained reference, as checkpoints."""
    data = ["--data", str(out / "raw" / "scripted")]
    start = ["--tokenizer", str(out / "world" / "tokenizer")] if args.init == "tiny" else ["--init", args.init]
    runs = {
        "agent SFT from scratch": ("sft-scratch", [*start]),
        "agent SFT from world model": ("sft-world", ["--init", str(world)]),
        "agent SFT --role both": ("sft-both", [*start, "--role", "both"]),
    }
    rows = {}
    for row, (name, flags) in runs.items():
        rows[row] = out / name / f"checkpoint-{args.sft_steps}"
        stages.run(
            row,
            rows[row],
            "train",
            "agent-sft",
            *data,
            "-o",
            str(out / name),
            *flags,
            *shape(args, sized="--init" not in flags),
            *steps_flags(args.sft_steps),
        )
    if args.init == "tiny":  # the same tiny model with no step taken: learning rate 0
        stages.run(
            "untrained",
            out / "untrained" / "checkpoint-1",
            "train",
            "agent-sft",
            *data,
            "-o",
            str(out / "untrained"),
            *start,
            *shape(args),
            *steps_flags(1),
            "--lr",
            "0",
        )
        return {"untrained": out / "untrained" / "checkpoint-1", **rows}
    return {"untrained": Path(args.init), **rows}


def validation_loss(checkpoint: Path) -> float:
    loss = json.loads((checkpoint / "checkpoint.json").read_text())["metrics"].get("eval_loss")
    return float("inf") if loss is None else loss


def choose_rl_start(names: list[str], validation: list[dict], losses: dict[str, float]) -> str:
    """The agent-SFT row agent RL starts from: the highest success on the VALIDATION tasks (agent-eval --part
    validation reports, one per name), a tie broken by the lower agent-SFT loss, then by the order given."""
    rates = {name: report["overall"]["success_rate"] or 0.0 for name, report in zip(names, validation, strict=True)}
    return min(names, key=lambda name: (-rates[name], losses.get(name, float("inf")), names.index(name)))


def rl_arms(args) -> list[str]:
    """The guides agent RL runs with: --guide, and with a guide the unguided control from the same start and seeds
    (the same tasks and episode seeds at every step: the comparison is paired)."""
    return [args.guide] if args.guide == "none" else [args.guide, "none"]


def rl_label(guide: str, seed: int) -> str:
    return f"agent RL, {'no guide' if guide == 'none' else f'guide {guide}'}, seed {seed}"


def agent_rl(args, out: Path, rows: dict[str, Path], stages: Stages) -> tuple[str, dict[str, Path], dict]:
    """Agent RL from the agent-SFT row chosen on the validation tasks, once per arm (rl_arms) and seed; the row it
    started from, each run's last checkpoint by its label, and the validation figures that chose the start."""
    names = [r for r in rows if r != "untrained"]
    validation = evaluate(args, out, {name: rows[name] for name in names}, stages, part="validation")
    best = choose_rl_start(names, validation, {name: validation_loss(rows[name]) for name in names})
    chosen_by = {name: report["overall"] for name, report in zip(names, validation, strict=True)}
    runs = {}
    for seed in args.seeds:
        for guide in rl_arms(args):
            run = out / f"rl-{guide}-seed-{seed}"
            runs[rl_label(guide, seed)] = run / f"checkpoint-{args.rl_steps}"
            stages.run(
                f"agent-rl {guide} seed {seed}",
                runs[rl_label(guide, seed)],
                "train",
                "agent-rl",
                "--suite",
                str(out / "suite.yaml"),
                "--init",
                str(rows[best]),
                "-o",
                str(run),
                *rl_steps_flags(args.rl_steps),
                *agent_rl_flags(args, guide, seed),
            )
            drop_resume_points(runs[rl_label(guide, seed)])
    return best, runs, chosen_by


def evaluate(args, out: Path, agents: dict[str, Path], stages: Stages, part: str = "test") -> list[dict]:
    """agent-eval of every checkpoint on the tasks of `part`, one report per agent: on the test part the scripted
    policy first (model-free reference), read once by the final table; on the validation part the checkpoints
    alone, for the choice; on OUT_OF_FAMILY, the tasks of a family no stage trained on (HELD_OUT_FAMILY), all in its
    test part."""
    name = "test" if part == "test" else part.replace(" ", "-")
    report = out / ("agent-eval.json" if part == "test" else f"agent-eval-{name}.json")
    suite, split = ["--suite", str(out / "suite.yaml"), "--part", part], []
    if part == OUT_OF_FAMILY:
        suite = ["--suite", str(out / "suite-held-out-family.yaml"), "--part", "test"]
        split = ["--held-out-family", HELD_OUT_FAMILY]
    command = [
        "agent-eval",
        *(["--policy", "scripted"] if part != "validation" else []),
        *(x for c in agents.values() for x in ("--agent", str(c))),
        *suite,
        *split,
        "--max-turns",
        str(args.max_turns),
        "--output",
        str(out / ("eval" if part == "test" else f"eval-{name}")),
        "--concurrency",
        str(args.concurrency),
        "--report",
        str(report),
    ]
    stages.run("agent-eval" if part == "test" else f"agent-eval {part}", report, *command)
    return json.loads(report.read_text())["agents"]


def table(names: list[str], reports: list[dict]) -> list[dict]:
    """One row per agent: success, its interval, mean turns and unparseable rate over the test tasks."""
    rows = []
    for name, report in zip(names, reports, strict=True):
        overall = report["overall"]
        low, high = overall["interval"] or (None, None)
        rows.append(
            {
                "row": name,
                "agent": report["agent"],
                "model_free": report["model_free"],
                "episodes": overall["scored"],
                "successes": overall["successes"],
                "success_rate": overall["success_rate"],
                "interval": [low, high],
                "mean_turns": overall["mean_turns"],
                "unparseable_rate": overall["unparseable_rate"],
                "outcomes": report.get("outcomes", {}),
            }
        )
    return rows


def _validation_line(chosen_by: dict[str, dict]) -> str:
    return "; ".join(f"{name} {pct(o['success_rate']).strip()} of {o['scored']}" for name, o in chosen_by.items())


def pct(value: float | None) -> str:
    return "  -" if value is None else f"{100 * value:3.0f}%"


def print_table(rows: list[dict], tasks: str) -> None:
    print(
        f"\n{'agent, test tasks: ' + tasks:<56} {'success':>7}  {'95% interval':>13}  {'turns':>5}  {'unparseable':>11}"
    )
    for r in rows:
        low, high = r["interval"]
        interval = f"[{pct(low).strip()}, {pct(high).strip()}]" if low is not None else "-"
        turns = f"{r['mean_turns']:.1f}" if r["mean_turns"] is not None else "-"
        print(
            f"{r['row']:<56} {pct(r['success_rate']):>7}  {interval:>13}  {turns:>5}  "
            f"{pct(r['unparseable_rate']):>11}  ({r['successes']}/{r['episodes']})"
        )


def reading(difference: PairedDifference | None, better: str, worse: str) -> str:
    """A paired difference in plain words: which way its 95% interval says, or that it cannot tell."""
    if difference is None:
        return "no task scored by both rows, so this run cannot tell"
    said = difference.describe()
    if difference.low > 0:
        return f"{better}: {said}"
    if difference.high < 0:
        return f"{worse}: {said}"
    return f"cannot tell, the interval holds zero: {said}"


def verdict(rows: dict[str, dict]) -> str:
    """Whether world-model training helped the agent: the world-model row minus the from-scratch row, paired over
    the test tasks both scored."""
    scratch, world = rows["agent SFT from scratch"], rows["agent SFT from world model"]
    difference = paired_outcomes(scratch["outcomes"], world["outcomes"])
    said = reading(difference, "world-model training helped the agent", "world-model training HURT the agent")
    return f"Agent SFT from the world model minus from scratch: {said}."


def rl_summary(args, by_name: dict[str, dict], start: str) -> dict:
    """Per arm over the seeds: mean success and its spread, and the paired difference from the start row (a task's
    seeds one cluster); with a guide, guided minus unguided seed by seed (the same episodes)."""
    start_outcomes = [by_name[start]["outcomes"]]
    arms, per_seed = {}, {}
    for guide in rl_arms(args):
        runs = [by_name[rl_label(guide, seed)] for seed in args.seeds]
        rates = [r["success_rate"] or 0.0 for r in runs]
        per_seed[guide] = [r["outcomes"] for r in runs]
        gain = paired_outcomes(*aligned(start_outcomes, per_seed[guide]))
        arms[guide] = {
            "seeds": list(args.seeds),
            "success_mean": statistics.fmean(rates),
            "success_min": min(rates),
            "success_max": max(rates),
            "success_sd": statistics.stdev(rates) if len(rates) > 1 else None,
            "gain_over_start": paired_dict(gain),
            "reading": reading(gain, "agent RL raised success", "agent RL LOWERED success"),
        }
    if args.guide != "none":
        guided = paired_outcomes(*aligned(per_seed["none"], per_seed[args.guide]))
        arms["guided_minus_unguided"] = {
            "difference": paired_dict(guided),
            "reading": reading(guided, "the guide helped", "the guide HURT"),
        }
    return arms


def print_rl_summary(args, arms: dict, start: str, tasks: str) -> None:
    seeds = f"{len(args.seeds)} seeds ({', '.join(map(str, args.seeds))})" if len(args.seeds) > 1 else "one seed"
    print(f"\nagent RL from {start}, {seeds}, greedy success {tasks}:")
    for guide in rl_arms(args):
        arm = arms[guide]
        spread = f", min {pct(arm['success_min']).strip()} max {pct(arm['success_max']).strip()}"
        spread += f", sd {100 * arm['success_sd']:.1f} points" if arm["success_sd"] is not None else ""
        print(
            f"  {'no guide' if guide == 'none' else f'guide {guide}'}: mean {pct(arm['success_mean']).strip()}{spread}"
        )
        print(f"    minus its start: {arm['reading']}")
    if "guided_minus_unguided" in arms:
        print(f"  guided minus unguided (same start, seeds and episodes): {arms['guided_minus_unguided']['reading']}")


def throughput(args, out: Path, seconds: dict) -> dict:
    """Episodes/min and tokens/s of each stage, from wall times and the runs' metrics."""
    episodes, rl_run = args.tasks, out / f"rl-{args.guide}-seed-{args.seeds[0]}"  # the first arm's first seed
    figures = {
        "collect_episodes_per_min": 60 * episodes / seconds["collect"],
        "cpt_tokens_per_s": mean_of(out / "world", "tokens_per_s"),
        "agent_sft_tokens_per_s": mean_of(out / "sft-scratch", "tokens_per_s"),
        "agent_rl_episodes_per_min": mean_of(rl_run, "episodes_per_min"),
        "agent_rl_sampled_tokens_per_s": mean_of(rl_run, "tokens_per_s"),
    }
    return {k: round(v, 1) for k, v in figures.items() if v is not None}


def held_out_family(args, out: Path, agents: dict[str, Path], stages: Stages, best: str) -> dict | None:
    """Every row on the tasks of a family no stage trained on (out of distribution), and agent RL read there
    against its start; None with --held-out-family-tasks 0."""
    if not args.held_out_family_tasks:
        return None
    write_suite(out / "suite-held-out-family.yaml", HELD_OUT_FAMILY, args.held_out_family_tasks, args.task_seed)
    rows = table(["scripted (model-free reference)", *agents], evaluate(args, out, agents, stages, OUT_OF_FAMILY))
    print_table(rows, f"held-out family {HELD_OUT_FAMILY} (real Docker)")
    arms = rl_summary(args, {r["row"]: r for r in rows}, best)
    print_rl_summary(args, arms, best, f"on the held-out family {HELD_OUT_FAMILY}")
    return {"family": HELD_OUT_FAMILY, "rows": rows, "rl": arms}


def main() -> None:
    args = arguments()
    record = start_record("agent-learning", args)
    out, started = Path(args.output), time.perf_counter()
    stages = Stages(out, vars(args))
    world = collect_and_world_model(args, out, stages)
    checkpoints = agent_sft_rows(args, out, world, stages)
    best, runs, chosen_by = agent_rl(args, out, checkpoints, stages)
    agents = {**checkpoints, **runs}
    reports = evaluate(args, out, agents, stages)
    rows = table(["scripted (model-free reference)", *agents], reports)
    by_name = {r["row"]: r for r in rows}
    held_out = rows[0]["episodes"]
    print(
        f"\nagent learning, --init {args.init}: {args.tasks} generated terminal tasks, {held_out} in the test part; "
        f"{args.cpt_steps} CPT steps, {args.sft_steps} agent-SFT steps per row, {args.rl_steps} agent-RL steps; "
        "agent-eval greedy, 1 sample per task; comparisons paired over the test tasks, 95% intervals"
    )
    print_table(rows, "in family terminal-text (real Docker)")
    sentence = verdict(by_name)
    arms = rl_summary(args, by_name, best)
    print(f"\n{sentence}\nThe RL start, {best}, was chosen on the validation tasks ({_validation_line(chosen_by)}).")
    print_rl_summary(args, arms, best, "on the test tasks")
    out_of_family = held_out_family(args, out, agents, stages, best)
    seconds = stages.seconds
    figures = throughput(args, out, seconds)
    figures["agent_eval_episodes_per_min"] = round(60 * held_out * len(reports) / seconds["agent-eval"], 1)
    print("throughput: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    total = time.perf_counter() - started
    print(stages.summary(total))
    result = {
        "init": args.init,
        "args": vars(args),
        "rows": rows,
        "verdict": sentence,
        "rl_from": best,
        "rl_start_validation": chosen_by,
        "rl": arms,
        "held_out_family": out_of_family,
        "throughput": figures,
        "stages": stages.provenance(),
        "wall_s": total,
    }
    (out / "agent-learning.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"-> {out / 'agent-learning.json'}")
    record.write(result)


if __name__ == "__main__":
    main()
