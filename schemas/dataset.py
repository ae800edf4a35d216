"""Shards as one memory-mapped `datasets.Dataset`, and the rows each stage may read under the corpus's task split.

The split is decided once, by build-corpus, per task (schemas/splits.py) and recorded in every row: `stage_rows`
gives a training stage only the rows it may train on, `held_out_rows` what `eval` scores (the test part) and
`part_rows` either evaluation part.
"""

from collections.abc import Sequence
from pathlib import Path

import datasets

from trajforge.schemas import storage
from trajforge.schemas.names import CPT_DIR, SHARD_SUFFIX
from trajforge.schemas.shards import ShardError
from trajforge.schemas.splits import PART_SPLITS, STAGE_SPLITS, TRAINING_STAGES, row_placement, split_of


def shard_paths(source: str | Path | Sequence[str | Path], subfolder: str = CPT_DIR) -> list[Path]:
    """The shard files of a job's output folder (its `subfolder` - cpt/, sft/, rl/ - when there is one), a folder
    of shards, or a list. A URL (s3://, gs://) is copied to a local cache first: shards are memory-mapped."""
    if isinstance(source, str) and storage.is_url(source):
        return cache_shards(source, subfolder)
    if isinstance(source, str | Path):
        folder = Path(source)
        if folder.is_file():
            return [folder]
        if (folder / subfolder).is_dir():
            folder = folder / subfolder
        paths = sorted(folder.glob(f"*{SHARD_SUFFIX}"))
        if not paths:
            raise FileNotFoundError(f"no *{SHARD_SUFFIX} shards in {folder}")
        return paths
    paths = [Path(p) for p in source]
    if not paths:
        raise FileNotFoundError("no shard files given")
    return paths


def cache_shards(url: str, subfolder: str = CPT_DIR, cache: Path | None = None) -> list[Path]:
    """Copy the shards under URL (its `subfolder` when there is one) to a local cache; shards are named by their
    content, so one already there is not copied again."""
    root = storage.join(url, subfolder) if storage.is_dir(storage.join(url, subfolder)) else url
    files = [f.path for f in storage.list_files(root) if f.path.endswith(SHARD_SUFFIX)]
    if not files:
        raise FileNotFoundError(f"no *{SHARD_SUFFIX} shards in {root}")
    cache = cache or storage.cache_root() / "shards"
    paths = []
    for remote in files:
        local = cache / storage.name(remote)
        if not local.exists():
            storage.write_bytes(local, storage.read_bytes(remote))
        paths.append(local)
    return paths


def load_shards(source: str | Path | Sequence[str | Path], subfolder: str = CPT_DIR) -> datasets.Dataset:
    """All rows of the shards, memory-mapped (nothing is copied into memory), in file order. A file that is not a
    readable shard is a ShardError that names it."""
    parts = []
    for path in shard_paths(source, subfolder):
        try:
            parts.append(datasets.Dataset.from_file(str(path)))
        except Exception as exc:  # noqa: BLE001 - pyarrow and datasets raise several kinds for a damaged file
            raise ShardError(f"{path}: not a readable Arrow IPC stream shard (truncated or corrupt?): {exc}") from exc
    return parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)


def load_cpt(source: str | Path | Sequence[str | Path]) -> datasets.Dataset:
    return load_shards(source, CPT_DIR)


def row_splits(dataset: datasets.Dataset) -> list[str]:
    """Each row's split: the `split` column, or for shards written before it, derived as build-corpus would
    (CPT rows from their task; SFT/RL rows, which keep no source, from their trajectory)."""
    if "split" in dataset.column_names:
        splits = dataset.with_format("arrow")["split"].to_pylist()
        if all(splits):
            return splits
    if "source" in dataset.column_names:
        return [row_placement(row)[1] for row in dataset]
    return [
        split_of({"source": {"kind": "imported", "by": "", "origin": None}, "trajectory_id": i})
        for i in dataset.with_format("arrow")["trajectory_id"].to_pylist()
    ]


def select_splits(dataset: datasets.Dataset, splits: tuple[str, ...]) -> datasets.Dataset:
    keep = [i for i, s in enumerate(row_splits(dataset)) if s in splits]
    return dataset if len(keep) == len(dataset) else dataset.select(keep)


def stage_rows(dataset: datasets.Dataset, stage: str) -> datasets.Dataset:
    """The rows a training stage (cpt, sft, rl) may read: never a held-out row. No rows at all is an error that
    says why, e.g. RL data that holds only held-out rows."""
    rows = select_splits(dataset, STAGE_SPLITS[stage])
    if len(dataset) and not len(rows):
        found = sorted(set(row_splits(dataset)))
        raise ValueError(
            f"no {stage} training rows: all {len(dataset)} rows are in split(s) {', '.join(found)}, and {stage} "
            f"trains only on {' or '.join(STAGE_SPLITS[stage])} rows (validation and test rows are never trained on)"
        )
    return rows


def held_out_rows(dataset: datasets.Dataset) -> datasets.Dataset:
    """The rows `eval` scores: the test part's tasks, nothing else."""
    return select_splits(dataset, STAGE_SPLITS["eval"])


def part_rows(dataset: datasets.Dataset, part: str) -> datasets.Dataset:
    """The rows of one evaluation part (`--part`): validation, what choices read, or test, the final tables'."""
    return select_splits(dataset, (PART_SPLITS[part],))


def training_split_rows(dataset: datasets.Dataset) -> datasets.Dataset:
    """Every row a training stage may read (any stage): what a model-free baseline may look up."""
    splits = tuple(sorted({s for stage in TRAINING_STAGES for s in STAGE_SPLITS[stage]}))
    return select_splits(dataset, splits)
