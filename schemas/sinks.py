"""Write records as raw segments or shards, in chunks, each file named by the hash of its content."""

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from trajforge.schemas import storage
from trajforge.schemas.arrow import records_to_table
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.jsonl import record_to_json
from trajforge.schemas.names import SEGMENT_PREFIX
from trajforge.schemas.records import Trajectory
from trajforge.schemas.shards import write_shard

DEFAULT_RECORDS_PER_FILE = 1000


def _chunks(records: Iterable[Trajectory], size: int) -> Iterator[list[Trajectory]]:
    iterator = iter(records)
    while chunk := list(islice(iterator, size)):
        yield chunk


def write_segments(
    records: Iterable[Trajectory], directory: str | Path, per_file: int = DEFAULT_RECORDS_PER_FILE
) -> list[Path | str]:
    """Atomic, content-named segments in DIRECTORY (a folder or a URL); local ones come back as Paths."""
    paths: list[Path | str] = []
    for chunk in _chunks(records, per_file):
        data = "".join(record_to_json(r) + "\n" for r in chunk).encode("utf-8")
        written = storage.write_bytes(storage.join(directory, f"{SEGMENT_PREFIX}{content_hash(data, 16)}.jsonl"), data)
        paths.append(written if storage.is_url(written) else Path(written))
    return paths


def write_shards(
    records: Iterable[Trajectory], directory: str | Path, per_file: int = DEFAULT_RECORDS_PER_FILE
) -> list[Path]:
    return [write_shard(records_to_table(chunk), directory) for chunk in _chunks(records, per_file)]
