"""Sim RL, and what it buys, in one table: agents trained by RL in the REAL environment and inside a world model
(uncontrolled, and under sampled control specs), each measured in the REAL environment (Docker, the MCP server) on
HELD-OUT tasks of a generated family, clean and under real injected faults, with 95% Wilson intervals; under the
table the simulator's fidelity figures (`trajforge sim-check`) and a plain-words reading against issue 22's targets.

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
   model (`--world-model WORLD`); in the world model under control specs sampled per episode (`--control`);
6. `agent-eval` of every row, and of the scripted policy (model-free reference), on the test tasks, clean and
   under `--faults unreliable`.

OUTPUT/<family>/sim-rl.json holds a family's rows, the fidelity figures, each target with whether it is met, the
reading and the wall times; OUTPUT/sim-rl.json every family's, and the last table shows every family's rows
together. A world model trained on a few hundred episodes is small: the reading says plainly what it misses.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

# this folder is on sys.path when run as a script
from learning_signal import agent_rl_flags, agent_training_arguments, shape, steps_flags, trajforge
from results_record import add_results_option, start_record

from trajforge.evaluation.fidelity import one_sided
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
    parser.add_argument(
        "--agent-init",
        help="the agent's starting weights when not --init's: e.g. --init tiny "
        "--agent-init smollm2, a cheap world model and an agent that copies words (default: --init)",
    )
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
    parser.add_argument("--eval-repeats", type=int, default=1, help="agent-eval episodes per test task")
    parser.add_argument("--sim-check-limit", type=int, default=40, help="trajectories for single step, per part")
    parser.add_argument("--max-tokens", type=int, default=256, help="sim-check's longest single-step answer")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at once")
    add_results_option(parser)
    args = parser.parse_args(argv)
    args.families = list(dict.fromkeys(args.family or DEMO_FAMILIES))  # the defaults resolved here, once
    args.agent_init = args.agent_init or args.init
    args.agent_lr = args.lr if args.agent_lr is None else args.agent_lr
    if args.agent_init == "tiny" and args.init != "tiny":
        parser.error("--agent-init tiny needs --init tiny: the tiny agent trains in the tiny world model's tokenizer")
    return args


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


def rl_rows(args, out: Path, sft: Path, world: Path, rule: str, seconds: dict) -> dict[str, Path]:
    """The three RL rows from the same agent with the same steps and episodes; their checkpoints by row."""
    simulate = ["--world-model", str(world), "--simulate-file-check", rule]
    runs = {
        REAL_RL: ("rl-real", []),
        SIM_RL: ("rl-sim", [*simulate, "--sim-check-corpus", str(out / "corpus")]),  # the figures printed first
        CONTROLLED_RL: ("rl-controlled", [*simulate, "--control", args.control]),
    }
    rows = {}
    for row, (name, flags) in runs.items():
        seconds[row] = trajforge(
            "train", "agent-rl", "--suite", str(out / "suite.yaml"), "--init", str(sft),
            "-o", str(out / name), *flags, "--max-steps", str(args.rl_steps), "--save-every", str(args.rl_steps),
            *agent_rl_flags(args),
        )  # fmt: skip
        rows[row] = out / name / f"checkpoint-{args.rl_steps}"
    return rows


def evaluate(args, out: Path, agents: dict[str, Path], faults: bool, seconds: dict) -> list[dict]:
    """agent-eval of the scripted policy and every checkpoint on the test tasks, in the real environment."""
    name = "eval-faults" if faults else "eval-clean"
    report = out / f"{name}.json"
    seconds[name] = trajforge_allowing_errors(
        "agent-eval", "--policy", "scripted", *(x for c in agents.values() for x in ("--agent", str(c))),
        "--suite", str(out / "suite.yaml"), "--max-turns", str(args.max_turns), "--repeats", str(args.eval_repeats),
        "--output", str(out / name), "--concurrency", str(args.concurrency), "--report", str(report),
        *(["--faults", "unreliable"] if faults else []),
    )  # fmt: skip
    return json.loads(report.read_text())["agents"]


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


def _score(overall: dict) -> dict:
    low, high = overall.get("interval") or (None, None)
    return {"episodes": overall["scored"], "successes": overall["successes"],
            "success_rate": overall["success_rate"], "interval": [low, high]}  # fmt: skip


def table(names: list[str], clean: list[dict], faulty: list[dict]) -> list[dict]:
    """One row per agent: its success (and 95% interval) on the test tasks, clean and under real faults."""
    rows = []
    for name, a, b in zip(names, clean, faulty, strict=True):
        rows.append({"row": name, "agent": a["agent"], "model_free": a["model_free"], "clean": _score(a["overall"]),
                     "faults": _score(b["overall"]), "mean_turns": a["overall"]["mean_turns"],
                     "unparseable_rate": a["overall"]["unparseable_rate"]})  # fmt: skip
    return rows


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
        "instructed_faults": over_all("controllability", "instructed_faults"),
        "clean_turns": over_all("controllability", "clean_share"),
    }


def _rate(rows: dict, name: str, part: str) -> float | None:
    return rows[name][part]["success_rate"] if name in rows else None


def _points(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else 100 * (a - b)


def _separated(rows: dict, better: str, worse: str, part: str) -> bool:
    """Whether `better`'s 95% interval lies wholly above `worse`'s."""
    low, high = rows[better][part]["interval"][0], rows[worse][part]["interval"][1]
    return low is not None and high is not None and low > high


def _at_least(value: float | None, target: float) -> bool | None:
    return None if value is None else value >= target


def targets(rows: dict[str, dict], fid: dict) -> list[dict]:
    """Each of issue 22's targets: its figure and whether it is met (None: this run cannot tell)."""
    sim_gain = _points(_rate(rows, CONTROLLED_RL, "clean"), _rate(rows, SFT, "clean"))
    real_gain = _points(_rate(rows, REAL_RL, "clean"), _rate(rows, SFT, "clean"))
    share = sim_gain / real_gain if sim_gain is not None and real_gain and real_gain > 0 else None
    agreement_undecided = one_sided(fid["real_outcomes"])
    control = _points(_rate(rows, CONTROLLED_RL, "faults"), _rate(rows, SIM_RL, "faults"))
    beats = [fid[k] is not None and all(b[k] is not None and fid[k] > b[k] for b in fid["baselines"].values())
             for k in ("exact_match", "factuality")]  # fmt: skip
    return [
        {"target": f"RL in the simulator raises real success over agent SFT by >= {GAIN_POINTS:.0f} points",
         "figure": sim_gain, "unit": "points", "met": _at_least(sim_gain, GAIN_POINTS),
         "separated": _separated(rows, CONTROLLED_RL, SFT, "clean")},
        {"target": f"RL in the simulator gains >= {SHARE_OF_REAL:.0%} of what RL in the real environment gains",
         "figure": share, "unit": "share", "met": _at_least(share, SHARE_OF_REAL), "real_gain_points": real_gain,
         "undecided_because": None if share is not None else
         "RL in the real environment gained nothing here, so there is no share to take"},
        {"target": f"under real faults, controlled beats uncontrolled by >= {CONTROL_POINTS:.0f} points",
         "figure": control, "unit": "points", "met": _at_least(control, CONTROL_POINTS),
         "separated": _separated(rows, CONTROLLED_RL, SIM_RL, "faults")},
        {"target": f"controllability: >= {PRODUCED:.0%} of instructed faults produced", "figure":
         fid["faults_produced"], "unit": "share", "met": _at_least(fid["faults_produced"], PRODUCED),
         "undecided_because": "sim-check's controlled episodes reached no instructed fault"
         if fid["instructed_faults"] == 0 else None},
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


def reading(found: list[dict]) -> str:
    """The targets in plain words: how many are met, then each with its figure."""
    met = sum(t["met"] is True for t in found)
    lines = [f"{met} of {len(found)} targets met."]
    for t in found:
        verdict = {True: "met", False: "NOT met", None: "cannot tell from this run"}[t["met"]]
        figure = f" ({_figure(t) or t.get('detail')})" if _figure(t) or t.get("detail") else ""
        if t.get("separated") is False and t["met"]:
            figure += ", but the 95% intervals overlap: the gain is within noise"
        if t["met"] is None and t.get("undecided_because"):
            figure += f" ({t['undecided_because']})"
        lines.append(f"- {t['target']}: {verdict}{figure}")
    return "\n".join(lines)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _cell(score: dict) -> str:
    low, high = score["interval"]
    interval = f"[{pct(low)}, {pct(high)}]" if low is not None else "[-]"
    return f"{pct(score['success_rate']):>4} {interval:<11} {score['successes']}/{score['episodes']}"


def print_table(rows: list[dict], fid: dict) -> None:
    print(f"\n{'agent (test tasks, real environment)':<42} {'clean: success [95%]':<25} "
          f"{'--faults unreliable':<25}")  # fmt: skip
    for r in rows:
        print(f"{r['row']:<42} {_cell(r['clean']):<25} {_cell(r['faults']):<25}")
    bases = ", ".join(f"{n}: exact {pct(b['exact_match'])}, factuality {_num(b['factuality'])}"
                      for n, b in fid["baselines"].items())  # fmt: skip
    print(f"\nsimulator {fid['world_model']} (sim-check, test tasks): single step on {fid['turns']} turns: exact "
          f"{pct(fid['exact_match'])}, factuality {_num(fid['factuality'])} ({bases}); success agreement "
          f"{pct(fid['success_agreement'])} (file comparisons by {fid['file_check']}{_outcomes(fid)}); WM2Real exact "
          f"{pct(fid['wm2real_exact_match'])}, simulated successes "
          f"real {pct(fid['sim_successes_real'])}; instructed faults produced {pct(fid['faults_produced'])}, "
          f"clean turns {pct(fid['clean_turns'])}")  # fmt: skip


def _outcomes(fid: dict) -> str:
    real = fid.get("real_outcomes")
    return f"; real: {real['success']} successes, {real['failure']} failures" if real else ""


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def header(args, rows: list[dict]) -> str:
    """What the table below was measured on."""
    world = f"{args.cpt_steps} world-model CPT steps" + (f" + {args.wm_sft_steps} SFT" if args.wm_sft_steps else "")
    if args.wm_agent_repeats:
        world += f" (trained again with {args.wm_agent_repeats} real SFT-agent episodes per training task)"
    agent = f" (agent: {args.agent_init})" if args.agent_init != args.init else ""
    return (f"\nsim RL, --init {args.init}{agent}, family {args.family}: {args.tasks} generated tasks, "
            f"{rows[0]['clean']['episodes']} test episodes per row; {world}, {args.sft_steps} agent-SFT steps, "
            f"{args.rl_steps} agent-RL steps x {args.tasks_per_step} tasks x {args.group_size} episodes per RL row "
            f"(controlled: --control {args.control})")  # fmt: skip


def family_arguments(args: argparse.Namespace, family: str) -> argparse.Namespace:
    """`args` for one family's run: its name, and its context length unless --context-length gave one."""
    return argparse.Namespace(**{**vars(args), "family": family,
                                 "context_length": args.context_length or CONTEXT_LENGTH[family]})  # fmt: skip


def print_summary(results: dict[str, dict]) -> None:
    """Every family's rows in one table, each with how many of its targets were met."""
    print(f"\n{'family':<10} {'agent (test tasks, real environment)':<42} {'clean: success [95%]':<25} "
          f"{'--faults unreliable':<25}")  # fmt: skip
    for family, result in results.items():
        for r in result["rows"]:
            print(f"{family:<10} {r['row']:<42} {_cell(r['clean']):<25} {_cell(r['faults']):<25}")
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


def run_family(args: argparse.Namespace, out: Path) -> dict:
    """One family's table, fidelity figures and reading (printed); its result, also written to OUT/sim-rl.json."""
    seconds, started = {}, time.perf_counter()
    collect(args, out, seconds)
    world = world_model(args, out, seconds)
    sft = agent_sft(args, out, seconds)
    if args.wm_agent_repeats:
        world = world_model_with_agent(args, out, sft, seconds)
    rule, chosen_on = choose_file_check(args, out, world, sft, seconds)
    checked = sim_check(args, out, world, sft, seconds)
    agents = {SFT: sft, **rl_rows(args, out, sft, world, rule, seconds)}
    names = [SCRIPTED, *agents]
    rows = table(names, evaluate(args, out, agents, False, seconds), evaluate(args, out, agents, True, seconds))
    fid = fidelity(checked, rule)
    found = targets({r["row"]: r for r in rows}, fid)
    print(header(args, rows))
    print_table(rows, fid)
    said = reading(found)
    print(f"\n{said}")
    total = time.perf_counter() - started
    print(f"wall time: {total:.0f} s (" + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()) + ")")
    preflight = out / "rl-sim" / "world-model-check.json"
    result = {"args": vars(args), "rows": rows, "fidelity": fid, "targets": found, "reading": said,
              "sim_check": checked, "file_check_chosen_on_validation": chosen_on,
              "preflight": json.loads(preflight.read_text()) if preflight.exists() else None,
              "seconds": seconds, "wall_s": total}  # fmt: skip
    (out / "sim-rl.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"-> {out / 'sim-rl.json'}")
    return result


if __name__ == "__main__":
    main()
