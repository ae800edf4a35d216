"""`trajforge import` and `trajforge export`: move trajectories between trajforge and the formats users have."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags, require_inputs
from trajforge.pipelines.commands.unused_flags import refuse_unused, when
from trajforge.pipelines.console import console, progress
from trajforge.schemas.dataset_rows import DATASET_SUFFIXES
from trajforge.schemas.formats import FORMATS, ImportOptions
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import REJECTIONS_NAME, SHARD_SUFFIX
from trajforge.schemas.records import DOMAINS
from trajforge.schemas.sinks import DEFAULT_RECORDS_PER_FILE
from trajforge.schemas.sources import NATIVE_SUFFIXES, format_suffixes
from trajforge.schemas.transfer import (
    EXPORT_TARGETS,
    ExportResult,
    ImportJob,
    ImportTargetError,
    export_records,
    import_records,
)
from trajforge.training.trainer_formats import (
    DEFAULT_CONTEXT_LENGTH,
    TOKENIZING_FORMATS,
    TRAINER_FORMATS,
    TrainerExport,
)

ForeignFormat = Enum("ForeignFormat", {name: name for name in FORMATS}, type=str)
ExportFormat = Enum("ExportFormat", {n: n for n in (*FORMATS, *EXPORT_TARGETS, *TRAINER_FORMATS)}, type=str)
DomainChoice = Enum("DomainChoice", {d: d for d in DOMAINS}, type=str)

IMPORT_DEFAULTS = ImportOptions()
# one --format for both commands: import takes the foreign formats, export them and its targets
FORMAT = typer.Option(
    "--format",
    "-f",
    help=f"The format to import from or export to: {FORMATS.describe('; ')}; export also "
    f"{EXPORT_TARGETS.describe('; ')}; {TRAINER_FORMATS.describe('; ')}",
)

ImportInputs = Annotated[
    list[str],
    typer.Argument(help="Files, directories or URLs in the foreign format; a Hugging Face Hub dataset as "
                   "hf://datasets/OWNER/NAME, @REVISION and /FOLDER after it where wanted (its parquet and arrow "
                   "files, through the Hub's cache)."),
]  # fmt: skip
ImportFormat = Annotated[ForeignFormat, FORMAT]
Domain = Annotated[
    DomainChoice | None, typer.Option(help="Domain of every record (default: the format's own, else 'other').")
]
Environment = Annotated[str | None, typer.Option(help="Environment name to record (default: from the format).")]
PerFile = Annotated[int, typer.Option(min=1, help="Records per segment file (or shard).")]
MaxObservationChars = Annotated[int, typer.Option(min=1, help="Longer observations are rejected.")]
ExportInputs = Annotated[list[Path], typer.Argument(help="trajforge segments, shards, or directories of them.")]
ExportTo = Annotated[ExportFormat, FORMAT]


def import_command(
    context: typer.Context,
    inputs: ImportInputs,
    fmt: ImportFormat,
    output: flags.OutputPath,
    domain: Domain = None,
    environment: Environment = None,
    run_id: flags.RunId = None,
    per_file: PerFile = DEFAULT_RECORDS_PER_FILE,
    max_observation_chars: MaxObservationChars = IMPORT_DEFAULTS.max_observation_chars,
    column: flags.Column = None,
) -> None:
    """Import trajectories from a foreign format into raw trajforge segments.

    Valid records go to content-addressed JSON Lines segments in OUTPUT; each invalid one goes to
    OUTPUT/_rejections.jsonl with every reason and its raw bytes. OUTPUT/_manifest.json holds the counts
    (read = written + rejected). Exit code 0: all imported; 1: some records were rejected.

    A Hugging Face dataset's parquet or arrow files are read row by row, streamed: a row (or its --column) is one
    record of the format (docs/formats.md).

    --output: the folder for the raw segments (e.g. data/raw/imported); --run-id: default the output folder's name.
    """
    run_id = run_id or output.resolve().name
    options = ImportOptions(domain and domain.value, environment, run_id, max_observation_chars, column)
    files = require_inputs(inputs, format_suffixes(fmt.value))
    dataset = any(str(f).endswith(DATASET_SUFFIXES) for f in files)
    refuse_unused(context, when(not dataset, {"column": f"no dataset file {fmt.value} reads among the inputs"}))
    try:
        manifest = import_records(files, ImportJob(fmt.value, output, options, per_file), progress)
    except ImportTargetError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    _import_summary(manifest, output)
    raise typer.Exit(EXIT_REJECTED if manifest.counts["rejected"] else EXIT_OK)


def _import_summary(manifest: Manifest, output: Path) -> None:
    c = manifest.counts
    console.print(
        f"[bold]{manifest.stage}[/]: read {c['read']}, written {c['written']}, rejected {c['rejected']} -> {output}"
    )
    for reason, n in sorted(manifest.rejection_reasons.items(), key=lambda kv: -kv[1]):
        console.print(f"  [red]{n:>6}[/] {reason}")
    if c["rejected"]:
        console.print(f"  reasons and raw records: {output / REJECTIONS_NAME}")


def export_command(
    inputs: ExportInputs,
    fmt: ExportTo,
    output: flags.OutputPath,
    per_file: PerFile = DEFAULT_RECORDS_PER_FILE,
    tokenizer: flags.Tokenizer = None,
    context_length: flags.ContextLength = DEFAULT_CONTEXT_LENGTH,
) -> None:
    """Export trajforge records to another format. Invalid input records are listed and skipped (exit code 1).

    trl and verl read build-corpus, curate-sft and prepare-rl outputs (their shards) and write what those trainers
    read as they are: OUTPUT/<dataset>/train.parquet (the rows the stage trains on) and test.parquet (held-out
    tasks, for evaluation only). The reward they call: trajforge.training.reward_functions (docs/handing-off.md).

    --output: a file, or a folder for shards, segments, agentworldbench (*_test.jsonl) and trl/verl (parquet
    files). --tokenizer (trl): pre-tokenize CPT and SFT rows with their loss masks for this tokenizer: a tokenizer
    folder, a trajforge checkpoint or run folder, or smollm2 (saved beside the data in OUTPUT/tokenizer/).
    --context-length (trl tokenized rows): longer CPT documents are split, every loss token kept; long SFT prompts
    keep their head and most recent tokens, as train does. Match the trainer's max_length.
    """
    if tokenizer is not None and fmt.value not in TOKENIZING_FORMATS:
        console.print(f"[red]--tokenizer is for --format {' or '.join(TOKENIZING_FORMATS)}, not {fmt.value}[/]")
        raise typer.Exit(EXIT_USAGE)
    if fmt.value in TRAINER_FORMATS:
        _export_for_trainer(inputs, TrainerExport(fmt.value, str(output), tokenizer, context_length))
    try:
        result = export_records(require_inputs(inputs, NATIVE_SUFFIXES), fmt.value, output, per_file, progress)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    _export_summary(result, output)
    raise typer.Exit(EXIT_REJECTED if result.rejected else EXIT_OK)


def _export_for_trainer(inputs: list[Path], config: TrainerExport) -> None:
    from rich.markup import escape

    from trajforge.training.trainer_export import export_for_trainer

    try:
        result = export_for_trainer(require_inputs(inputs, (SHARD_SUFFIX,)), config, progress)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    for note in result.notes:
        console.print(f"  {note}")
    for name, rows in result.files.items():
        console.print(f"  {rows:>8} rows  {Path(config.output) / name}")
    files = f"{len(result.files)} parquet file{'s' if len(result.files) != 1 else ''}"
    console.print(f"[bold]export[/]: {files} for {config.format} -> {config.output}")
    raise typer.Exit(EXIT_OK)


def _export_summary(result: ExportResult, output: Path) -> None:
    for note in result.notes:
        console.print(f"  {note}")
    console.print(
        f"[bold]export[/]: {result.count} {result.unit} -> {output}; {len(result.rejected)} input records rejected"
    )
    for rejected in result.rejected[:20]:
        console.print(f"  [red]{rejected.source}:{rejected.locator}[/] {'; '.join(rejected.reasons())}")
