"""`trajforge import` and `trajforge export`: move trajectories between trajforge and the formats users have."""

from collections.abc import Iterator
from enum import Enum
from pathlib import Path

import typer

from pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, require_inputs
from pipelines.console import console, progress
from schemas.formats import FORMATS, ImportOptions, get_format
from schemas.manifest import Manifest, RejectionWriter, read_manifest
from schemas.names import MANIFEST_NAME, REJECTIONS_NAME
from schemas.records import DOMAINS, Trajectory
from schemas.sinks import DEFAULT_RECORDS_PER_FILE, write_segments, write_shards
from schemas.sources import FOREIGN_SUFFIXES, NATIVE, NATIVE_SUFFIXES, find_files, read_records
from schemas.validation import DEFAULT_MAX_OBSERVATION_CHARS, ReadResult

ForeignFormat = Enum("ForeignFormat", {name: name for name in FORMATS}, type=str)
ExportFormat = Enum("ExportFormat", {**{n: n for n in FORMATS}, "shards": "shards", "segments": "segments"}, type=str)
DomainChoice = Enum("DomainChoice", {d: d for d in DOMAINS}, type=str)

FORMAT_HELP = "; ".join(f"{name}: {text}" for name, text in FORMATS.items())


def import_command(
    inputs: list[Path] = typer.Argument(..., help="Files or directories in the foreign format."),
    fmt: ForeignFormat = typer.Option(..., "--format", "-f", help=FORMAT_HELP),
    output: Path = typer.Option(..., "--output", "-o", help="Directory for the raw segments, e.g. data/raw/imported"),
    domain: DomainChoice | None = typer.Option(
        None, help="Domain of every record (default: the format's own, else 'other')."
    ),
    environment: str | None = typer.Option(None, help="Environment name to record (default: from the format)."),
    run_id: str | None = typer.Option(
        None, help="Run id recorded in each record's source (default: the output folder's name)."
    ),
    per_file: int = typer.Option(DEFAULT_RECORDS_PER_FILE, min=1, help="Records per segment file."),
    max_observation_chars: int = typer.Option(
        DEFAULT_MAX_OBSERVATION_CHARS, min=1, help="Longer observations are rejected."
    ),
) -> None:
    """Import trajectories from a foreign format into raw trajforge segments.

    Valid records go to content-addressed JSON Lines segments in OUTPUT; each invalid one goes to
    OUTPUT/_rejections.jsonl with every reason and its raw bytes. OUTPUT/_manifest.json holds the counts
    (read = written + rejected). Exit code 0: all imported; 1: some records were rejected.
    """
    previous = _previous_outputs(output)
    options = ImportOptions(
        domain=domain.value if domain else None,
        environment=environment,
        run_id=run_id or output.resolve().name,
        max_observation_chars=max_observation_chars,
    )
    files = require_inputs(inputs, FOREIGN_SUFFIXES)
    output.mkdir(parents=True, exist_ok=True)
    with RejectionWriter(output) as rejections:
        results = progress(read_records(inputs, fmt.value, options), f"importing {fmt.value}")
        valid = _Valid(results, rejections)
        written = write_segments(valid, output, per_file)
    outputs = sorted(p.name for p in written)
    for stale in previous - set(outputs):
        (output / stale).unlink(missing_ok=True)
    count = valid.count
    manifest = Manifest(
        stage="import",
        config={"format": fmt.value, **options.__dict__},
        inputs=[str(f) for f in files],
        outputs=outputs,
        counts={"read": count + rejections.count, "written": count, "rejected": rejections.count},
        rejection_reasons=rejections.reasons,
    )
    manifest.write(output)
    _summary(manifest, output)
    raise typer.Exit(EXIT_REJECTED if rejections.count else EXIT_OK)


def _previous_outputs(output: Path) -> set[str]:
    """Files a previous import into OUTPUT wrote (replaced by this one); refuse a folder that holds other data."""
    if (output / MANIFEST_NAME).exists():
        return set(read_manifest(output).outputs)
    if output.exists() and find_files([output], NATIVE_SUFFIXES)[0]:
        console.print(f"[red]{output} already holds data that no import wrote; choose an empty folder.[/]")
        raise typer.Exit(EXIT_USAGE)
    return set()


class _Valid:
    """The valid records of a stream, counted; the others go to the rejection file."""

    def __init__(self, results: Iterator[ReadResult], rejections: RejectionWriter):
        self.results, self.rejections, self.count = results, rejections, 0

    def __iter__(self) -> Iterator[Trajectory]:
        for result in self.results:
            if result.ok:
                self.count += 1
                yield result.record
            else:
                self.rejections.add(result)


def _summary(manifest: Manifest, output: Path) -> None:
    c = manifest.counts
    console.print(
        f"[bold]{manifest.stage}[/]: read {c['read']}, written {c['written']}, rejected {c['rejected']} -> {output}"
    )
    for reason, n in sorted(manifest.rejection_reasons.items(), key=lambda kv: -kv[1]):
        console.print(f"  [red]{n:>6}[/] {reason}")
    if c["rejected"]:
        console.print(f"  reasons and raw records: {output / REJECTIONS_NAME}")


def export_command(
    inputs: list[Path] = typer.Argument(..., help="trajforge segments, shards, or directories of them."),
    fmt: ExportFormat = typer.Option(
        ...,
        "--format",
        "-f",
        help=f"{FORMAT_HELP}; shards: Arrow IPC stream shards (a directory); "
        "segments: raw JSON Lines segments (a directory)",
    ),
    output: Path = typer.Option(
        ..., "--output", "-o", help="Output file (a folder for shards, segments and agentworldbench: *_test.jsonl)."
    ),
    per_file: int = typer.Option(DEFAULT_RECORDS_PER_FILE, min=1, help="Records per shard or segment."),
) -> None:
    """Export trajforge records to another format. Invalid input records are listed and skipped (exit code 1)."""
    require_inputs(inputs, NATIVE_SUFFIXES)
    rejected: list[ReadResult] = []

    def valid() -> Iterator[Trajectory]:
        for result in progress(read_records(inputs, NATIVE), f"exporting to {fmt.value}"):
            if result.ok:
                yield result.record
            else:
                rejected.append(result)

    if fmt.value == "shards":
        count = sum(1 for _ in write_shards(valid(), output, per_file))
        unit = "shards"
    elif fmt.value == "segments":
        count = len(write_segments(valid(), output, per_file))
        unit = "segments"
    elif fmt.value == "agentworldbench":
        try:
            summary = get_format(fmt.value).export_folder(valid(), output)
        except ValueError as exc:
            console.print(f"[red]{exc}[/]")
            raise typer.Exit(EXIT_USAGE) from exc
        count, unit = (
            summary.count,
            "benchmark lines in "
            + (", ".join(f"{task}_test.jsonl ({n})" for task, n in sorted(summary.lines.items())) or "no file"),
        )
        for domain, n in sorted(summary.skipped.items()):
            console.print(f"  skipped {n} {domain} trajectories: not an AgentWorldBench task")
    else:
        count = get_format(fmt.value).write(valid(), output)
        unit = "records"
    console.print(f"[bold]export[/]: {count} {unit} -> {output}; {len(rejected)} input records rejected")
    for result in rejected[:20]:
        console.print(f"  [red]{result.source}:{result.locator}[/] {'; '.join(result.reasons())}")
    raise typer.Exit(EXIT_REJECTED if rejected else EXIT_OK)
