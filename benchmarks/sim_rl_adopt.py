"""`sim_rl.py --from-agent-learning RUN`: take the stages an agent_learning.py run (its --output) finished instead of
computing them again: the suite and its scripted collection, agent SFT from --agent-init (agent_learning's "agent
SFT from scratch"), the real-environment RL rows (each arm and seed) and the episodes of their greedy agent-eval on
the test tasks and the held-out family. On 2 cores those are about 25 hours of a SmolLM2 run.

Both benchmarks build these stages with the same commands (learning_signal.py's shape, steps_flags, rl_steps_flags
and agent_rl_flags), so a stage is taken only where every flag that enters it agrees, and an RL row only where it
started from that agent SFT (agent_learning chooses its RL start on validation). The collected episodes are copied
(this run's corpus reads them beside its own collections); the trained folders are linked, never written to. A
stage the other run has not finished is computed here as usual.

An evaluation is taken episode by episode: agent-eval names each agent's run by what it records (suite name,
tasks, the checkpoint's path, sampling, turns, image), so with the same suites (copied, names and all) and the
checkpoints given by their real paths (sim_rl.py resolves the links), this run's agent-eval finds the copied runs
of the taken agents finished and runs only the rest (the fault-injected part, the simulated rows)."""

import json
import os
import shutil
from argparse import Namespace
from pathlib import Path

from sim_rl_rows import REAL_RL, SFT, arm, rl_arms, rl_folder
from stages import Stages

SHARED_FLAGS = {  # sim_rl.py's argument -> agent_learning.py's: the flags that enter the stages taken
    "agent_init": "init", "agent_lr": "lr", "tasks": "tasks", "task_seed": "task_seed", "sft_steps": "sft_steps",
    "batch_size": "batch_size", "context_length": "context_length", "hidden_size": "hidden_size",
    "layers": "layers", "rl_steps": "rl_steps", "rl_lr": "rl_lr", "group_size": "group_size",
    "tasks_per_step": "tasks_per_step", "max_turns": "max_turns", "rl_temperature": "rl_temperature",
    "guide": "guide", "held_out_family_tasks": "held_out_family_tasks",
}  # fmt: skip
EVALUATIONS = {"eval": "eval-clean", "eval-held-out-family": "eval-held-out-family"}  # agent_learning's: this run's


def flags_apart(args: Namespace, theirs: dict) -> list[str]:
    """Each shared flag whose value differs between this run and the agent_learning run, as words."""
    return [f"--{mine.replace('_', '-')} {getattr(args, mine)} here, {theirs.get(other)} there"
            for mine, other in SHARED_FLAGS.items() if getattr(args, mine) != theirs.get(other)]  # fmt: skip


def stage_pairs(args: Namespace, run: Path, out: Path) -> list[tuple[str, Path, str, Path, Path]]:
    """What can be taken: (agent_learning's stage, its folder, this run's stage, its folder, its artifact)."""
    sft = out / "agent-sft"
    scripted = out / "raw" / "scripted"
    pairs = [
        ("collect", run / "raw" / "scripted", "collect scripted", scripted, scripted / "_manifest.json"),
        ("agent SFT from scratch", run / "sft-scratch", SFT, sft, sft / f"checkpoint-{args.sft_steps}"),
    ]
    for seed in args.seeds:
        for guide in rl_arms(args):
            theirs, mine = guide or "none", rl_folder(out, REAL_RL, guide, seed)
            name, artifact = f"{arm(REAL_RL, guide)}, seed {seed}", mine / f"checkpoint-{args.rl_steps}"
            pairs.append((f"agent-rl {theirs} seed {seed}", run / f"rl-{theirs}-seed-{seed}", name, mine, artifact))
    return pairs


def started_from(folder: Path, steps: int) -> Path | None:
    """The checkpoint a training run's last checkpoint started from (its checkpoint.json's init)."""
    info = folder / f"checkpoint-{steps}" / "checkpoint.json"
    return Path(json.loads(info.read_text())["init"]) if info.exists() else None


def adopt(args: Namespace, out: Path, stages: Stages) -> list[str]:
    """Take every stage of the agent_learning run `args.from_agent_learning` that this run needs and has not run
    itself; the names of those taken. Refused (SystemExit, saying why) where the runs cannot share stages."""
    run = Path(args.from_agent_learning)
    if args.family != "terminal":
        raise SystemExit(f"--from-agent-learning: agent_learning.py runs the terminal family, not {args.family}")
    if args.agent_init == "tiny":
        raise SystemExit("--from-agent-learning needs a pretrained agent (--agent-init or --init smollm2 or a model "
                         "folder): a tiny agent is trained in its own run's world-model tokenizer")  # fmt: skip
    if not (run / "stages.json").exists():
        raise SystemExit(f"--from-agent-learning {run}: no agent_learning.py run there (no stages.json)")
    saved = json.loads((run / "stages.json").read_text())
    if apart := flags_apart(args, saved["flags"]):
        raise SystemExit(f"--from-agent-learning {run}: its stages were run with other flags ({'; '.join(apart)})")
    out.mkdir(parents=True, exist_ok=True)
    for suite in ("suite.yaml", "suite-held-out-family.yaml"):
        if (run / suite).exists() and not (out / suite).exists():
            shutil.copyfile(run / suite, out / suite)
    sft = run / "sft-scratch" / f"checkpoint-{args.sft_steps}"
    taken = []
    for theirs, source, mine, folder, artifact in stage_pairs(args, run, out):
        finished = saved["stages"].get(theirs)
        if mine in stages.done or finished is None or not source.exists():
            continue
        if mine.startswith(REAL_RL) and started_from(source, args.rl_steps) != sft:
            print(f"- {mine}: not taken, {source} started from {started_from(source, args.rl_steps)}, not {sft}")
            continue
        if not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)
            if mine == "collect scripted":
                shutil.copytree(source, folder)
            else:
                os.symlink(source.resolve(), folder, target_is_directory=True)
        stages.adopt(mine, artifact, finished, str(source))
        print(f"= {mine}: taken from {source} (finished {finished['finished']} at {finished['commit'][:7]})")
        taken.append(mine)
    checkpoints = {str(artifact.resolve()) for _, _, mine, _, artifact in stage_pairs(args, run, out)
                   if mine in stages.done and mine != "collect scripted"}  # fmt: skip
    adopt_evaluations(run, out, checkpoints)
    return taken


def adopt_evaluations(run: Path, out: Path, checkpoints: set[str]) -> None:
    """Copy the finished agent-eval runs of the agent_learning run whose agent is one of `checkpoints` (real paths)
    or a model-free policy (the scripted reference) into this run's evaluation folders."""
    for theirs, mine in EVALUATIONS.items():
        for manifest in sorted((run / theirs).glob("*/_manifest.json")):
            agent = json.loads(manifest.read_text())["config"].get("policy_args", {}).get("checkpoint")
            target = out / mine / manifest.parent.name
            if (agent is None or agent in checkpoints) and not target.exists():
                shutil.copytree(manifest.parent, target)
                print(f"= agent-eval {mine}: episodes of {agent or 'the scripted policy'} taken from {manifest.parent}")
