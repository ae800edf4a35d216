"""What the audits of benchmarks/sim_rl.py's simulated RL rows found (agent-rl --audit-every): per run, read from
what it wrote, how often the world model paid an episode the real environment did not, and the reverse."""

from collections import Counter
from pathlib import Path

# this folder is on sys.path when run as a script
from learning_signal import metrics
from sim_rl_rows import SIMULATED_ROWS, arm, rl_arms, rl_folder
from sim_rl_table import pct


def audit_counts(run: Path) -> dict:
    """What the audits of one simulated agent-rl run (--audit-every) found, read from what it wrote: each audited
    step's metrics line has `audit`; the step's simulated episodes are RUN/episodes/step-N and their real replays
    RUN/audit/step-N (agents/reward_audit.py). Of the replays whose simulated reward and real outcome both decided
    (`audited`): those the world model paid and the real environment did not (`paid_not_real`), and the reverse
    (`real_not_paid`); `undecided` the others. A replay whose actions are not its episode's (a step run again after
    a resume keeps the replays of its first run) is left out, counted in `stale`."""
    from trajforge.agents.agent_eval import run_records
    from trajforge.agents.sim_episodes import replayed_pairs

    steps = sorted({m["step"] for m in metrics(run) if "audit" in m})
    counts = Counter({"steps": len(steps), "audited": 0, "paid_not_real": 0, "real_not_paid": 0, "undecided": 0,
                      "stale": 0})  # fmt: skip
    for step in steps:
        simulated = run_records(str(run / "episodes" / f"step-{step:05d}"))
        replayed = run_records(str(run / "audit" / f"step-{step:05d}"))
        for sim_turns, real_turns, paid, real in replayed_pairs(sorted(simulated), simulated, replayed):
            if [t["action"] for t in real_turns] != [t["action"] for t in sim_turns[: len(real_turns)]]:
                counts["stale"] += 1
            elif paid is None or real is None:
                counts["undecided"] += 1
            else:
                counts["audited"] += 1
                counts["paid_not_real"] += bool(paid and not real)
                counts["real_not_paid"] += bool(real and not paid)
    return dict(counts)


def audit_figures(args, out: Path) -> dict | None:
    """Per simulated row (each arm): what its audits found per seed and pooled over the seeds; None without
    --audit-every."""
    if not args.audit_every:
        return None
    found = {}
    for row in SIMULATED_ROWS:
        for guide in rl_arms(args):
            per_seed = {seed: audit_counts(rl_folder(out, row, guide, seed)) for seed in args.seeds}
            pooled = sum((Counter(c) for c in per_seed.values()), Counter())
            found[arm(row, guide)] = {"per_seed": per_seed, "pooled": {k: pooled[k] for k in per_seed[args.seeds[0]]}}
    return found


def audit_text(counts: dict) -> str:
    """One run's (or a row's pooled) audits in words."""
    if not counts["steps"]:
        return "no audited step recorded"
    audited = counts["audited"]
    said = (f"paid {counts['paid_not_real']} of {audited} audited episodes the real environment did not "
            f"({pct(counts['paid_not_real'] / audited if audited else None)}), did not pay {counts['real_not_paid']} "
            f"it did, over {counts['steps']} audited steps")  # fmt: skip
    left = [f"{counts[k]} {k}" for k in ("undecided", "stale") if counts[k]]
    return said + (f" ({', '.join(left)} left out)" if left else "")


def print_audits(args, audits: dict | None) -> None:
    if audits is None:
        print("\naudits: none (--audit-every 0)")
        return
    print(f"\naudits (agent-rl --audit-every {args.audit_every}: a step's simulated episodes replayed in the real "
          "environment, real episodes never trained on), the world model:")  # fmt: skip
    for row, found in audits.items():
        print(f"  {row}: {audit_text(found['pooled'])}")
        if len(found["per_seed"]) > 1:
            for seed, counts in found["per_seed"].items():
                print(f"    seed {seed}: {audit_text(counts)}")
