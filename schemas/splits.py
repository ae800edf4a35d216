"""The one train/held-out split of a corpus, decided by build-corpus from a stable hash of each row's *task*.

Scripted and explorer episodes of one task are near-copies, so a split by trajectory would hold out seen tasks;
a split by task keeps every episode of a task on one side. The task key is
- collected (and simulated) data: the suite/task key the runner recorded in `source.origin`, without its
  `#repeat` suffix, so every policy's and every repeat's episodes of one task share it;
- imports: the source's own task, trajectory or session id when the importer kept one in `metadata`;
- otherwise the trajectory itself.

One uniform draw per task decides its side: below `held_out` it is held out (only `eval` reads it); with an
`sft_rl_share`, the next share of the training tasks feeds only SFT and RL and the rest only CPT (the paper's
disjoint pools); without one, training tasks feed every stage. Knowledge documents are CPT-only.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import blake2b
from typing import Literal

Split = Literal["train", "cpt", "sft_rl", "held_out"]
SPLITS: tuple[str, ...] = Split.__args__
# Which splits each reader may read: training stages never see a held-out row, eval sees nothing else.
STAGE_SPLITS: dict[str, tuple[str, ...]] = {
    "cpt": ("train", "cpt"),
    "sft": ("train", "sft_rl"),
    "rl": ("train", "sft_rl"),
    "eval": ("held_out",),
}
TASK_ID_FIELDS = ("task_id", "task", "id", "session_id")  # in an importer's metadata, first found wins


@dataclass(frozen=True)
class SplitConfig:
    held_out: float = 0.1  # share of tasks held out for evaluation
    sft_rl_share: float = 0.0  # share of the training tasks that feed SFT/RL only (0: every stage reads them)
    seed: int = 0

    def __post_init__(self):
        for name in ("held_out", "sft_rl_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"split {name} {getattr(self, name)}: expected a share in [0, 1]")


def _metadata_task_id(metadata: str | None) -> str | None:
    try:
        meta = json.loads(metadata) if metadata else None
    except ValueError:
        return None
    if not isinstance(meta, dict):
        return None
    scopes = [meta, *(v for v in meta.values() if isinstance(v, dict))]  # e.g. {"agentworldbench": {"id": ...}}
    for scope in scopes:
        for name in TASK_ID_FIELDS:
            value = scope.get(name)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)
    return None


def task_key(record: Mapping) -> str:
    """The task a trajectory record (or a row of one) belongs to: what the split hashes (module docstring)."""
    source = record["source"]
    origin = source.get("origin")
    if source["kind"] in ("collected", "simulated") and origin:
        return collected_task_key(origin)
    if source["kind"] == "knowledge":
        return f"knowledge:{origin or record['trajectory_id']}"
    if (ident := _metadata_task_id(record.get("metadata"))) is not None:
        return f"{source['by']}:{ident}"
    return f"trajectory:{record['trajectory_id']}"


def collected_task_key(origin: str) -> str:
    """The task key of a collected episode, from the runner's `<suite>/<task>#<repeat>` (or `<suite>/<task>`): the
    same for every repeat and every policy, so agent-eval picks the tasks build-corpus holds out."""
    return f"task:{origin.split('#', 1)[0]}"


def task_draw(key: str, seed: int = 0) -> float:
    """A uniform draw in [0, 1) that depends only on the task key and the seed."""
    digest = blake2b(f"{seed}\x1f{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def split_of(record: Mapping, config: SplitConfig = SplitConfig()) -> Split:
    if record["source"]["kind"] == "knowledge":
        return "cpt"
    return split_of_task(task_key(record), config)


def split_of_task(key: str, config: SplitConfig = SplitConfig()) -> Split:
    """The side of the task `key` (as `task_key` gives it)."""
    draw = task_draw(key, config.seed)
    if draw < config.held_out:
        return "held_out"
    if not config.sft_rl_share:
        return "train"
    return "sft_rl" if (draw - config.held_out) / (1.0 - config.held_out) < config.sft_rl_share else "cpt"


def readable_by(split: str, stage: str) -> bool:
    return split in STAGE_SPLITS[stage]


def row_placement(row: Mapping) -> tuple[str, Split]:
    """(task, split) of a CPT row: as build-corpus recorded them, or, for a shard written before the split
    columns existed, derived the same way with the default config."""
    if row.get("split"):
        return row.get("task") or task_key(row), row["split"]
    return task_key(row), split_of(row)
