"""Writing shards from a Beam job with bounded memory: rows go to spill files per shard as they come, and one
last step per shard sorts them into a content-named Arrow IPC stream file. Same rows, same bytes, on any
filesystem Beam supports (spill files, shards, temporary names and renames all go through schemas.storage)."""

import math
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from trajforge.pipelines.counting import sum_counts
from trajforge.pipelines.job import finish_output, prepare_output, work_dir
from trajforge.schemas import counts, storage
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import CPT_DIR, SHARD_SUFFIX
from trajforge.schemas.shards import read_shard_table, shard_name, table_to_stream_bytes
from trajforge.schemas.sources import find_data_files

SPILL_DIR = "spill"  # under OUTPUT/_work


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
    """Rows -> Arrow files per shard under OUTPUT/_work/spill (any filesystem Beam supports, so that a worker on
    another machine can merge them). Every `flush_bytes` of row text the rows become Arrow tables, one per shard,
    and once those hold `spill_bytes` together each shard's tables go out as one file: memory stays bounded
    whatever the input size and the shard count, and a shard gets a few large spill files rather than one small
    file per flush (at 2M turns in 142 shards that was 14,000 files, each created, read and deleted). Emits
    (shard, spill file)."""

    def __init__(
        self,
        output: str,
        shards: int,
        schema: pa.Schema,
        key: Callable[[dict], str],
        flush_bytes: int = 8 * 1024 * 1024,
        spill_bytes: int = 64 * 1024 * 1024,
    ):
        self.output, self.shards, self.schema, self.key = output, shards, schema, key
        self.flush_bytes, self.spill_bytes = flush_bytes, spill_bytes

    def start_bundle(self):
        self.rows: dict[int, list[dict]] = defaultdict(list)
        self.buffered = 0  # characters of row text in self.rows
        self.tables: dict[int, list[pa.Table]] = defaultdict(list)
        self.held = 0  # bytes of Arrow in self.tables

    def process(self, row: dict) -> Iterator:
        self.rows[shard_of(self.key(row), self.shards)].append(row)
        self.buffered += text_bytes(row)
        if self.buffered >= self.flush_bytes:
            self._to_arrow()
            if self.held >= self.spill_bytes:
                yield from self._spill_all()

    def finish_bundle(self) -> Iterator:
        self._to_arrow()
        for item in self._spill_all():
            yield WindowedValue(item, 0, [GlobalWindow()])

    def _to_arrow(self) -> None:
        for shard, rows in self.rows.items():
            table = pa.Table.from_pylist(rows, schema=self.schema)
            self.tables[shard].append(table)
            self.held += table.nbytes
        self.rows.clear()
        self.buffered = 0

    def _spill_all(self) -> Iterator[tuple[int, str]]:
        for shard in sorted(self.tables):
            yield shard, self._write(shard, pa.concat_tables(self.tables[shard]))
        self.tables.clear()
        self.held = 0

    def _write(self, shard: int, table: pa.Table) -> str:
        path = storage.join(work_dir(self.output), SPILL_DIR, str(shard), f"{uuid.uuid4().hex}.arrow")
        with storage.create(path) as f:
            f.write(table_to_stream_bytes(table, max_chunksize=1 << 20))
        return path


def merge_shard(item, output: str, subdir: str, sort_by: list[str]) -> dict:
    _, spills = item
    spills = sorted(spills)
    table = pa.concat_tables([read_shard_table(p) for p in spills])
    table = table.sort_by([(column, "ascending") for column in sort_by]).combine_chunks()
    data = table_to_stream_bytes(table)
    name = shard_name(data)
    storage.write_bytes(storage.join(output, subdir, name), data)
    storage.delete(spills)
    return {"file": f"{subdir}/{name}", "rows": table.num_rows, "bytes": len(data)}


class WriteShards(beam.PTransform):
    """Rows -> shards under OUTPUT/SUBDIR, each sorted by `sort_by`: deterministic names and bytes. Emits one
    {"file", "rows", "bytes"} per shard, for the job to save for the launcher."""

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


def remove_stale_shards(output: str, subdir: str, listed: list[str]) -> int:
    """Shards under OUTPUT/SUBDIR that the manifest does not list (left by an interrupted or older run)."""
    keep = set(listed)
    folder = storage.join(output, subdir)
    if not storage.is_url(folder) and not storage.exists(folder):
        return 0
    stale = [
        f.path
        for f in storage.list_files(folder)
        if f.path.endswith(SHARD_SUFFIX) and f"{subdir}/{storage.name(f.path)}" not in keep
    ]
    storage.delete(stale)
    return len(stale)


@dataclass(frozen=True)
class ShardInputs:
    files: list[str]
    shards: int  # how many output shards, for about `shard_bytes` each


def cpt_inputs(corpus: str, output: str, shard_bytes: int) -> ShardInputs:
    """A job reading CPT shards: its input files and how many output shards, with OUTPUT ready (created, and
    cleared of what an interrupted run left)."""
    cpt = storage.join(corpus, CPT_DIR)
    root = cpt if storage.is_dir(cpt) else corpus
    files, missing = find_data_files([root], (SHARD_SUFFIX,))
    if missing or not files:
        raise FileNotFoundError(f"no CPT shards under {corpus}: run build-corpus first")
    prepare_output(output)
    return ShardInputs([f.path for f in files], max(1, math.ceil(sum(f.size for f in files) / shard_bytes)))


def write_shard_job_manifest(
    stage: str, config: dict, inputs: list[str], output: str, saved: dict, subdir: str
) -> Manifest:
    """The launcher's last step of a job over CPT shards: the manifest from the workers' saved outputs, then the
    shards an earlier run wrote and this one did not are removed."""
    manifest = Manifest(
        stage=stage,
        config=config,
        inputs=inputs,
        outputs=sorted(s["file"] for s in saved.get("shards", [])),
        counts={counts.READ: 0, counts.WRITTEN: 0, **dict(sorted(sum_counts(saved.get("counts", [])).items()))},
    )
    manifest.write(output)
    remove_stale_shards(output, subdir, manifest.outputs)
    finish_output(output)
    return manifest
