"""Find record files under paths and read them with the right reader, in a stable order."""

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from trajforge.schemas import hub, storage
from trajforge.schemas.dataset_rows import DATASET_BOOKKEEPING, DATASET_SUFFIXES, read_dataset_file, reads_rows
from trajforge.schemas.formats import ImportOptions, get_format
from trajforge.schemas.formats.knowledge import KNOWLEDGE
from trajforge.schemas.formats.knowledge import read as read_knowledge
from trajforge.schemas.jsonl import SEGMENT_SUFFIXES, read_segment
from trajforge.schemas.manifest import RejectionWriter
from trajforge.schemas.names import SHARD_SUFFIX
from trajforge.schemas.records import Trajectory
from trajforge.schemas.shards import read_shard
from trajforge.schemas.validation import Problem, ReadResult

NATIVE = "trajforge"
NATIVE_SUFFIXES = (*SEGMENT_SUFFIXES, SHARD_SUFFIX)
FOREIGN_SUFFIXES = (".jsonl", ".jsonl.gz", ".json")  # a format's files, unless its module names its SUFFIXES


def format_suffixes(fmt: str) -> tuple[str, ...]:
    """The file names a format's reader takes: trajforge's own, or the foreign format's (its module's SUFFIXES),
    and a dataset's parquet and arrow files where its records are JSON values."""
    if fmt == NATIVE:
        return NATIVE_SUFFIXES
    own = getattr(get_format(fmt), "SUFFIXES", FOREIGN_SUFFIXES)
    return (*own, *DATASET_SUFFIXES) if reads_rows(fmt) else own


def is_data_name(name: str, suffixes: tuple[str, ...]) -> bool:
    # "_manifest.json", "_rejections.jsonl" and ".tmp" files are bookkeeping, not data; so are a dataset's own.
    return name.endswith(suffixes) and not name.startswith(("_", ".")) and name not in DATASET_BOOKKEEPING


def is_data_file(path: Path, suffixes: tuple[str, ...]) -> bool:
    return path.is_file() and is_data_name(path.name, suffixes)


def _local_infos(paths: list[Path]) -> list[storage.FileInfo]:
    return [storage.FileInfo(str(p), (st := p.stat()).st_size, st.st_mtime_ns) for p in paths]


def find_data_files(
    paths: Iterable[str | Path], suffixes: tuple[str, ...]
) -> tuple[list[storage.FileInfo], list[ReadResult]]:
    """Like find_files, for local paths and URLs alike (listed through Beam's FileSystems; a Hugging Face Hub
    dataset, hf://datasets/..., through the Hub's cache: schemas/hub.py), with sizes and modification times.
    Bookkeeping folders (`_work`, `.spill`) under a folder are skipped."""
    files: list[storage.FileInfo] = []
    missing: list[ReadResult] = []
    for raw in paths:
        raw = str(raw)
        if hub.is_hub(raw):  # its data files only: the cached snapshot may hold others (README, JSON metadata)
            found, _ = find_files([hub.local_folder(raw)], DATASET_SUFFIXES)
            files += _local_infos(found)
            why = f"no {'/'.join(DATASET_SUFFIXES)} files"
            missing += [] if found else [ReadResult(raw, "file", None, [Problem("", why)])]
            continue
        if not storage.is_url(raw):
            found, problems = find_files([raw], suffixes)
            files += _local_infos(found)
            missing += problems
            continue
        listed = storage.list_files(raw)
        root = raw.rstrip("/") + "/"
        keep = [
            f
            for f in listed
            if is_data_name(storage.name(f.path), suffixes)
            and not any(part.startswith(("_", ".")) for part in f.path[len(root) :].split("/")[:-1])
        ]
        if len(listed) == 1 and listed[0].path == raw.rstrip("/"):
            keep = listed if is_data_name(storage.name(raw), suffixes) else []
        if keep:
            files += keep
        else:
            why = "no such file or directory" if not listed else f"no {'/'.join(suffixes)} files"
            missing.append(ReadResult(raw, "file", None, [Problem("", why)]))
    return files, missing


def _in_bookkeeping(path: Path, root: Path) -> bool:
    """Under a folder such as `_work` or `.spill` below ROOT (a job's scratch space, not data)."""
    return any(part.startswith(("_", ".")) for part in path.relative_to(root).parts[:-1])


def _walk(root: Path) -> Iterator[Path]:
    """Every file under `root`, through symlinked folders too (a raw folder assembled from links to run folders);
    a folder reached twice by links is read once."""
    seen: set[Path] = set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        real = Path(folder).resolve()
        if real in seen:
            subfolders[:] = []
            continue
        seen.add(real)
        yield from (Path(folder) / name for name in names)


def find_files(paths: Iterable[str | Path], suffixes: tuple[str, ...]) -> tuple[list[Path], list[ReadResult]]:
    """Files to read, and one problem per path that does not exist or is not a readable kind of file."""
    files: list[Path] = []
    missing: list[ReadResult] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in _walk(path) if is_data_file(p, suffixes) and not _in_bookkeeping(p, path))
        elif path.is_file() and path.name.endswith(suffixes):
            files.append(path)
        else:
            why = "no such file or directory" if not path.exists() else f"not a {'/'.join(suffixes)} file"
            missing.append(ReadResult(str(path), "file", None, [Problem("", why)]))
    return files, missing


def read_records(
    paths: Iterable[str | Path], fmt: str = NATIVE, options: ImportOptions | None = None
) -> Iterator[ReadResult]:
    """Every record under `paths`, valid or not: trajforge segments and shards, a foreign format (its files, or a
    dataset's rows), or knowledge documents (`paths` are then files, as find_knowledge_files lists them)."""
    options = options or ImportOptions()
    if fmt == KNOWLEDGE:
        for path in paths:
            yield from read_knowledge(Path(path))
        return
    reader = None if fmt == NATIVE else get_format(fmt).read
    files, missing = find_data_files(paths, format_suffixes(fmt))
    yield from missing
    for path in (f.path for f in files):
        if reader is not None and path.endswith(DATASET_SUFFIXES):
            yield from read_dataset_file(path, fmt, options)
        elif reader is not None:
            yield from reader(path, options)
        elif path.endswith(SHARD_SUFFIX):
            yield from read_shard(path)
        else:
            yield from read_segment(path, options.max_observation_chars)


class ValidRecords:
    """The one split of read results: the valid records of a stream, counted; the invalid ones go to a rejection
    sink (a RejectionWriter or a list), so none is dropped unseen."""

    def __init__(self, results: Iterable[ReadResult]):
        self.results, self.count = results, 0

    def rejecting_into(self, rejections: RejectionWriter | list[ReadResult]) -> Iterator[Trajectory]:
        add = rejections.append if isinstance(rejections, list) else rejections.add
        for result in self.results:
            if result.ok:
                self.count += 1
                yield result.record
            else:
                add(result)
