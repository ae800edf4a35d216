"""Shards: Arrow IPC *stream* files (what datasets.Dataset.from_file memory-maps), named by content hash."""

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from trajforge.schemas import storage
from trajforge.schemas.arrow import schema_kind, schema_problems, table_to_results
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.names import SHARD_SUFFIX
from trajforge.schemas.validation import Problem, ReadResult


def table_to_stream_bytes(table: pa.Table, max_chunksize: int = 1024) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=max_chunksize)
    return sink.getvalue().to_pybytes()


class ShardError(ValueError):
    """A file that is not a readable shard (truncated, corrupt, not Arrow): the message names the file."""


def shard_name(data: bytes, prefix: str = "shard") -> str:
    return f"{prefix}-{content_hash(data, 16)}{SHARD_SUFFIX}"


def write_shard(table: pa.Table, directory: str | Path, prefix: str = "shard") -> Path | str:
    """Write one shard named by the hash of its bytes, via a temporary name; same table, same file. Into a local
    folder (returns a Path) or under a URL (returns the URL)."""
    data = table_to_stream_bytes(table)
    written = storage.write_bytes(storage.join(directory, shard_name(data, prefix)), data)
    return written if storage.is_url(written) else Path(written)


def read_shard_table(path: str | Path) -> pa.Table:
    """A whole shard (memory-mapped when local); a file that is not a readable shard is a ShardError naming it."""
    try:
        if storage.is_url(path):
            return pa.ipc.open_stream(pa.BufferReader(storage.read_bytes(path))).read_all()
        with pa.memory_map(str(path), "r") as source:
            return pa.ipc.open_stream(source).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise _not_a_shard(path, exc) from exc


def shard_kind(path: str | Path) -> str:
    """trajectory, cpt, sft or rl, from the stream's schema alone (the first bytes of the file); a file that is not
    a shard is a ShardError naming it."""
    try:
        with storage.open_read(path) as source:
            return schema_kind(pa.ipc.open_stream(source).schema)
    except (pa.ArrowInvalid, OSError) as exc:
        raise _not_a_shard(path, exc) from exc


def _not_a_shard(path: str | Path, exc: Exception) -> ShardError:
    return ShardError(f"{path}: not a readable Arrow IPC stream shard (truncated or corrupt?): {exc}")


def read_shard(path: str | Path) -> Iterator[ReadResult]:
    """Read and validate every row of a shard; a file that is not a readable shard is one problem."""
    try:
        table = read_shard_table(path)
    except ShardError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        yield ReadResult(str(path), "file", None, [Problem("", reason)])
        return
    if problems := schema_problems(table.schema):
        yield ReadResult(str(path), "file", None, problems)
        return
    if table.num_rows == 0:
        yield ReadResult(str(path), "file", None, [Problem("", "empty shard: no records")])
        return
    yield from table_to_results(table, str(path))
