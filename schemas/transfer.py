"""Import and export: move trajectories between trajforge and the formats users have. The jobs behind
`trajforge import` and `trajforge export`; the command line only parses flags and prints what they return."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.schemas.formats import ImportOptions, get_format
from trajforge.schemas.manifest import Manifest, RejectionWriter, read_manifest
from trajforge.schemas.names import MANIFEST_NAME
from trajforge.schemas.registry import Registry
from trajforge.schemas.sinks import DEFAULT_RECORDS_PER_FILE, write_segments, write_shards
from trajforge.schemas.sources import NATIVE, NATIVE_SUFFIXES, ValidRecords, find_files, read_records
from trajforge.schemas.validation import ReadResult

# A wrapper that shows progress over an iterable (the command line passes its own); the default shows none.
Progress = Callable[[Iterable, str], Iterable]
# trajforge's own layouts to export to, besides the foreign FORMATS: name -> its writer (records, folder, per file).
EXPORT_TARGETS: Registry[Callable[[Iterable, Path, int], list]] = Registry("export format")
EXPORT_TARGETS.add("shards", write_shards, help="Arrow IPC stream shards (a directory)")
EXPORT_TARGETS.add("segments", write_segments, help="raw JSON Lines segments (a directory)")


def _silent(items: Iterable, label: str) -> Iterable:
    return items


class ImportTargetError(ValueError):
    """The output folder holds data that no import wrote."""


@dataclass(frozen=True)
class ImportJob:
    format: str
    output: Path
    options: ImportOptions = field(default_factory=ImportOptions)
    per_file: int = DEFAULT_RECORDS_PER_FILE


def import_records(inputs: list[Path], job: ImportJob, progress: Progress = _silent) -> Manifest:
    """Valid records -> content-addressed segments in the output folder; each invalid one -> the rejection file;
    the manifest counts both. A previous import's segments are replaced; a folder of other data is refused."""
    output = job.output
    previous = previous_import_outputs(output)
    output.mkdir(parents=True, exist_ok=True)
    with RejectionWriter(output) as rejections:
        valid = ValidRecords(progress(read_records(inputs, job.format, job.options), f"importing {job.format}"))
        written = write_segments(valid.rejecting_into(rejections), output, job.per_file)
    outputs = sorted(Path(p).name for p in written)
    for stale in previous - set(outputs):
        (output / stale).unlink(missing_ok=True)
    manifest = Manifest(
        stage="import",
        config={"format": job.format, **job.options.__dict__},
        inputs=[str(f) for f in inputs],
        outputs=outputs,
        counts={"read": valid.count + rejections.count, "written": valid.count, "rejected": rejections.count},
        rejection_reasons=rejections.reasons,
    )
    manifest.write(output)
    return manifest


def previous_import_outputs(output: Path) -> set[str]:
    """Files a previous import into OUTPUT wrote (replaced by this one); refuse a folder that holds other data."""
    if (output / MANIFEST_NAME).exists():
        return set(read_manifest(output).outputs)
    if output.exists() and find_files([output], NATIVE_SUFFIXES)[0]:
        raise ImportTargetError(f"{output} already holds data that no import wrote; choose an empty folder.")
    return set()


@dataclass
class ExportResult:
    count: int
    unit: str  # what was counted: records, shards, segments, benchmark lines (and in which files)
    rejected: list[ReadResult]
    notes: list[str] = field(default_factory=list)  # what was skipped, and why


def export_records(
    inputs: list[Path], fmt: str, output: Path, per_file: int = DEFAULT_RECORDS_PER_FILE, progress: Progress = _silent
) -> ExportResult:
    """trajforge records -> a foreign format, shards or segments; invalid input records are listed and skipped.
    A bad output for the format (a file where a folder is needed) raises ValueError."""
    rejected: list[ReadResult] = []
    valid = ValidRecords(progress(read_records(inputs, NATIVE), f"exporting to {fmt}")).rejecting_into(rejected)
    if fmt in EXPORT_TARGETS:
        return ExportResult(len(EXPORT_TARGETS.get(fmt)(valid, output, per_file)), fmt, rejected)
    if fmt == "agentworldbench":
        summary = get_format(fmt).export_folder(valid, output)
        files = ", ".join(f"{task}_test.jsonl ({n})" for task, n in sorted(summary.lines.items())) or "no file"
        notes = [
            f"skipped {n} {domain} trajectories: not an AgentWorldBench task"
            for domain, n in sorted(summary.skipped.items())
        ]
        return ExportResult(summary.count, f"benchmark lines in {files}", rejected, notes)
    return ExportResult(get_format(fmt).write(valid, output), "records", rejected)
