"""The rows of benchmarks/sim_rl.py's table: their names, the parts of the real environment each is measured on,
and an RL row's arms (guided, unguided) and run folders (one per row, arm and seed)."""

from pathlib import Path

SCRIPTED = "scripted (model-free reference)"
SFT = "agent SFT"
REAL_RL = "RL in the real environment"
SIM_RL = "RL in the simulator, uncontrolled"
CONTROLLED_RL = "RL in the simulator, controlled"
RL_ROWS = (REAL_RL, SIM_RL, CONTROLLED_RL)
SIMULATED_ROWS = (SIM_RL, CONTROLLED_RL)
PARTS = {"clean": "clean", "faults": "--faults unreliable", "held_out_family": "held-out family"}  # a row's parts
RL_FOLDERS = {REAL_RL: "rl-real", SIM_RL: "rl-sim", CONTROLLED_RL: "rl-controlled"}


def rl_arms(args) -> list[str | None]:
    """The guides every RL row runs with: None (agent-rl's --guide none; the row as named) without --guide; with
    one, that guide and then unguided ("none") from the same start, seeds and episodes (agent-rl draws a step's
    tasks and episode seeds from its seed and the step alone, never the guide: the arms pair)."""
    return [None] if args.guide == "none" else [args.guide, "none"]


def arm(row: str, guide: str | None) -> str:
    """An RL row's name in one arm: as it is without --guide, else saying its guide."""
    return row if guide is None else f"{row}, {'no guide' if guide == 'none' else f'guide {guide}'}"


def rl_folder(out: Path, row: str, guide: str | None, seed: int) -> Path:
    return out / f"{RL_FOLDERS[row]}{'' if guide is None else f'-{guide}'}-seed-{seed}"
