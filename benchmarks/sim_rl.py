"""Sim RL, and what it buys, in one table (issue 55): agents trained by RL in the REAL environment and inside a
world model (uncontrolled, and under sampled control specs), each measured in the REAL environment (Docker, the MCP
server) on TEST tasks of a generated family, clean and under real injected faults, and on the tasks of a held-out
family no stage trains on, with 95% intervals and each row's paired difference from agent SFT on the same tasks;
under the table the simulator's fidelity figures (`trajforge sim-check`), what the audits of the simulated rows
found, and a plain-words reading against issue 55's targets, each decided by a 95% interval.

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
2. build-corpus over them and the world model: `train cpt` (then `train sft` when `--wm-sft-steps`), each saved
   `--wm-checkpoints` times within its steps and the checkpoint at the lowest VALIDATION loss kept;
3. agent SFT on the successful scripted trajectories of training tasks; with `--wm-agent-repeats N`, N real
   episodes per TRAINING task of that agent (sampled at the RL temperature) join the corpus and the world model is
   trained again on it with the same steps: the near-misses a learning agent makes, which scripted and explorer
   episodes never show, are what a simulator must judge when it rewards that agent (validation and test tasks
   stay unseen);
4. `sim-check` of the world model on the test tasks and corpus: single step beside both baselines (paired over the
   same turns), success agreement, WM2Real and controllability under `--control` with the SFT agent's episodes;
   the world model is never shown a check's expected value (a file comparison is decided by the file's content);
5. from that agent, the same agent-RL steps (the same episodes) three times: in the real environment; in the world
   model (`--world-model WORLD`); in the world model under control specs sampled per episode (`--control`); each
   once per `--seeds` seed (agent-rl --seed; default one seed, 0), into OUTPUT/<family>/rl-real-seed-<seed>,
   rl-sim-seed-<seed> and rl-controlled-seed-<seed>. With `--guide`, each of them runs guided and unguided from the
   same start, seeds and episodes (rl-real-<guide>-seed-<seed>, rl-real-none-seed-<seed>, ...). The simulated rows
   run with `--audit-every`: every so many steps a step's simulated episodes are replayed in the real environment
   (never trained on), and the run counts how often the world model paid an episode the real environment did not;
6. `agent-eval` of every row (every seed's checkpoint), and of the scripted policy (model-free reference), on the
   test tasks, clean and under `--faults unreliable`, and clean on `--held-out-family-tasks` tasks of the family's
   held-out family (terminal: terminal-files, file-system work; kvstore: none, no other generated family runs on
   its server): greedy, one episode per task (`--eval-repeats N` samples N at `--eval-temperature`); the header
   says how it sampled.

A stopped run, started again with the same flags and --output, continues where it was (benchmarks/stages.py, one
OUTPUT/<family>/stages.json per family): every stage it finished is reused with its seconds, peak memory and
commit, a training stage resumes from its latest checkpoint (agent RL saves every quarter of its steps), a folder
of a run with other flags is refused. The end of each family lists the stages reused, the wall time over every
stage and each stage's peak resident memory. `--from-agent-learning RUN` takes the stages an agent_learning.py run
already finished (suite, scripted collection, agent SFT, the real RL rows) where their flags agree
(sim_rl_adopt.py); with `--wm-agent-repeats` and a pretrained agent, only the world model with the agent's
episodes is trained.

Every comparison the reading makes is a paired difference over the same tasks with its 95% interval
(agents.agent_eval.paired_outcomes; an RL row's seeds pooled, a task's samples one cluster): a target is met
when the whole interval reaches it, NOT met when it lies wholly on the other side, otherwise it cannot tell. An RL
row over several seeds shows the mean of its seeds' success and their spread (min-max, sd); a run of one seed says
so. The targets (issue 55): single-step exact match >= 80% and success agreement >= 85% with both real successes
and real failures among the agent's episodes, each by its interval; the world model above copy and retrieval on
exact match and factuality, each paired difference above 0; the controlled row's real success above agent SFT's
(paired interval above 0) and at least 80% of what real RL gains with the same episodes; under real faults, the
controlled row above the uncontrolled one. With a guide, the targets read the guided rows.

OUTPUT/<family>/sim-rl.json holds a family's rows, the fidelity figures, the audits, each target with whether it
is met, the reading and its stages (seconds, peak memory, commit, reused); OUTPUT/sim-rl.json every family's, and
the last table shows every family's rows together. A world model trained on a few hundred episodes is small: the
reading says plainly what it misses.

This file runs the stages; the rows' names and folders are in sim_rl_rows.py, the table in sim_rl_table.py, the
targets and the reading in sim_rl_targets.py, the audits in sim_rl_audits.py.
"""

