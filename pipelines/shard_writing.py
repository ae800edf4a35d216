"""Writing shards from a Beam job with bounded memory: rows go to spill files per shard as they come, and one
last step per shard sorts them into a content-named Arrow IPC stream file. Same rows, same bytes."""

import math
import os
import shutil
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from schemas.atomic import remove_stale_temporaries
from schemas.shards import read_shard_table, write_shard
from schemas.sources import find_files

SPILL_DIR = ".spill"


def shard_of(key: str, shards: int) -> int:
    """A stable shard for a hex id (a content hash)."""
    return int(key[:12], 16) % shards


def text_bytes(row: dict) -> int:
    """A cheap size estimate: the characters of the row's strings, nested ones included."""
    total, stack = 0, [row]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        else:
            total += 8
    return total


class SpillRowsFn(beam.DoFn):
    """Rows -> Arrow files per shard under OUTPUT/.spill. All buffers are flushed once they hold `flush_bytes`
    together, so memory stays bounded whatever the input size and the shard count. Emits (shard, spill file)."""

    def __init__(
        self,
        output: str,
        shards: int,
        schema: pa.Schema,
        key: Callable[[dict], str],
        flush_bytes: int = 8 * 1024 * 1024,
    ):
        self.output, self.shards, self.schema, self.key, self.flush_bytes = output, shards, schema, key, flush_bytes

    def start_bundle(self):
        self.buffers: dict[int, list[dict]] = defaultdict(list)
        self.buffered = 0

    def process(self, row: dict) -> Iterator:
        self.buffers[shard_of(self.key(row), self.shards)].append(row)
        self.buffered += text_bytes(row)
        if self.buffered >= self.flush_bytes:
            yield from self._flush_all()

    def finish_bundle(self) -> Iterator:
        for item in self._flush_all():
            yield WindowedValue(item, 0, [GlobalWindow()])

    def _flush_all(self) -> Iterator[tuple[int, str]]:
        for shard in sorted(self.buffers):
            yield shard, self._flush(shard)
        self.buffers.clear()
        self.buffered = 0

    def _flush(self, shard: int) -> str:
        table = pa.Table.from_pylist(self.buffers[shard], schema=self.schema)
        folder = Path(self.output) / SPILL_DIR / str(shard)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{uuid.uuid4().hex}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, self.schema) as writer:
            writer.write_table(table)
        return str(path)


def merge_shard(item, output: str, subdir: str, sort_by: list[str]) -> dict:
    _, spills = item
    spills = sorted(spills)
    table = pa.concat_tables([read_shard_table(p) for p in spills])
    table = table.sort_by([(column, "ascending") for column in sort_by]).combine_chunks()
    path = write_shard(table, Path(output) / subdir)
    for spill in spills:
        os.unlink(spill)
    return {"file": f"{subdir}/{path.name}", "rows": table.num_rows, "bytes": path.stat().st_size}


class WriteShards(beam.PTransform):
    """Rows -> shards under OUTPUT/SUBDIR, each sorted by `sort_by`: deterministic names and bytes."""

    def __init__(
        self,
        output: str,
        shards: int,
        schema: pa.Schema,
        subdir: str,
        sort_by: list[str],
        key: Callable[[dict], str] = lambda row: row["trajectory_id"],
    ):
        super().__init__()
        self.output, self.shards, self.schema, self.subdir, self.sort_by, self.key = (
            output,
            shards,
            schema,
            subdir,
            sort_by,
            key,
        )

    def expand(self, rows):
        return (
            rows
            | "Spill" >> beam.ParDo(SpillRowsFn(self.output, self.shards, self.schema, self.key))
            | "ByShard" >> beam.GroupByKey()
            | "Merge" >> beam.Map(merge_shard, self.output, self.subdir, self.sort_by)
        )


def remove_stale_shards(output: Path, subdir: str, listed: list[str]) -> int:
    """Shards under OUTPUT/SUBDIR that the manifest does not list (left by an interrupted or older run)."""
    keep = set(listed)
    removed = 0
    for path in (Path(output) / subdir).glob("*.arrow"):
        if f"{subdir}/{path.name}" not in keep:
            path.unlink()
            removed += 1
    return removed


def sum_counts(counts) -> dict[str, int]:
    """(name, n) pairs, as the stages emit them, summed by name."""
    totals: dict[str, int] = {}
    for name, n in counts:
        totals[name] = totals.get(name, 0) + n
    return totals


def cpt_inputs(corpus: Path, output: Path, shard_bytes: int) -> tuple[list[Path], int]:
    """A job reading CPT shards: its input files and how many output shards, with OUTPUT ready (created, and
    cleared of what an interrupted run left: spill files, temporaries)."""
    files, missing = find_files([corpus / "cpt" if (corpus / "cpt").is_dir() else corpus], (".arrow",))
    if missing or not files:
        raise FileNotFoundError(f"no CPT shards under {corpus}: run build-corpus first")
    output.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(output / SPILL_DIR, ignore_errors=True)
    remove_stale_temporaries(output)
    return files, max(1, math.ceil(sum(f.stat().st_size for f in files) / shard_bytes))
