"""Sim RL, and what it buys, in one table: agents trained by RL in the REAL environment and inside a world model
(uncontrolled, and under sampled control specs), each measured in the REAL environment (Docker, the MCP server) on
TEST tasks of a generated family, clean and under real injected faults, with 95% intervals and each row's paired
difference from agent SFT on the same tasks; under the table the simulator's fidelity figures (`trajforge
sim-check`) and a plain-words reading against issue 22's targets.

    .venv/bin/python benchmarks/sim_rl.py                                # the tiny default (make sim-demo)
    .venv/bin/python benchmarks/sim_rl.py --family kvstore               # the MCP kvstore family alone
    .venv/bin/python benchmarks/sim_rl.py --init smollm2 --sft-steps 4 --rl-steps 1   # CPU: a taste
    .venv/bin/python benchmarks/sim_rl.py --agent-init smollm2 --agent-lr 1e-4 --guide scripted \\
        --rl-lr 2e-5 --rl-temperature 0.7                # a tiny world model, SmolLM2 as the agent
    .venv/bin/python benchmarks/sim_rl.py --init smollm2 --tasks 2000 --cpt-steps 300 --wm-sft-steps 200 \\
        --sft-steps 300 --rl-steps 30 --batch-size 8 --context-length 1024   # one GPU

It drives the real `trajforge` commands, each in this interpreter's environment, once per `--family` (default: the
terminal family, then the MCP kvstore family), each into OUTPUT/<family>/:
1. a suite of `--tasks` generated tasks of the family (written to OUTPUT/<family>/suite.yaml), collected three ways: the
   scripted policy, the explorer, and the scripted policy under `--faults unreliable` (whose trajectories say
   what was injected where); the task split (by the task's instruction and files: 10% test, 10% validation)
   decides which tasks no stage reads;
2. build-corpus over them and the world model: `train cpt` (then `train sft` when `--wm-sft-steps`);
3. agent SFT on the successful scripted trajectories of training tasks; with `--wm-agent-repeats N`, N real
   episodes per TRAINING task of that agent (sampled at the RL temperature) join the corpus and the world model is
   trained again on it with the same steps: the near-misses a learning agent makes, which scripted and explorer
   episodes never show, are what a simulator must judge when it rewards that agent (validation and test tasks
   stay unseen);
4. `sim-check` of the world model on the test tasks and corpus (single step beside both baselines; success
   agreement, WM2Real and controllability under `--control` with the SFT agent's episodes). With `--file-check
   auto` a first `sim-check --part validation` decides how the simulated RL rows decide a file comparison
   (`--simulate-file-check`): by the rule whose success agreement on the VALIDATION episodes is higher (the file's
   content on a tie) -- one bit chosen on the simulator's agreement on validation tasks, never on the test tasks
   or an agent's success;
5. from that agent, the same agent-RL steps (the same episodes) three times: in the real environment; in the world
   model (`--world-model WORLD`); in the world model under control specs sampled per episode (`--control`); each
   once per `--seeds` seed (agent-rl --seed; default one seed, 0), into OUTPUT/<family>/rl-real-seed-<seed>,
   rl-sim-seed-<seed> and rl-controlled-seed-<seed>;
6. `agent-eval` of every row (every seed's checkpoint), and of the scripted policy (model-free reference), on the
   test tasks, clean and under `--faults unreliable`: greedy, one episode per task (`--eval-repeats N` samples N
   at `--eval-temperature`); the header says how it sampled.

Every comparison the reading makes is a paired difference over the same test tasks with its 95% interval
(agents.agent_eval.paired_outcomes; an RL row's seeds pooled, a task's samples one cluster): a target is met
when the whole interval reaches it, NOT met when it lies wholly below, otherwise it cannot tell. An RL row over
several seeds shows the mean of its seeds' success and their spread (min-max, sd); a run of one seed says so.

OUTPUT/<family>/sim-rl.json holds a family's rows, the fidelity figures, each target with whether it is met, the
reading and the wall times; OUTPUT/sim-rl.json every family's, and the last table shows every family's rows
together. A world model trained on a few hundred episodes is small: the reading says plainly what it misses.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

# this folder is on sys.path when run as a script
from learning_signal import agent_rl_flags, agent_training_arguments, aligned, shape, steps_flags, trajforge
from results_record import add_results_option, start_record

from trajforge.agents.agent_eval import EpisodeSampling, paired_dict, paired_outcomes
from trajforge.evaluation.fidelity import one_sided
from trajforge.evaluation.paired import clustered_mean_interval
from trajforge.schemas.check_turn import FILE_CHECKS

SCRIPTED = "scripted (model-free reference)"
SFT = "agent SFT"
REAL_RL = "RL in the real environment"
SIM_RL = "RL in the simulator, uncontrolled"
CONTROLLED_RL = "RL in the simulator, controlled"
FAMILIES = {  # --family: (generator, suite domain, its environment line)
    "terminal": ("terminal-text", "terminal", "environment: {kind: terminal, tools: [shell]}\n"),
    "kvstore": ("kvstore", "mcp", "environment: {kind: mcp, server: kvstore}\n"),
}
DEMO_FAMILIES = ("terminal", "kvstore")  # make sim-demo: the terminal family the targets are set on, and an MCP row
# The family's context when --context-length is not given: a kvstore system prompt alone (tools, seed data) is
# 614-1,570 tokens, so at 512 the agent's first prompt would not fit.
CONTEXT_LENGTH = {"terminal": 512, "kvstore": 1024}
GAIN_POINTS, SHARE_OF_REAL, CONTROL_POINTS = 10.0, 0.8, 10.0
EXACT, AGREEMENT, PRODUCED = 0.8, 0.85, 0.9


def write_suite(path: Path, family: str, tasks: int, seed: int) -> Path:
    generator, domain, environment = FAMILIES[family]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"# written by benchmarks/sim_rl.py\nsuite: sim-rl-{family}\ndomain: {domain}\n{environment}"
        f"generated:\n  - {{family: {generator}, count: {tasks}, seed: {seed}}}\n"
    )
    return path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default="tiny", help="tiny (trained from scratch), smollm2, or a model folder: "
                        "the starting weights of the world model (and of the agent, unless --agent-init)")  # fmt: skip
    parser.add_argument("--agent-init", help="the agent's starting weights when not --init's: e.g. --init tiny "
                        "--agent-init smollm2, a cheap world model and an agent that copies words "
                        "(default: --init)")  # fmt: skip
    parser.add_argument("--agent-lr", type=float, help="agent-SFT peak learning rate (default: --lr)")
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append", help="a generated task family, "
                        f"repeatable (default: {' and '.join(DEMO_FAMILIES)}, one after the other)")  # fmt: skip
    parser.add_argument("--output", default="runs/sim-rl")
    parser.add_argument("--tasks", type=int, default=120, help="generated tasks (10%% test, 10%% validation)")
    parser.add_argument("--task-seed", type=int, default=0)
    parser.add_argument("--cpt-steps", type=int, default=60, help="world-model CPT steps")
    parser.add_argument("--wm-sft-steps", type=int, default=0, help="world-model SFT steps after CPT (0: none)")
    parser.add_argument("--sft-steps", type=int, default=100, help="agent-SFT steps")
    parser.add_argument("--rl-steps", type=int, default=3, help="agent-RL steps, the same for every RL row")
    parser.add_argument("--control", default="unreliable", help="the controlled row's control preset or YAML")
    parser.add_argument("--file-check", choices=("auto", *FILE_CHECKS), default="auto",
                        help="how the simulator decides a file comparison (--simulate-file-check); auto: the rule "
                        "with the higher success agreement in sim-check")  # fmt: skip
    parser.add_argument("--wm-agent-repeats", type=int, default=0, help="real episodes per training task of the "
                        "SFT agent added to the world model's corpus before it is trained again (0: none)")  # fmt: skip
    agent_training_arguments(parser)
    parser.set_defaults(context_length=None)  # by family (CONTEXT_LENGTH) unless given
    seeds_and_sampling_arguments(parser)
    parser.add_argument("--sim-check-limit", type=int, default=40, help="trajectories for single step, per part")
    parser.add_argument("--max-tokens", type=int, default=256, help="sim-check's longest single-step answer")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at once")
    add_results_option(parser)
    args = parser.parse_args(argv)
    args.families = list(dict.fromkeys(args.family or DEMO_FAMILIES))  # the defaults resolved here, once
    args.seeds = list(dict.fromkeys(args.seeds))
    if args.eval_repeats > 1 and args.eval_temperature <= 0:
        parser.error("--eval-repeats above 1 needs --eval-temperature above 0: greedy samples of a task are copies")
    args.agent_init = args.agent_init or args.init
    args.agent_lr = args.lr if args.agent_lr is None else args.agent_lr
    if args.agent_init == "tiny" and args.init != "tiny":
        parser.error("--agent-init tiny needs --init tiny: the tiny agent trains in the tiny world model's tokenizer")
    return args


def seeds_and_sampling_arguments(parser: argparse.ArgumentParser) -> None:
    """How many times the RL rows are trained, and how agent-eval samples their episodes."""
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="agent-rl --seed of the RL rows: each "
                        "is trained once per seed from the same agent-SFT start (default: one seed, 0)")  # fmt: skip
    parser.add_argument("--eval-repeats", type=int, default=1, help="agent-eval episodes per test task (1: greedy)")
    parser.add_argument("--eval-temperature", type=float, default=0.7, help="agent-eval's sampling temperature, "
                        "used only when --eval-repeats is above 1 (one episode per task is greedy)")  # fmt: skip


def trajforge_allowing_errors(*args: str) -> float:
    """A command whose exit code 1 means that some episodes ended with an infrastructure or task error (counted in
    its JSON, not the agent's failures): said, and the benchmark goes on; any other failure stops it."""
    started = time.perf_counter()
    print("+ trajforge " + " ".join(args), flush=True)
    code = subprocess.run([sys.executable, "-m", "trajforge", *args]).returncode
    if code == 1:
        print(f"  (trajforge {args[0]}: some episodes ended with an infrastructure or task error; see its JSON)")
    elif code:
        raise subprocess.CalledProcessError(code, ["trajforge", *args])
    return time.perf_counter() - started


def collect(args, out: Path, seconds: dict) -> Path:
    """Scripted, explorer and fault-injected episodes of every generated task, into OUTPUT/raw/<run-id>."""
    suite = write_suite(out / "suite.yaml", args.family, args.tasks, args.task_seed)
    runs = {"scripted": ["--policy", "scripted"], "explorer": ["--policy", "explorer"],
            "faults": ["--policy", "scripted", "--faults", "unreliable"]}  # fmt: skip
    for run_id, flags in runs.items():
        seconds[f"collect {run_id}"] = trajforge_allowing_errors(
            "collect", "--suite", str(suite), *flags, "--output", str(out / "raw"), "--run-id", run_id,
            "--concurrency", str(args.concurrency),
        )  # fmt: skip
    return suite


def world_model(args, out: Path, seconds: dict, suffix: str = "") -> Path:
    """The corpus of every collected episode (OUTPUT/raw/*), and the world model trained on it: CPT, then SFT when
    asked; `suffix` names a second one's folders (corpus-agent, world-agent)."""
    corpus, world = out / f"corpus{suffix}", out / f"world{suffix}"
    flags = ["--input", str(out / "raw"), "--output", str(corpus), "--min-turns", "0", "--no-near-dedup"]
    seconds[f"build-corpus{suffix}"] = trajforge("build-corpus", *flags)
    init = [] if args.init == "tiny" else ["--init", args.init]
    cpt = ["cpt", "--data", str(corpus), "-o", str(world), *init, *shape(args)]
    seconds[f"world model cpt{suffix}"] = trajforge("train", *cpt, *steps_flags(args.cpt_steps))
    checkpoint = world / f"checkpoint-{args.cpt_steps}"
    if not args.wm_sft_steps:
        return checkpoint
    sft_data, sft_world = out / f"wm-sft{suffix}", out / f"world-sft{suffix}"
    seconds[f"curate-sft{suffix}"] = trajforge("curate-sft", "--input", str(corpus), "--output", str(sft_data))
    sft = ["sft", "--data", str(sft_data), "-o", str(sft_world), "--init", str(checkpoint), *shape(args, sized=False)]
    seconds[f"world model sft{suffix}"] = trajforge("train", *sft, *steps_flags(args.wm_sft_steps))
    return sft_world / f"checkpoint-{args.wm_sft_steps}"


def training_tasks(suite: Path) -> list[str]:
    """The ids of the suite's tasks that agent-rl trains on (the default split's training tasks with a check)."""
    from trajforge.agents.rl import trainable_tasks
    from trajforge.collectors.tasks import load_suite
    from trajforge.schemas.splits import SplitConfig

    return [task.id for _, task in trainable_tasks([load_suite(str(suite))], SplitConfig())]


def world_model_with_agent(args, out: Path, sft: Path, seconds: dict) -> Path:
    """`--wm-agent-repeats` real episodes of every training task by the SFT agent, sampled as RL samples it, into
    OUTPUT/raw/agent; then the world model again, on every collected episode (OUTPUT/corpus-agent, world-agent)."""
    from trajforge.agents.config import AgentRLConfig

    temperature = args.rl_temperature if args.rl_temperature is not None else AgentRLConfig.gspo.temperature
    tasks = [flag for task in training_tasks(out / "suite.yaml") for flag in ("--task", task)]
    seconds["collect agent"] = trajforge_allowing_errors(
        "collect", "--suite", str(out / "suite.yaml"), "--agent", str(sft),
        "--temperature", str(temperature), "--repeats", str(args.wm_agent_repeats), "--max-turns", str(args.max_turns),
        "--output", str(out / "raw"), "--run-id", "agent", "--concurrency", str(args.concurrency), *tasks,
    )  # fmt: skip
    return world_model(args, out, seconds, suffix="-agent")


def agent_sft(args, out: Path, seconds: dict) -> Path:
    tiny = args.agent_init == "tiny"
    start = ["--tokenizer", str(out / "world" / "tokenizer")] if tiny else ["--init", args.agent_init]
    agent = argparse.Namespace(**{**vars(args), "init": args.agent_init, "lr": args.agent_lr})  # shape() of the agent
    seconds[SFT] = trajforge("train", "agent-sft", "--data", str(out / "raw" / "scripted"), "-o",
                             str(out / "agent-sft"), *start, *shape(agent), *steps_flags(args.sft_steps))  # fmt: skip
    return out / "agent-sft" / f"checkpoint-{args.sft_steps}"


RL_FOLDERS = {REAL_RL: "rl-real", SIM_RL: "rl-sim", CONTROLLED_RL: "rl-controlled"}


def rl_rows(args, out: Path, sft: Path, world: Path, rule: str, seconds: dict) -> dict[str, list[Path]]:
    """The three RL rows from the same agent with the same steps and episodes, each trained once per `--seeds`
    seed (agent-rl --seed) into OUTPUT/<row>-seed-<seed>; their checkpoints by row, in seed order."""
    simulate = ["--world-model", str(world), "--simulate-file-check", rule]
    flags = {REAL_RL: [], SIM_RL: simulate, CONTROLLED_RL: [*simulate, "--control", args.control]}
    rows: dict[str, list[Path]] = {row: [] for row in flags}
    for seed in args.seeds:
        for row, extra in flags.items():
            # the simulator's figures before RL (printed first): they read the SFT start, the same for every seed
            check = ["--sim-check-corpus", str(out / "corpus")] if row == SIM_RL and seed == args.seeds[0] else []
            folder = out / f"{RL_FOLDERS[row]}-seed-{seed}"
            seconds[f"{row}, seed {seed}"] = trajforge(
                "train", "agent-rl", "--suite", str(out / "suite.yaml"), "--init", str(sft), "-o", str(folder),
                *extra, *check, "--max-steps", str(args.rl_steps), "--save-every", str(args.rl_steps),
                *agent_rl_flags(args, seed=seed),
            )  # fmt: skip
            rows[row].append(folder / f"checkpoint-{args.rl_steps}")
    return rows


def eval_sampling(args) -> list[str]:
    """agent-eval's sampling flags: none for one episode per task (greedy, its default); for several, their
    temperature (several greedy episodes of a task would be copies of one)."""
    if args.eval_repeats == 1:
        return []
    return ["--repeats", str(args.eval_repeats), "--temperature", str(args.eval_temperature)]


def evaluate(args, out: Path, agents: dict[str, list[Path]], faults: bool, seconds: dict) -> dict:
    """agent-eval of the scripted policy and every checkpoint (every seed's) on the test tasks, in the real
    environment; its report (its rows in that order: the scripted policy's first)."""
    name = "eval-faults" if faults else "eval-clean"
    report = out / f"{name}.json"
    checkpoints = [checkpoint for row in agents.values() for checkpoint in row]
    seconds[name] = trajforge_allowing_errors(
        "agent-eval", "--policy", "scripted", *(x for c in checkpoints for x in ("--agent", str(c))),
        "--suite", str(out / "suite.yaml"), "--max-turns", str(args.max_turns), *eval_sampling(args),
        "--output", str(out / name), "--concurrency", str(args.concurrency), "--report", str(report),
        *(["--faults", "unreliable"] if faults else []),
    )  # fmt: skip
    return json.loads(report.read_text())


def reports_by_row(report: dict, agents: dict[str, list[Path]]) -> dict[str, list[dict]]:
    """Each row's agent-eval reports, one per checkpoint in seed order: the scripted policy's first, then the
    checkpoints in the order they were passed."""
    found = iter(report["agents"])
    rows = {SCRIPTED: [next(found)]}
    for row, checkpoints in agents.items():
        rows[row] = [next(found) for _ in checkpoints]
    return rows


def sim_check(args, out: Path, world: Path, sft: Path, seconds: dict, part: str = "test") -> dict:
    """sim-check of the world model with the agent every RL row starts from, on the tasks of `part`: whether the
    simulator decides that agent's successes and failures as the real environment does is what decides its rewards
    (the scripted policy never fails a generated task for real, so its agreement tests successes only)."""
    name = "sim-check" if part == "test" else f"sim-check-{part}"
    report = out / f"{name}.json"
    seconds[name] = trajforge_allowing_errors(
        "sim-check", "--world-model", str(world), "--agent", str(sft), "--corpus", str(out / "corpus"),
        "--suite", str(out / "suite.yaml"),
        "--control", args.control, "--limit", str(args.sim_check_limit), "--max-new-tokens", str(args.max_tokens),
        "--max-turns", str(args.max_turns), "--concurrency", str(args.concurrency), "-o", str(out / "sim-check"),
        "--report", str(report), "--part", part, *(["--no-plain"] if args.wm_sft_steps else []),  # SFT: its template
        "--simulate-file-check", "content" if args.file_check == "auto" else args.file_check,  # content: both rules
    )  # fmt: skip
    return json.loads(report.read_text())


def choose_file_check(args, out: Path, world: Path, sft: Path, seconds: dict) -> tuple[str, dict | None]:
    """The file-check rule of the simulated RL rows and, for auto, the validation sim-check that chose it (the
    test part's sim-check, read once by the final figures, never chooses)."""
    if args.file_check != "auto":
        return args.file_check, None
    validation = sim_check(args, out, world, sft, seconds, part="validation")
    return file_check_rule("auto", validation), validation


def file_check_rule(file_check: str, checked: dict) -> str:
    """The rule the simulated RL rows decide a file comparison by: `file_check`, or for auto the one with the higher
    success agreement in sim-check's episodes (under the content rule they record the exit code too)."""
    if file_check != "auto":
        return file_check
    success = checked.get("episodes", {}).get("success", {}).get("all", {})
    content, exit_code = success.get("agreement"), success.get("by_exit_code", {}).get("agreement")
    return "exit-code" if content is not None and exit_code is not None and exit_code > content else "content"


RL_ROWS = (REAL_RL, SIM_RL, CONTROLLED_RL)


def _score(reports: list[dict]) -> dict:
    """A row's success in one condition. One report (one checkpoint): its rate and 95% interval as agent-eval gave
    them. Several (one per seed): the mean of the seeds' rates and their spread (min, max, sd). Either way the
    per-task outcomes of each report, in seed order: what the paired differences read."""
    rates = [r["overall"]["success_rate"] for r in reports]
    score = {"episodes": sum(r["overall"]["scored"] for r in reports),
             "successes": sum(r["overall"]["successes"] for r in reports),
             "outcomes": [r.get("outcomes", {}) for r in reports]}  # fmt: skip
    if len(reports) == 1:
        low, high = reports[0]["overall"].get("interval") or (None, None)
        return score | {"success_rate": rates[0], "interval": [low, high], "per_seed": None, "spread": None}
    known = [rate for rate in rates if rate is not None]
    spread = None if not known else {"min": min(known), "max": max(known),
                                     "sd": statistics.stdev(known) if len(known) > 1 else 0.0}  # fmt: skip
    mean = sum(known) / len(known) if known else None
    return score | {"success_rate": mean, "interval": None, "per_seed": rates, "spread": spread}


def _mean_of(reports: list[dict], key: str) -> float | None:
    values = [r["overall"][key] for r in reports if r["overall"].get(key) is not None]
    return sum(values) / len(values) if values else None


def table(clean: dict[str, list[dict]], faulty: dict[str, list[dict]], seeds: list[int]) -> list[dict]:
    """One row per agent (`clean`/`faulty`: row -> its agent-eval reports, one per seed for an RL row): its success
    on the test tasks, clean and under real faults, and each row's paired difference from agent SFT's."""
    rows = []
    for name, reports in clean.items():
        rows.append({"row": name, "agents": [r["agent"] for r in reports], "model_free": reports[0]["model_free"],
                     "seeds": seeds if name in RL_ROWS else None, "clean": _score(reports),
                     "faults": _score(faulty[name]), "mean_turns": _mean_of(reports, "mean_turns"),
                     "unparseable_rate": _mean_of(reports, "unparseable_rate")})  # fmt: skip
    by_row = {r["row"]: r for r in rows}
    for r in rows:
        if r["row"] != SFT and SFT in by_row:
            r["vs_sft"] = {part: paired(by_row, SFT, r["row"], part) for part in ("clean", "faults")}
    return rows


def paired(rows: dict[str, dict], reference: str, other: str, part: str) -> dict | None:
    """`other`'s success minus `reference`'s in `part` (clean, faults), paired by task over the same test tasks
    and pooled over seeds (a task's samples one cluster); None when they share no scored task."""
    if reference not in rows or other not in rows:
        return None
    ours, theirs = aligned(rows[reference][part]["outcomes"], rows[other][part]["outcomes"])
    difference = paired_outcomes(ours, theirs)
    if difference is None:
        return None
    tasks = len(ours)
    of = "tasks" if difference.n == tasks else f"samples of {tasks} tasks, a task's one cluster"
    return paired_dict(difference, of) | {"tasks": tasks}


def fidelity(result: dict, rule: str = "content") -> dict:
    """sim-check's figures over all test turns and episodes, as the reading uses them; success agreement under
    the file-check `rule` the simulated rows use."""
    step = result["single_step"].get("all", {})
    world = step.get(result["world_model"], {})
    baselines = {n: f for n, f in step.items() if n != result["world_model"]}
    episodes = result.get("episodes", {})

    def over_all(part: str, key: str):
        return episodes.get(part, {}).get("all", {}).get(key)

    success = episodes.get("success", {}).get("all", {})
    if rule == "exit-code" and success.get("by_exit_code"):  # sim-check ran the content rule: both recorded
        success = success["by_exit_code"]

    return {
        "world_model": result["world_model"],
        "turns": world.get("turns"),
        "exact_match": world.get("exact_match"),
        "factuality": world.get("judge_factuality"),
        "baselines": {
            n: {"exact_match": f.get("exact_match"), "factuality": f.get("judge_factuality")}
            for n, f in baselines.items()
        },  # fmt: skip
        "file_check": rule,
        "success_agreement": success.get("agreement"),
        "real_outcomes": success.get("real_outcomes"),
        "wm2real_exact_match": over_all("wm2real", "exact_match"),
        "sim_successes_real": over_all("wm2real", "real_share_of_simulated_successes"),
        "faults_produced": over_all("controllability", "produced_share"),
        "produced_interval": over_all("controllability", "produced_interval"),  # over tasks, repeats one cluster
        "instructed_faults": over_all("controllability", "instructed_faults"),  # the denominator: every one asked
        "fault_tasks": over_all("controllability", "tasks"),
        "clean_turns": over_all("controllability", "clean_share"),
    }


def _at_least(value: float | None, target: float) -> bool | None:
    return None if value is None else value >= target


def decide(low: float | None, high: float | None, target: float) -> bool | None:
    """met (True) when the whole 95% interval reaches `target`, NOT met (False) when it lies wholly below it, and
    None (cannot tell) when it reaches both sides."""
    if low is None or high is None:
        return None
    return True if low >= target else False if high < target else None


def _gain_target(target: str, difference: dict | None, points: float) -> dict:
    """A target on a gain in points, decided by the paired difference's 95% interval against `points`."""
    found = {"target": target, "figure": None, "unit": "points", "paired": difference, "threshold": points}
    if difference is None:
        return found | {"met": None, "undecided_because": "the two rows share no scored test task"}
    low, high = 100 * difference["low"], 100 * difference["high"]
    return found | {"figure": 100 * difference["difference"], "met": decide(low, high, points)}


def share_margin(rows: dict[str, dict]) -> dict | None:
    """Per test task, the simulated gain minus SHARE_OF_REAL times the real one (both over agent SFT, clean), its
    mean with a 95% interval over tasks (a task's samples one cluster): above 0 where sim RL reaches the share."""
    sft, real, sim = aligned(*(rows[row]["clean"]["outcomes"] for row in (SFT, REAL_RL, CONTROLLED_RL)))
    values, clusters = [], []
    for task in sft:
        for s, r, c in zip(sft[task], real[task], sim[task], strict=True):
            values.append((c - s) - SHARE_OF_REAL * (r - s))
            clusters.append(task)
    if not values:
        return None
    mean, low, high = clustered_mean_interval(values, clusters)
    return {"mean": mean, "low": low, "high": high}


def _share_target(rows: dict[str, dict]) -> dict:
    """RL in the simulator's gain as a share of real RL's: both paired differences over agent SFT and the ratio of
    their means; decided by the paired margin, and never while real RL's gain holds zero."""
    real, sim = paired(rows, SFT, REAL_RL, "clean"), paired(rows, SFT, CONTROLLED_RL, "clean")
    target = f"RL in the simulator gains >= {SHARE_OF_REAL:.0%} of what RL in the real environment gains"
    found = {"target": target, "figure": None, "unit": "share", "met": None, "real_gain": real, "sim_gain": sim}
    if real is None or sim is None:
        return found | {"undecided_because": "the rows share no scored test task"}
    if real["low"] <= 0:
        where = "holds zero" if real["high"] >= 0 else "lies below zero"
        return found | {"undecided_because": f"RL in the real environment's gain over agent SFT, {real['describe']}, "
                        f"{where}: there is no gain to take a share of"}  # fmt: skip
    margin = share_margin(rows)
    met = None if margin is None else decide(margin["low"], margin["high"], 0.0)
    return found | {"figure": sim["difference"] / real["difference"], "margin": margin, "met": met}


def _controllability_target(fid: dict) -> dict:
    """Instructed faults produced, decided by its interval over tasks where sim-check gave one."""
    share, interval = fid["faults_produced"], fid.get("produced_interval")
    found = {"target": f"controllability: >= {PRODUCED:.0%} of instructed faults produced", "figure": share,
             "unit": "share", "met": decide(*interval, PRODUCED) if interval else _at_least(share, PRODUCED),
             "undecided_because": "sim-check's controlled episodes reached no instructed fault"
             if fid["instructed_faults"] == 0 else None}  # fmt: skip
    if interval and share is not None:
        found["detail"] = (f"{pct(share)} [{pct(interval[0])}, {pct(interval[1])}] of {fid['instructed_faults']} "
                           f"instructed faults over {fid['fault_tasks']} tasks; the denominator is every instructed "
                           "fault")  # fmt: skip
    return found


def targets(rows: dict[str, dict], fid: dict) -> list[dict]:
    """Each of issue 22's targets: its figure and whether it is met (None: this run cannot tell). A comparison of
    two rows is their paired difference over the same test tasks, met only when its 95% interval says so."""
    agreement_undecided = one_sided(fid["real_outcomes"])
    beats = [fid[k] is not None and all(b[k] is not None and fid[k] > b[k] for b in fid["baselines"].values())
             for k in ("exact_match", "factuality")]  # fmt: skip
    return [
        _gain_target(f"RL in the simulator raises real success over agent SFT by >= {GAIN_POINTS:.0f} points",
                     paired(rows, SFT, CONTROLLED_RL, "clean"), GAIN_POINTS),
        _share_target(rows),
        _gain_target(f"under real faults, controlled beats uncontrolled by >= {CONTROL_POINTS:.0f} points",
                     paired(rows, SIM_RL, CONTROLLED_RL, "faults"), CONTROL_POINTS),
        _controllability_target(fid),
        {"target": f"single-step exact match >= {EXACT:.0%}", "figure": fid["exact_match"], "unit": "share",
         "met": _at_least(fid["exact_match"], EXACT)},
        {"target": f"success agreement >= {AGREEMENT:.0%}", "figure": fid["success_agreement"], "unit": "share",
         "met": None if agreement_undecided else _at_least(fid["success_agreement"], AGREEMENT),
         "undecided_because": agreement_undecided},
        {"target": "the world model beats both baselines on factuality and exact match", "figure": None,
         "unit": "", "met": all(beats) if fid["baselines"] else None, "detail": _against_baselines(fid, beats)},
    ]  # fmt: skip


def _against_baselines(fid: dict, beats: list[bool]) -> str:
    """Which of the two figures the world model wins, against the best baseline of each."""
    said = []
    for key, won, shown in (("exact_match", beats[0], pct), ("factuality", beats[1], _num)):
        best = max((b[key] for b in fid["baselines"].values() if b[key] is not None), default=None)
        said.append(f"{key.replace('_', ' ')} {shown(fid[key])} {'beats' if won else 'does not beat'} the best "
                    f"baseline's {shown(best)}")  # fmt: skip
    return "; ".join(said)


def _figure(t: dict) -> str:
    if t["figure"] is None:
        return ""
    return f"{t['figure']:+.0f} points" if t["unit"] == "points" else f"{100 * t['figure']:.0f}%"


VERDICTS = {True: "met", False: "NOT met", None: "cannot tell from this run"}
WHERE = {True: "the whole 95% interval is at or above", False: "the whole 95% interval is below",
         None: "the 95% interval reaches both sides of"}  # fmt: skip


def seeds_said(seeds: list[int]) -> str:
    if len(seeds) == 1:
        return f"one seed ({seeds[0]}): each RL figure is from one seed"
    return f"{len(seeds)} seeds ({', '.join(map(str, seeds))}): each RL figure pools them"


def reading(found: list[dict], seeds: list[int]) -> str:
    """The targets in plain words: how many are met and from how many seeds, then each with its figure."""
    met = sum(t["met"] is True for t in found)
    lines = [f"{met} of {len(found)} targets met; the RL rows trained with {seeds_said(seeds)}."]
    lines += [f"- {t['target']}: {VERDICTS[t['met']]}{_detail(t)}" for t in found]
    return "\n".join(lines)


def _detail(t: dict) -> str:
    """What follows a target's verdict: its paired difference and interval against the threshold, or its figure."""
    if t.get("paired") is not None:
        return f": {t['paired']['describe']} on the same test tasks; {WHERE[t['met']]} {t['threshold']:+.0f} points"
    if "real_gain" in t:
        return _share_detail(t)
    figure = t.get("detail") or _figure(t)
    said = f" ({figure})" if figure else ""
    if t["met"] is None and t.get("undecided_because"):
        said += f" ({t['undecided_because']})"
    return said


def _share_detail(t: dict) -> str:
    sim, real = t["sim_gain"], t["real_gain"]
    if t["figure"] is None:
        return f" ({t['undecided_because']}" + (f"; RL in the simulator's: {sim['describe']})" if sim else ")")
    margin = t["margin"] or {}
    where = {True: "lies above 0", False: "lies below 0", None: "reaches both sides of 0"}[t["met"]]
    return (f": {t['figure']:.0%} of real RL's gain (the ratio of the means; over agent SFT, RL in the simulator "
            f"{sim['describe']}, RL in the real environment {real['describe']}); the paired margin, the simulated "
            f"gain minus {SHARE_OF_REAL:.0%} of the real one, {_points_interval(margin)} {where}")  # fmt: skip


def _points_interval(figures: dict) -> str:
    if figures.get("mean") is None:
        return "-"
    return f"{100 * figures['mean']:+.1f} points [{100 * figures['low']:+.1f}, {100 * figures['high']:+.1f}]"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _cell(score: dict) -> str:
    """One condition of a row: rate [95% interval] and counts; over several seeds the mean, min-max and sd."""
    counts = f"{score['successes']}/{score['episodes']}"
    spread = score.get("spread")
    if spread:
        seeds = f"{len(score['per_seed'])} seeds {pct(spread['min'])}-{pct(spread['max'])} sd {100 * spread['sd']:.1f}"
        return f"{pct(score['success_rate']):>4} mean, {seeds} {counts}"
    low, high = score["interval"] or (None, None)
    interval = f"[{pct(low)}, {pct(high)}]" if low is not None else "[-]"
    return f"{pct(score['success_rate']):>4} {interval:<11} {counts}"


COLUMNS = f"{'agent (test tasks, real environment)':<42} {'clean: success':<42} {'--faults unreliable':<42}"


def print_table(rows: list[dict], fid: dict) -> None:
    print(f"\n{COLUMNS}")
    for r in rows:
        print(f"{r['row']:<42} {_cell(r['clean']):<42} {_cell(r['faults']):<42}")
    print("\npaired against agent SFT on the same test tasks (row minus agent SFT, 95% interval, seeds pooled):")
    for r in rows:
        if r.get("vs_sft"):
            clean, faults = (_paired_text(r["vs_sft"][part]) for part in ("clean", "faults"))
            print(f"  {r['row']:<40} clean {clean}; --faults unreliable {faults}")
    bases = ", ".join(f"{n}: exact {pct(b['exact_match'])}, factuality {_num(b['factuality'])}"
                      for n, b in fid["baselines"].items())  # fmt: skip
    print(f"\nsimulator {fid['world_model']} (sim-check, test tasks): single step on {fid['turns']} turns: exact "
          f"{pct(fid['exact_match'])}, factuality {_num(fid['factuality'])} ({bases}); success agreement "
          f"{pct(fid['success_agreement'])} (file comparisons by {fid['file_check']}{_outcomes(fid)}); WM2Real exact "
          f"{pct(fid['wm2real_exact_match'])}, simulated successes real {pct(fid['sim_successes_real'])}; "
          f"{_produced(fid)}, clean turns {pct(fid['clean_turns'])}")  # fmt: skip


def _paired_text(difference: dict | None) -> str:
    return difference["describe"] if difference else "- (no shared scored task)"


def _produced(fid: dict) -> str:
    """Instructed faults produced, its interval over tasks and its denominator, every fault instructed."""
    interval = fid.get("produced_interval")
    shown = f" [{pct(interval[0])}, {pct(interval[1])}]" if interval else ""
    return (f"instructed faults produced {pct(fid['faults_produced'])}{shown} of {fid['instructed_faults']} "
            f"instructed (the denominator: every instructed fault) over {fid.get('fault_tasks')} tasks")  # fmt: skip


def _outcomes(fid: dict) -> str:
    real = fid.get("real_outcomes")
    return f"; real: {real['success']} successes, {real['failure']} failures" if real else ""


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def header(args, rows: list[dict], sampling: dict | None) -> str:
    """What the table below was measured on, how agent-eval sampled and from how many RL seeds."""
    world = f"{args.cpt_steps} world-model CPT steps" + (f" + {args.wm_sft_steps} SFT" if args.wm_sft_steps else "")
    if args.wm_agent_repeats:
        world += f" (trained again with {args.wm_agent_repeats} real SFT-agent episodes per training task)"
    agent = f" (agent: {args.agent_init})" if args.agent_init != args.init else ""
    how = EpisodeSampling(**sampling).describe() if sampling else "sampling not recorded"
    return (f"\nsim RL, --init {args.init}{agent}, family {args.family}: {args.tasks} generated tasks, "
            f"{rows[0]['clean']['episodes']} test episodes per row; {world}, {args.sft_steps} agent-SFT steps, "
            f"{args.rl_steps} agent-RL steps x {args.tasks_per_step} tasks x {args.group_size} episodes per RL row "
            f"(controlled: --control {args.control}), each RL row from the same agent-SFT start with "
            f"{seeds_said(args.seeds)}; agent-eval: {how}")  # fmt: skip


def family_arguments(args: argparse.Namespace, family: str) -> argparse.Namespace:
    """`args` for one family's run: its name, and its context length unless --context-length gave one."""
    return argparse.Namespace(**{**vars(args), "family": family,
                                 "context_length": args.context_length or CONTEXT_LENGTH[family]})  # fmt: skip


def print_summary(results: dict[str, dict]) -> None:
    """Every family's rows in one table, each with how many of its targets were met."""
    print(f"\n{'family':<10} {COLUMNS}")
    for family, result in results.items():
        for r in result["rows"]:
            print(f"{family:<10} {r['row']:<42} {_cell(r['clean']):<42} {_cell(r['faults']):<42}")
        met = sum(t["met"] is True for t in result["targets"])
        print(f"{family:<10} {met} of {len(result['targets'])} targets met (its reading above)")


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    record = start_record("sim-rl", args, argv)
    started = time.perf_counter()
    results = {f: run_family(family_arguments(args, f), Path(args.output) / f) for f in args.families}
    if len(results) > 1:
        print_summary(results)
    total = time.perf_counter() - started
    print(f"wall time, every family: {total:.0f} s")
    summary = Path(args.output) / "sim-rl.json"
    summary.write_text(json.dumps({"families": results, "wall_s": total}, indent=2) + "\n")
    print(f"-> {summary}")
    record.write({"families": results, "wall_s": total})


def train_family(args: argparse.Namespace, out: Path, seconds: dict) -> dict:
    """Collect, the world model, agent SFT, the file-check rule chosen on validation, the test sim-check and the
    RL rows (every seed's): what one family's table measures."""
    collect(args, out, seconds)
    world = world_model(args, out, seconds)
    sft = agent_sft(args, out, seconds)
    if args.wm_agent_repeats:
        world = world_model_with_agent(args, out, sft, seconds)
    rule, chosen_on = choose_file_check(args, out, world, sft, seconds)
    checked = sim_check(args, out, world, sft, seconds)
    agents = {SFT: [sft], **rl_rows(args, out, sft, world, rule, seconds)}
    return {"rule": rule, "chosen_on": chosen_on, "checked": checked, "agents": agents}


def run_family(args: argparse.Namespace, out: Path) -> dict:
    """One family's table, fidelity figures and reading (printed); its result, also written to OUT/sim-rl.json."""
    seconds, started = {}, time.perf_counter()
    trained = train_family(args, out, seconds)
    agents = trained["agents"]
    clean, faulty = (evaluate(args, out, agents, faults, seconds) for faults in (False, True))
    rows = table(reports_by_row(clean, agents), reports_by_row(faulty, agents), args.seeds)
    fid = fidelity(trained["checked"], trained["rule"])
    found = targets({r["row"]: r for r in rows}, fid)
    print(header(args, rows, clean.get("sampling")))
    print_table(rows, fid)
    said = reading(found, args.seeds)
    print(f"\n{said}")
    total = time.perf_counter() - started
    print(f"wall time: {total:.0f} s (" + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()) + ")")
    preflight = out / f"{RL_FOLDERS[SIM_RL]}-seed-{args.seeds[0]}" / "world-model-check.json"
    result = {"args": vars(args), "seeds": args.seeds, "sampling": clean.get("sampling"), "rows": rows,
              "fidelity": fid, "targets": found, "reading": said, "sim_check": trained["checked"],
              "file_check_chosen_on_validation": trained["chosen_on"],
              "preflight": json.loads(preflight.read_text()) if preflight.exists() else None,
              "seconds": seconds, "wall_s": total}  # fmt: skip
    (out / "sim-rl.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"-> {out / 'sim-rl.json'}")
    return result


if __name__ == "__main__":
    main()
