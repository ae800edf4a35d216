"""Shards: Arrow IPC *stream* files (what datasets.Dataset.from_file memory-maps), named by content hash."""

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from schemas.arrow import schema_problems, table_to_results
from schemas.atomic import write_bytes_atomic
from schemas.hashing import content_hash
from schemas.validation import Problem, ReadResult

SHARD_SUFFIX = ".arrow"


def table_to_stream_bytes(table: pa.Table, max_chunksize: int = 1024) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=max_chunksize)
    return sink.getvalue().to_pybytes()


def write_shard(table: pa.Table, directory: str | Path, prefix: str = "shard") -> Path:
    """Write one shard named by the hash of its bytes, via a temporary name; same table, same file."""
    data = table_to_stream_bytes(table)
    return write_bytes_atomic(Path(directory) / f"{prefix}-{content_hash(data, 16)}{SHARD_SUFFIX}", data)


def read_shard_table(path: str | Path) -> pa.Table:
    with pa.memory_map(str(path), "r") as source:
        return pa.ipc.open_stream(source).read_all()


def read_shard(path: str | Path) -> Iterator[ReadResult]:
    """Read and validate every row of a shard; a file that is not a readable shard is one problem."""
    try:
        table = read_shard_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        yield ReadResult(str(path), "file", None, [Problem("", f"not a readable Arrow IPC stream: {exc}")])
        return
    if problems := schema_problems(table.schema):
        yield ReadResult(str(path), "file", None, problems)
        return
    if table.num_rows == 0:
        yield ReadResult(str(path), "file", None, [Problem("", "empty shard: no records")])
        return
    yield from table_to_results(table, str(path))