import argparse
import json
import time
from pathlib import Path

# this folder is on sys.path when run as a script
from learning_signal import (
    agent_rl_flags,
    agent_training_arguments,
    drop_resume_points,
    lowest_validation_loss,
    measured_trajforge,
    rl_steps_flags,
    shape,
    steps_flags,
)
from results_record import add_results_option, start_record
from sim_rl_adopt import adopt
from sim_rl_audits import audit_figures, print_audits
from sim_rl_rows import CONTROLLED_RL, PARTS, REAL_RL, SCRIPTED, SFT, SIM_RL, arm, rl_arms, rl_folder
from sim_rl_table import guided_minus_unguided, print_guides, print_summary, print_table, table
from sim_rl_targets import fidelity, reading, seeds_said, targets
from stages import Stages

from trajforge.agents.agent_eval import EpisodeSampling

FAMILIES = {  # --family: (generator, suite domain, its environment line)
    "terminal": ("terminal-text", "terminal", "environment: {kind: terminal, tools: [shell]}\n"),
    "kvstore": ("kvstore", "mcp", "environment: {kind: mcp, server: kvstore}\n"),
}
# A generated family of the same environment that no stage trains on: the held-out-family row. The kvstore server
# has none (the other generated MCP family, workspace, runs on its own server).
HELD_OUT_FAMILIES = {"terminal": "terminal-files", "kvstore": None}
DEMO_FAMILIES = ("terminal", "kvstore")  # make sim-demo: the terminal family the targets are set on, and an MCP row
# The family's context when --context-length is not given: a kvstore system prompt alone (tools, seed data) is
# 614-1,570 tokens, so at 512 the agent's first prompt would not fit.
CONTEXT_LENGTH = {"terminal": 512, "kvstore": 1024}
MANIFEST = "_manifest.json"  # written last: a collect run or corpus is complete once it exists


def write_suite(path: Path, family: str, tasks: int, seed: int, generator: str | None = None) -> Path:
    """A suite of `tasks` generated tasks in `family`'s environment: of its own generator, or of `generator` (its
    held-out family)."""
    own, domain, environment = FAMILIES[family]
    name = f"sim-rl-{family}" if generator is None else f"sim-rl-{generator}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"# written by benchmarks/sim_rl.py\nsuite: {name}\ndomain: {domain}\n{environment}"
        f"generated:\n  - {{family: {generator or own}, count: {tasks}, seed: {seed}}}\n"
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
    parser.add_argument("--wm-checkpoints", type=int, default=1, help="checkpoints of each world-model run, "
                        "evenly spaced: the one at the lowest validation loss is the world model")  # fmt: skip
    parser.add_argument("--sft-steps", type=int, default=100, help="agent-SFT steps")
    parser.add_argument("--rl-steps", type=int, default=3, help="agent-RL steps, the same for every RL row")
    parser.add_argument("--control", default="unreliable", help="the controlled row's control preset or YAML")
    parser.add_argument("--audit-every", type=int, default=1, help="agent-rl --audit-every of the simulated RL rows: "
                        "every N steps the step's simulated episodes are replayed in the real environment (real "
                        "episodes, never trained on) and the run counts the rewards the world model paid that the "
                        "real environment did not (0: never)")  # fmt: skip
    parser.add_argument("--wm-agent-repeats", type=int, default=0, help="real episodes per training task of the "
                        "SFT agent added to the world model's corpus before it is trained again (0: none)")  # fmt: skip
    parser.add_argument("--from-agent-learning", metavar="RUN", help="an agent_learning.py run folder (its "
                        "--output) whose finished suite, scripted collection, agent SFT and real-environment RL rows "
                        "this run takes instead of computing them (terminal family; the flags they share must "
                        "agree)")  # fmt: skip
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


EPISODE_COMMANDS = ("collect", "agent-eval", "sim-check")  # exit 1: some episodes ended with an infrastructure error


def run_command(*args: str) -> tuple[float, float]:
    """The stages' runner: the command's seconds and peak memory; an episode command's exit code 1 (some episodes
    ended with an infrastructure or task error, counted in its JSON, not the agent's failures) is said and the
    benchmark goes on, any other failure stops it."""
    return measured_trajforge(*args, episode_errors_allowed=args[0] in EPISODE_COMMANDS)


