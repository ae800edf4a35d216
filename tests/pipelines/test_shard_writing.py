"""Spilling rows to per-shard files: bounded memory, few files, every row once."""

import hashlib

import pyarrow as pa

from trajforge.pipelines.shard_writing import SpillRowsFn, shard_of
from trajforge.schemas.shards import read_shard_table

SCHEMA = pa.schema([("trajectory_id", pa.string()), ("text", pa.string())])


def rows(n: int) -> list[dict]:
    return [{"trajectory_id": hashlib.sha256(str(i).encode()).hexdigest(), "text": "x" * 100} for i in range(n)]


def spill(tmp_path, given: list[dict], **sizes) -> tuple[list, list]:
    """(what process() emitted along the way, what finish_bundle() emitted), as (shard, file) pairs."""
    fn = SpillRowsFn(str(tmp_path), 3, SCHEMA, lambda row: row["trajectory_id"], **sizes)
    fn.setup()
    fn.start_bundle()
    early = [item for row in given for item in fn.process(row)]
    late = [w.value for w in fn.finish_bundle()]
    return early, late


def read_back(spills: list) -> list[dict]:
    return [row for _, path in spills for row in read_shard_table(path).to_pylist()]


def test_rows_flushed_many_times_still_make_one_file_per_shard_until_the_spill_size(tmp_path):
    given = rows(300)
    early, late = spill(tmp_path, given, flush_bytes=2_000, spill_bytes=10**9)  # about 15 flushes
    assert early == [] and sorted(shard for shard, _ in late) == [0, 1, 2]
    assert sorted(r["trajectory_id"] for r in read_back(late)) == sorted(r["trajectory_id"] for r in given)
    for shard, path in late:
        assert {shard_of(r["trajectory_id"], 3) for r in read_shard_table(path).to_pylist()} == {shard}


def test_held_arrow_past_the_spill_size_goes_out_during_the_bundle(tmp_path):
    given = rows(300)
    early, late = spill(tmp_path, given, flush_bytes=2_000, spill_bytes=1)
    assert len(early) > 3  # written as the bundle went, not all held to its end
    assert sorted(r["trajectory_id"] for r in read_back(early + late)) == sorted(r["trajectory_id"] for r in given)
