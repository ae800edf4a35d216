"""Find record files under paths and read them with the right reader, in a stable order."""

from collections.abc import Iterable, Iterator
from pathlib import Path

from schemas.formats import ImportOptions, get_format
from schemas.formats.knowledge import KNOWLEDGE
from schemas.formats.knowledge import read as read_knowledge
from schemas.jsonl import SEGMENT_SUFFIXES, read_segment
from schemas.shards import SHARD_SUFFIX, read_shard
from schemas.validation import Problem, ReadResult

NATIVE = "trajforge"
NATIVE_SUFFIXES = (*SEGMENT_SUFFIXES, SHARD_SUFFIX)
FOREIGN_SUFFIXES = (".jsonl", ".jsonl.gz", ".json")


def is_data_file(path: Path, suffixes: tuple[str, ...]) -> bool:
    # "_manifest.json", "_rejections.jsonl" and ".tmp" files are bookkeeping, not data.
    return path.is_file() and path.name.endswith(suffixes) and not path.name.startswith(("_", "."))


def find_files(paths: Iterable[str | Path], suffixes: tuple[str, ...]) -> tuple[list[Path], list[ReadResult]]:
    """Files to read, and one problem per path that does not exist or is not a readable kind of file."""
    files: list[Path] = []
    missing: list[ReadResult] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if is_data_file(p, suffixes))
        elif path.is_file() and path.name.endswith(suffixes):
            files.append(path)
        else:
            why = "no such file or directory" if not path.exists() else f"not a {'/'.join(suffixes)} file"
            missing.append(ReadResult(str(path), "file", None, [Problem("", why)]))
    return files, missing


def read_records(
    paths: Iterable[str | Path], fmt: str = NATIVE, options: ImportOptions | None = None
) -> Iterator[ReadResult]:
    """Every record under `paths`, valid or not: trajforge segments and shards, a foreign format, or knowledge
    documents (`paths` are then files, as find_knowledge_files lists them)."""
    options = options or ImportOptions()
    if fmt == KNOWLEDGE:
        for path in paths:
            yield from read_knowledge(Path(path))
        return
    suffixes = NATIVE_SUFFIXES if fmt == NATIVE else FOREIGN_SUFFIXES
    reader = None if fmt == NATIVE else get_format(fmt).read
    files, missing = find_files(paths, suffixes)
    yield from missing
    for path in files:
        if reader is not None:
            yield from reader(path, options)
        elif path.name.endswith(SHARD_SUFFIX):
            yield from read_shard(path)
        else:
            yield from read_segment(path, options.max_observation_chars)