def family_stages(args: argparse.Namespace, out: Path) -> Stages:
    """One family's resumable stages, OUT/<family>/stages.json: its own flags (which other families run beside it
    changes none of its stages)."""
    return Stages(out, {k: v for k, v in vars(args).items() if k != "families"}, run=run_command)


def collect(args, out: Path, stages: Stages) -> Path:
    """Scripted, explorer and fault-injected episodes of every generated task, into OUTPUT/raw/<run-id>; the suite
    is written here unless taken from an agent_learning.py run (the same tasks under that run's suite name)."""
    suite = out / "suite.yaml"
    if not args.from_agent_learning:
        write_suite(suite, args.family, args.tasks, args.task_seed)
    runs = {"scripted": ["--policy", "scripted"], "explorer": ["--policy", "explorer"],
            "faults": ["--policy", "scripted", "--faults", "unreliable"]}  # fmt: skip
    for run_id, flags in runs.items():
        stages.run(
            f"collect {run_id}", out / "raw" / run_id / MANIFEST,
            "collect", "--suite", str(suite), *flags, "--output", str(out / "raw"), "--run-id", run_id,
            "--concurrency", str(args.concurrency),
        )  # fmt: skip
    return suite


def world_model(args, out: Path, stages: Stages, suffix: str = "") -> Path:
    """The corpus of every collected episode (OUTPUT/raw/*), and the world model trained on it: CPT, then SFT when
    asked, each saved `--wm-checkpoints` times and the checkpoint at its lowest validation loss kept (chosen on the
    validation part); `suffix` names a second one's folders and stages (corpus-agent, world-agent)."""
    corpus, world = out / f"corpus{suffix}", out / f"world{suffix}"
    flags = ["--input", str(out / "raw"), "--output", str(corpus), "--min-turns", "0", "--no-near-dedup"]
    stages.run(f"build-corpus{suffix}", corpus / MANIFEST, "build-corpus", *flags)
    init = [] if args.init == "tiny" else ["--init", args.init]
    cpt = ["cpt", "--data", str(corpus), "-o", str(world), *init, *shape(args)]
    stages.run(f"world model cpt{suffix}", world / f"checkpoint-{args.cpt_steps}", "train", *cpt,
               *steps_flags(args.cpt_steps, args.wm_checkpoints))  # fmt: skip
    checkpoint = chosen_on_validation(args, world, args.cpt_steps, f"world model CPT{suffix}")
    if not args.wm_sft_steps:
        return checkpoint
    sft_data, sft_world = out / f"wm-sft{suffix}", out / f"world-sft{suffix}"
    stages.run(f"curate-sft{suffix}", sft_data / MANIFEST, "curate-sft", "--input", str(corpus),
               "--output", str(sft_data))  # fmt: skip
    sft = ["sft", "--data", str(sft_data), "-o", str(sft_world), "--init", str(checkpoint), *shape(args, sized=False)]
    stages.run(f"world model sft{suffix}", sft_world / f"checkpoint-{args.wm_sft_steps}", "train", *sft,
               *steps_flags(args.wm_sft_steps, args.wm_checkpoints))  # fmt: skip
    return chosen_on_validation(args, sft_world, args.wm_sft_steps, f"world model SFT{suffix}")


def chosen_on_validation(args, run: Path, steps: int, what: str) -> Path:
    """The run's last checkpoint, or with --wm-checkpoints above 1 its checkpoint at the lowest validation loss."""
    if args.wm_checkpoints <= 1:
        return run / f"checkpoint-{steps}"
    checkpoint, losses = lowest_validation_loss(run)
    said = ", ".join(f"step {step} {loss:.3f}" for step, loss in sorted(losses.items()))
    print(f"{what}: {checkpoint.name}, the lowest validation loss ({said})")
    return checkpoint


def training_tasks(suite: Path) -> list[str]:
    """The ids of the suite's tasks that agent-rl trains on (the default split's training tasks with a check)."""
    from trajforge.agents.rl import trainable_tasks
    from trajforge.collectors.tasks import load_suite
    from trajforge.schemas.splits import SplitConfig

    return [task.id for _, task in trainable_tasks([load_suite(str(suite))], SplitConfig())]


