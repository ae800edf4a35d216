"""A validation split by source trajectory among a stage's training rows (which rows a stage may read at all is
`trajforge.schemas.dataset.stage_rows`: the corpus's task split).

`split_by_trajectory` only carves a validation set out of training rows (rows are whole trajectories, membership
is a hash of (seed, trajectory_id), so it is stable when the corpus grows or is reordered).
"""

from typing import NamedTuple

import datasets

from trajforge.schemas.splits import task_draw


def held_out_draw(trajectory_id: str, seed: int = 0) -> float:
    """A uniform draw in [0, 1) that depends only on the trajectory id and the seed (the task split's hash)."""
    return task_draw(trajectory_id, seed)


class TrajectorySplit(NamedTuple):
    train: datasets.Dataset
    held_out: datasets.Dataset


def split_by_trajectory(dataset: datasets.Dataset, held_out_fraction: float, seed: int = 0) -> TrajectorySplit:
    """About `held_out_fraction` of the trajectories held out, chosen by hashing their ids; row order is kept."""
    if not 0.0 <= held_out_fraction <= 1.0:
        raise ValueError(f"held_out_fraction {held_out_fraction}: expected a value in [0, 1]")
    ids = dataset.with_format("arrow")["trajectory_id"].to_pylist()  # respects an earlier select()
    held = [held_out_draw(i, seed) < held_out_fraction for i in ids]
    return TrajectorySplit(
        train=dataset.select([i for i, h in enumerate(held) if not h]),
        held_out=dataset.select([i for i, h in enumerate(held) if h]),
    )
