"""`trajforge export --format trl|verl`: build-corpus, curate-sft and prepare-rl shards as the files another trainer
reads as they are (the layouts: training/trl_export.py, training/verl_export.py; docs/handing-off.md).

Each stage's rule about rows holds: `train.parquet` holds the rows the stage trains on (never a held-out task),
`test.parquet` the held-out tasks' rows, for evaluation only (written when there are any). A tokenized export saves
the tokenizer it used in OUT/tokenizer/ (the trainer must read the ids with the same one). OUT/_manifest.json lists
every file with its row count; files an earlier export wrote there and this one did not are removed."""

import importlib
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.schemas.dataset import held_out_rows, load_shards, stage_rows
from trajforge.schemas.manifest import Manifest, read_manifest
from trajforge.schemas.names import MANIFEST_NAME
from trajforge.schemas.shards import shard_kind
from trajforge.training.trainer_formats import TRAINER_FORMATS, TrainerExport

TOKENIZER_DIR = "tokenizer"
EXPORT_BATCH = 1024  # rows converted and written together (one row group): bounded memory on a corpus of any size
KIND_SOURCES = {"cpt": "build-corpus", "sft": "curate-sft", "rl": "prepare-rl"}
Progress = Callable[[Iterable, str], Iterable]
# Chat messages as every trainer's parquet holds them (verl's documented `prompt`, TRL's conversational rows).
MESSAGES = pa.list_(pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())]))


def _silent(items: Iterable, label: str) -> Iterable:
    return items


@dataclass
class TrainerExportResult:
    files: dict[str, int] = field(default_factory=dict)  # file under the output -> its rows
    notes: list[str] = field(default_factory=list)  # what was skipped or changed, and why

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass(frozen=True)
class Batch:
    """Rows a format's writer converts together."""

    rows: list[dict]
    split: str  # train or test: the file they go to
    start: int  # the position of the first of them in that file's rows


class ParquetFiles:
    """Parquet files written a batch (a row group) at a time under temporary names, each renamed once all are
    complete; on an error none is left behind."""

    def __init__(self, output: Path):
        self.output = output
        self.open: dict[str, tuple[pq.ParquetWriter, Path]] = {}
        self.rows: dict[str, int] = {}

    def write(self, name: str, table: pa.Table) -> None:
        if name not in self.open:
            path = self.output / name
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            self.open[name], self.rows[name] = (pq.ParquetWriter(str(tmp), table.schema), tmp), 0
        if table.num_rows:
            self.open[name][0].write_table(table)
        self.rows[name] += table.num_rows

    def __enter__(self) -> "ParquetFiles":
        return self

    def __exit__(self, failed, *_) -> None:
        for name, (writer, tmp) in self.open.items():
            writer.close()
            if failed:
                tmp.unlink(missing_ok=True)
            else:
                os.replace(tmp, self.output / name)


def export_for_trainer(shards: list, config: TrainerExport, progress: Progress = _silent) -> TrainerExportResult:
    """The shards (any mix of CPT, SFT and RL) as the format's files under config.output. A shard of a kind the
    format does not read, a tokenizer that cannot be loaded, or a file where the output folder should be is a
    ValueError naming it."""
    writers = importlib.import_module(TRAINER_FORMATS.get(config.format)).WRITERS
    by_kind = shards_by_kind(shards, writers, config.format)
    output = Path(config.output)
    if output.exists() and not output.is_dir():
        raise ValueError(f"{output}: --format {config.format} writes a folder of parquet files, not a file")
    result = TrainerExportResult()
    tokenizer = export_tokenizer(config.tokenizer, result) if config.tokenizer else None
    read = 0
    with ParquetFiles(output) as files:
        for kind, paths in by_kind.items():
            rows = load_shards(paths, kind)
            read += len(rows)
            for split, part in split_parts(rows, kind):
                items = iter(progress(part, f"{kind} {split} rows -> {config.format}"))
                start = 0
                while batch := list(islice(items, EXPORT_BATCH)):
                    for folder, table in writers[kind](Batch(batch, split, start), tokenizer, config, result).items():
                        files.write(f"{folder}/{split}.parquet" if folder else f"{split}.parquet", table)
                    start += len(batch)
    result.files = files.rows
    if tokenizer is not None:
        tokenizer.save_pretrained(str(output / TOKENIZER_DIR))
    _write_manifest(output, config, shards, result, read)
    return result


def shards_by_kind(shards: list, writers: dict, fmt: str) -> dict[str, list]:
    by_kind: dict[str, list] = {}
    for path in shards:
        kind = shard_kind(path)
        if kind not in writers:
            readable = ", ".join(f"{k} ({KIND_SOURCES[k]})" for k in writers)
            raise ValueError(f"{path}: a {kind} shard; --format {fmt} reads {readable} shards")
        by_kind.setdefault(kind, []).append(path)
    if not by_kind:
        raise ValueError(f"--format {fmt}: no shards given")
    return by_kind


def split_parts(rows, kind: str) -> list[tuple[str, object]]:
    """("train", the rows the stage trains on), then ("test", the held-out tasks' rows) when there are any."""
    test = held_out_rows(rows)
    return [("train", stage_rows(rows, kind))] + ([("test", test)] if len(test) else [])


def export_tokenizer(name: str, result: TrainerExportResult):
    """--tokenizer as a loaded tokenizer: a tokenizer folder, a trajforge checkpoint, a run folder (its tokenizer/),
    or smollm2; ValueError naming it when it cannot be loaded."""
    from trajforge.training.model import resolve_init
    from trajforge.training.tokenizer import load_tokenizer

    try:
        folder = Path(resolve_init(name))
    except FileNotFoundError as exc:  # smollm2 without its package
        raise ValueError(f"--tokenizer {name}: {exc}") from exc
    if (folder / TOKENIZER_DIR).is_dir() and not (folder / "tokenizer_config.json").exists():
        folder = folder / TOKENIZER_DIR
    if not folder.is_dir():
        raise ValueError(f"--tokenizer {name}: no such folder (a tokenizer folder, a checkpoint, or smollm2)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tokenizer = load_tokenizer(folder)
        except (OSError, ValueError, TypeError) as exc:
            why = " ".join(str(exc).split())  # transformers' messages run over several lines
            raise ValueError(f"--tokenizer {name}: cannot load a tokenizer from {folder}: {why}") from exc
    for warning in caught:
        if "falling back to trajforge's markers" in str(warning.message):
            result.note(f"{warning.message}; the saved {TOKENIZER_DIR}/ has them: resize the model's embeddings")
    return tokenizer


def messages_of(messages) -> list[dict]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def _write_manifest(output: Path, config: TrainerExport, shards: list, result: TrainerExportResult, read: int):
    previous = read_manifest(output).outputs if (output / MANIFEST_NAME).exists() else []
    for stale in set(previous) - set(result.files):
        (output / stale).unlink(missing_ok=True)
    Manifest(
        stage=f"export-{config.format}",
        config=asdict(config),
        inputs=[str(s) for s in shards],
        outputs=sorted(result.files),
        counts={"read": read, **{f"rows:{name}": n for name, n in sorted(result.files.items())}},
    ).write(output)