def world_model_with_agent(args, out: Path, sft: Path, stages: Stages) -> Path:
    """`--wm-agent-repeats` real episodes of every training task by the SFT agent, sampled as RL samples it, into
    OUTPUT/raw/agent; then the world model again, on every collected episode (OUTPUT/corpus-agent, world-agent)."""
    from trajforge.agents.config import AgentRLConfig

    temperature = args.rl_temperature if args.rl_temperature is not None else AgentRLConfig.gspo.temperature
    tasks = [flag for task in training_tasks(out / "suite.yaml") for flag in ("--task", task)]
    stages.run(
        "collect agent", out / "raw" / "agent" / MANIFEST,
        "collect", "--suite", str(out / "suite.yaml"), "--agent", str(sft),
        "--temperature", str(temperature), "--repeats", str(args.wm_agent_repeats), "--max-turns", str(args.max_turns),
        "--output", str(out / "raw"), "--run-id", "agent", "--concurrency", str(args.concurrency), *tasks,
    )  # fmt: skip
    return world_model(args, out, stages, suffix="-agent")


def agent_sft(args, out: Path, stages: Stages) -> Path:
    tiny = args.agent_init == "tiny"
    start = ["--tokenizer", str(out / "world" / "tokenizer")] if tiny else ["--init", args.agent_init]
    agent = argparse.Namespace(**{**vars(args), "init": args.agent_init, "lr": args.agent_lr})  # shape() of the agent
    checkpoint = out / "agent-sft" / f"checkpoint-{args.sft_steps}"
    stages.run(SFT, checkpoint, "train", "agent-sft", "--data", str(out / "raw" / "scripted"), "-o",
               str(out / "agent-sft"), *start, *shape(agent), *steps_flags(args.sft_steps))  # fmt: skip
    return checkpoint


def rl_rows(args, out: Path, sft: Path, world: Path, corpus: Path, stages: Stages) -> dict[str, list[Path]]:
    """The three RL rows from the same agent with the same steps and episodes, each in every arm (rl_arms) and
    trained once per `--seeds` seed (agent-rl --seed) into its own folder (rl_folder), saved every quarter of its
    steps so a stopped run resumes; their final checkpoints by row name, in seed order. The first simulated run's
    preflight reads the single-step figures over `corpus` (the world model's)."""
    audit = ["--audit-every", str(args.audit_every)] if args.audit_every else []
    simulate = ["--world-model", str(world), *audit]
    flags = {REAL_RL: [], SIM_RL: simulate, CONTROLLED_RL: [*simulate, "--control", args.control]}
    arms = rl_arms(args)
    rows: dict[str, list[Path]] = {arm(row, guide): [] for row in flags for guide in arms}
    for guide in arms:  # every guided run first: on 2 cores the guided table is whole days before the unguided one
        for seed in args.seeds:
            for row, extra in flags.items():
                folder = rl_folder(out, row, guide, seed)
                # the simulator's figures before RL (printed first): they read the SFT start, the same for every run
                first = (row, guide, seed) == (SIM_RL, arms[0], args.seeds[0])
                check = ["--sim-check-corpus", str(corpus)] if first else []
                checkpoint = folder / f"checkpoint-{args.rl_steps}"
                stages.run(
                    f"{arm(row, guide)}, seed {seed}", checkpoint,
                    "train", "agent-rl", "--suite", str(out / "suite.yaml"), "--init", str(sft), "-o", str(folder),
                    *extra, *check, *rl_steps_flags(args.rl_steps),
                    *agent_rl_flags(args, guide, seed),
                )  # fmt: skip
                drop_resume_points(checkpoint)
                rows[arm(row, guide)].append(checkpoint)
    return rows


def eval_sampling(args) -> list[str]:
    """agent-eval's sampling flags: none for one episode per task (greedy, its default); for several, their
    temperature (several greedy episodes of a task would be copies of one)."""
    if args.eval_repeats == 1:
        return []
    return ["--repeats", str(args.eval_repeats), "--temperature", str(args.eval_temperature)]


