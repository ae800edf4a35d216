"""Memory and time of one agent-RL update (training/rl.py `update_policy`) by how log-probs are read: the whole
vocabulary's log-softmax at every position of a whole group at once (`full`, how updates read them before, the
baseline), and the vocabulary head at the agent's own tokens only (`head`, training/gspo.py `sequence_logprobs`)
with `--micro-batch` episodes per forward and backward, measured in the same run on the same episodes.

    .venv/bin/python benchmarks/rl_update_memory.py --init CHECKPOINT --suite SUITE [--variants full:0 head:0 head:2]

The episodes are real: `--steps` steps of agent RL's rollouts (G episodes of each step's tasks in real Docker
environments, the scripted guide joining groups that all failed); the groups that have something to learn are
saved once, and each variant's update runs on them in a fresh process, so one variant's peak is not another's.
Printed per variant: the process's peak resident memory above what it held with the model loaded, the update's
seconds, the loss (the same for every variant: the update is exact), and the ratios to the baseline. Needs Docker
and the sandbox image; `--init` an agent checkpoint (after agent-sft) of the real model for figures that matter.
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from results_record import add_results_option, start_record


def full_vocabulary_logprobs(model, input_ids, mask):
    """The baseline: [N, T, vocabulary] logits and their log-softmax for every position, then masked."""
    import torch

    logits = model(input_ids=input_ids, use_cache=False).logits[:, :-1].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:, None]).squeeze(-1) * mask


def resident_bytes() -> int:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize()


def collect_groups(args, folder: Path) -> Path:
    """Roll out `--steps` steps and save the learnable groups (ids, mask, old log-probs, rewards)."""
    import torch

    from trajforge.agents.config import AgentRLConfig
    from trajforge.agents.guidance import add_guides
    from trajforge.agents.rl import AgentRL, training_groups

    gspo = replace(AgentRLConfig.gspo, group_size=args.group_size, temperature=args.temperature)
    config = AgentRLConfig(
        output=str(folder / "rollouts"), init=args.init, gspo=gspo, tasks_per_step=args.tasks_per_step,
        guide="scripted", run=replace(AgentRLConfig.run, suites=tuple(args.suite), max_turns=args.max_turns,
                                      concurrency=args.concurrency),
    )  # fmt: skip
    run = AgentRL(config, log=lambda *_: None, warn=print)
    actor, saved = run.actor, {"groups": [], "rewards": []}
    for step in range(args.steps):
        groups, _ = run.rollouts(step)
        guides = run.output / "episodes" / f"step-{step + 1:05d}-guides"
        turns, concurrency = config.run.max_turns, config.run.concurrency
        add_guides(groups, run.make_env, guides, actor.tokenizer, actor.window, concurrency, turns)
        trained = training_groups(actor.model, groups, actor.tokenizer.pad_token_id or 0)
        for group, rewards in zip(trained.groups, trained.rewards, strict=True):
            if len(set(rewards)) > 1:
                saved["groups"].append(group)
                saved["rewards"].append(rewards)
        print(f"  step {step + 1}: {len(saved['groups'])} learnable groups so far")
    path = folder / "groups.pt"
    torch.save(saved, path)
    return path


def one_update(path: str, init: str, variant: str) -> dict:
    """In its own process: the model, one update on the saved groups, and what it took."""
    import torch

    from trajforge.agents.checkpoint_policy import Actor, acting_folder
    from trajforge.agents.config import AgentRLConfig
    from trajforge.training import rl
    from trajforge.training.optimization import Optimizer

    reading, micro_batch = variant.split(":")
    if reading == "full":
        rl.sequence_logprobs = full_vocabulary_logprobs
    saved = torch.load(path, weights_only=False)
    model = Actor.load(acting_folder(init), temperature=1.0).model
    gspo = replace(AgentRLConfig.gspo, micro_batch=int(micro_batch))
    optimizer = Optimizer(model, gspo.lr, 0, 10, 0.0, gspo.clip, lr_floor=1.0)
    rollouts = rl.Rollouts()
    rollouts.groups, rollouts.rewards = saved["groups"], saved["rewards"]
    before = resident_bytes()
    started = time.perf_counter()
    stats = rl.update_policy(model, optimizer, rollouts, gspo)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "variant": variant,
        "peak_above_model_gib": (peak - before) / 2**30,
        "seconds": seconds,
        "loss": sum(float(s.loss) for s in stats) / max(len(stats), 1),
        "tokens": sum(int(g[0].numel()) for g in rollouts.groups),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", required=True, help="An agent checkpoint (after agent-sft).")
    parser.add_argument("--suite", action="append", required=True, help="A suite .yaml or bundled name, repeatable.")
    parser.add_argument("--variants", nargs="+", default=["full:0", "head:0", "head:2", "head:1"],
                        help="READING:MICRO_BATCH, READING full or head; the first is the baseline.")  # fmt: skip
    parser.add_argument("--steps", type=int, default=1, help="Steps of rollouts whose groups are updated on.")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--child", nargs=2, metavar=("GROUPS", "VARIANT"), help=argparse.SUPPRESS)
    add_results_option(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_update(args.child[0], args.init, args.child[1])))
        return 0
    record = start_record("rl-update-memory", args)
    with tempfile.TemporaryDirectory() as tmp:
        groups = collect_groups(args, Path(tmp))
        rows = []
        for variant in args.variants:
            command = [
                sys.executable,
                __file__,
                "--init",
                args.init,
                "--suite",
                args.suite[0],
                "--child",
                str(groups),
                variant,
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"  {variant}: {rows[-1]['peak_above_model_gib']:.2f} GiB, {rows[-1]['seconds']:.1f} s")
    base = rows[0]
    print(f"\n{base['tokens']} tokens in the updated groups; baseline {base['variant']}")
    print("| reading:micro-batch | peak above the model | seconds | loss | memory ratio | speed ratio |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['variant']} | {r['peak_above_model_gib']:.2f} GiB | {r['seconds']:.1f} | {r['loss']:.5f} | "
            f"{r['peak_above_model_gib'] / max(base['peak_above_model_gib'], 1e-9):.2f}x | "
            f"{base['seconds'] / r['seconds']:.2f}x |"
        )
    record.write({"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