def evaluate(args, out: Path, agents: dict[str, list[Path]], stages: Stages, part: str = "clean") -> dict:
    """agent-eval of the scripted policy and every checkpoint (every seed's) in the real environment, on the test
    tasks (`part` clean, or faults: under --faults unreliable), or clean on the held-out family's suite
    (held_out_family: all its tasks in the test part); its report (its rows in that order: the scripted policy's
    first)."""
    name = f"eval-{part.replace('_', '-')}"
    report = out / f"{name}.json"
    # by their real paths: agent-eval names an agent's run by the path it is given (sim_rl_adopt.py's links)
    checkpoints = [checkpoint.resolve() for row in agents.values() for checkpoint in row]
    suite = ["--suite", str(out / "suite.yaml")]
    if part == "held_out_family":
        suite = ["--suite", str(out / "suite-held-out-family.yaml"), "--held-out-family",
                 HELD_OUT_FAMILIES[args.family], "--part", "test"]  # fmt: skip
    stages.run(
        f"agent-eval {PARTS[part]}", report,
        "agent-eval", "--policy", "scripted", *(x for c in checkpoints for x in ("--agent", str(c))), *suite,
        "--max-turns", str(args.max_turns), *eval_sampling(args),
        "--output", str(out / name), "--concurrency", str(args.concurrency), "--report", str(report),
        *(["--faults", "unreliable"] if part == "faults" else []),
    )  # fmt: skip
    return json.loads(report.read_text())


def held_out_family(args, out: Path, agents: dict[str, list[Path]], stages: Stages) -> dict | None:
    """agent-eval of every row, clean, on `--held-out-family-tasks` tasks of the family's held-out family (a family
    of the same environment no stage trains on; OUT/<family>/suite-held-out-family.yaml); None where the family has
    none or with --held-out-family-tasks 0."""
    family = HELD_OUT_FAMILIES[args.family]
    if family is None or not args.held_out_family_tasks:
        return None
    if not args.from_agent_learning:  # else that run's, with its name (sim_rl_adopt.py)
        write_suite(out / "suite-held-out-family.yaml", args.family, args.held_out_family_tasks, args.task_seed, family)
    return evaluate(args, out, agents, stages, "held_out_family")


def held_out_said(args) -> str:
    family = HELD_OUT_FAMILIES[args.family]
    if family is None:
        return "no held-out family for this environment"
    if not args.held_out_family_tasks:
        return f"no held-out-family row (--held-out-family-tasks 0; {family} would be one)"
    return f"held-out family {family} ({args.held_out_family_tasks} tasks, no stage trains on it), clean"


def reports_by_row(report: dict, agents: dict[str, list[Path]]) -> dict[str, list[dict]]:
    """Each row's agent-eval reports, one per checkpoint in seed order: the scripted policy's first, then the
    checkpoints in the order they were passed."""
    found = iter(report["agents"])
    rows = {SCRIPTED: [next(found)]}
    for row, checkpoints in agents.items():
        rows[row] = [next(found) for _ in checkpoints]
    return rows


def sim_check(args, out: Path, world: Path, sft: Path, corpus: Path, stages: Stages) -> dict:
    """sim-check of the world model with the agent every RL row starts from, on the test tasks: whether the
    simulator decides that agent's successes and failures as the real environment does is what decides its rewards
    (the scripted policy never fails a generated task for real, so its agreement tests successes only). The
    retrieval baseline searches `corpus`, the one the world model was trained on."""
    report = out / "sim-check.json"
    stages.run(
        "sim-check", report,
        "sim-check", "--world-model", str(world), "--agent", str(sft), "--corpus", str(corpus),
        "--suite", str(out / "suite.yaml"),
        "--control", args.control, "--limit", str(args.sim_check_limit), "--max-new-tokens", str(args.max_tokens),
        "--max-turns", str(args.max_turns), "--concurrency", str(args.concurrency), "-o", str(out / "sim-check"),
        "--report", str(report), "--part", "test", *(["--no-plain"] if args.wm_sft_steps else []),  # SFT: its template
    )  # fmt: skip
    return json.loads(report.read_text())


def header(args, rows: list[dict], sampling: dict | None) -> str:
    """What the table below was measured on, how agent-eval sampled and from how many RL seeds."""
    world = f"{args.cpt_steps} world-model CPT steps" + (f" + {args.wm_sft_steps} SFT" if args.wm_sft_steps else "")
    if args.wm_agent_repeats:
        world += f" (trained again with {args.wm_agent_repeats} real SFT-agent episodes per training task)"
    agent = f" (agent: {args.agent_init})" if args.agent_init != args.init else ""
    how = EpisodeSampling(**sampling).describe() if sampling else "sampling not recorded"
    guide = "" if args.guide == "none" else f", each guided (--guide {args.guide}) and unguided"
    return (f"\nsim RL, --init {args.init}{agent}, family {args.family}: {args.tasks} generated tasks, "
            f"{rows[0]['clean']['episodes']} test episodes per row; {world}, {args.sft_steps} agent-SFT steps, "
            f"{args.rl_steps} agent-RL steps x {args.tasks_per_step} tasks x {args.group_size} episodes per RL row "
            f"(controlled: --control {args.control}){guide}, each RL row from the same agent-SFT start with "
            f"{seeds_said(args.seeds)}; agent-eval: {how}; {held_out_said(args)}")  # fmt: skip


def family_arguments(args: argparse.Namespace, family: str) -> argparse.Namespace:
    """`args` for one family's run: its name, and its context length unless --context-length gave one."""
    return argparse.Namespace(**{**vars(args), "family": family,
                                 "context_length": args.context_length or CONTEXT_LENGTH[family]})  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    record = start_record("sim-rl", args, argv)
    started = time.perf_counter()
    results = {f: run_family(family_arguments(args, f), Path(args.output) / f) for f in args.families}
    if len(results) > 1:
        print_summary(results)
    total = time.perf_counter() - started
    over_stages = sum(stage["seconds"] for r in results.values() for stage in r["stages"].values())
    print(f"wall time, every family: {total:.0f} s in this invocation, {over_stages:.0f} s over every stage")
    summary = Path(args.output) / "sim-rl.json"
    summary.write_text(json.dumps({"families": results, "wall_s": total}, indent=2, default=str) + "\n")
    print(f"-> {summary}")
    record.write({"families": results, "wall_s": total})


def train_family(args: argparse.Namespace, out: Path, stages: Stages) -> dict:
    """Collect, the world model, agent SFT, the test sim-check and the RL rows (every arm's and seed's): what one
    family's table measures. With --wm-agent-repeats the simulator is the world model trained with the agent's
    episodes; the one before them is trained only where the tiny agent needs its tokenizer."""
    if args.from_agent_learning:
        adopt(args, out, stages)
    collect(args, out, stages)
    if args.agent_init == "tiny" or not args.wm_agent_repeats:
        world = world_model(args, out, stages)
    sft = agent_sft(args, out, stages)
    if args.wm_agent_repeats:
        world = world_model_with_agent(args, out, sft, stages)
    corpus = out / ("corpus-agent" if args.wm_agent_repeats else "corpus")
    checked = sim_check(args, out, world, sft, corpus, stages)
    agents = {SFT: [sft], **rl_rows(args, out, sft, world, corpus, stages)}
    return {"checked": checked, "agents": agents}


def measure_family(args: argparse.Namespace, out: Path, stages: Stages) -> dict:
    """Every row in the real environment (test tasks clean and under faults, the held-out family clean), the
    simulator's figures, the targets, guided minus unguided and the audits."""
    trained = train_family(args, out, stages)
    agents = trained["agents"]
    clean, faulty = (evaluate(args, out, agents, stages, part) for part in ("clean", "faults"))
    held_out = held_out_family(args, out, agents, stages)
    rows = table(reports_by_row(clean, agents), reports_by_row(faulty, agents), args.seeds,
                 held_out and reports_by_row(held_out, agents))  # fmt: skip
    by_row, fid = {r["row"]: r for r in rows}, fidelity(trained["checked"])
    return {"sampling": clean.get("sampling"), "rows": rows, "fidelity": fid,
            "targets": targets(by_row, fid, rl_arms(args)[0]),
            "guided_minus_unguided": guided_minus_unguided(args, by_row), "audits": audit_figures(args, out),
            "held_out_family": HELD_OUT_FAMILIES[args.family] if held_out else None,
            "sim_check": trained["checked"]}  # fmt: skip


def run_family(args: argparse.Namespace, out: Path) -> dict:
    """One family's table, fidelity figures, audits and reading (printed); its result, also written to
    OUT/sim-rl.json."""
    stages, started = family_stages(args, out), time.perf_counter()
    measured = measure_family(args, out, stages)
    print(header(args, measured["rows"], measured["sampling"]))
    print_table(measured["rows"], measured["fidelity"])
    print_guides(args, measured["guided_minus_unguided"])
    print_audits(args, measured["audits"])
    said = reading(measured["targets"], args.seeds)
    print(f"\n{said}")
    total = time.perf_counter() - started
    print(stages.summary(total))
    preflight = rl_folder(out, SIM_RL, rl_arms(args)[0], args.seeds[0]) / "world-model-check.json"
    result = {"args": vars(args), "seeds": args.seeds, **measured, "reading": said,
              "preflight": json.loads(preflight.read_text()) if preflight.exists() else None,
              "stages": stages.provenance(), "wall_s": total}  # fmt: skip
    (out / "sim-rl.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"-> {out / 'sim-rl.json'}")
    return result


if __name__ == "__main__":
    main()
