"""`trajforge inspect`: counts, schema versions and a sample of any raw segment or shard; SQL with duckdb. What it
counts and queries is schemas/inspection.py and schemas/query.py; this prints it."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, flags, require_inputs
from trajforge.pipelines.console import console, out, progress
from trajforge.schemas.inspection import RecordSummary, count_derived_rows, is_derived, summarise_records
from trajforge.schemas.query import QueryError, query
from trajforge.schemas.records import Trajectory
from trajforge.schemas.shards import ShardError
from trajforge.schemas.sources import NATIVE_SUFFIXES

Paths = Annotated[
    list[str],
    typer.Argument(
        help="Raw segments (.jsonl), shards (.arrow), or directories of them; local or URLs (s3://bucket/corpus; "
        "S3 settings from the AWS environment, e.g. AWS_ENDPOINT_URL_S3)."
    ),
]
Sql = Annotated[
    str | None,
    typer.Option(
        help="Run SQL with duckdb over table `trajectories` (one row a record) and view `turns` "
        "(one row a turn: turn_index, action_kind, action, observation, exit_code, ...), "
        'e.g. "select domain, count(*) from trajectories group by 1".'
    ),
]
MaxProblems = Annotated[int, typer.Option(min=0, help="Invalid records to list.")]


def inspect_command(paths: Paths, sql: Sql = None, samples: flags.Samples = 1, max_problems: MaxProblems = 20) -> None:
    """Summarise trajectory files: records, turns, domains, outcomes, schema versions, invalid records, a sample.

    Exit code 0 when every record is valid, 1 when some were rejected.
    """
    files = require_inputs(paths, NATIVE_SUFFIXES)
    if sql is not None:
        _run_sql(files, sql)
        return
    derived = [f for f in files if is_derived(f)]
    if derived:
        _summarise_derived(derived)
        files = [f for f in files if f not in derived]
        if not files:
            raise typer.Exit(EXIT_OK)
    summary = summarise_records(files, samples, progress)
    _print_summary(summary, len(files), max_problems)
    raise typer.Exit(EXIT_REJECTED if summary.invalid else EXIT_OK)


def _print_summary(summary: RecordSummary, files: int, max_problems: int) -> None:
    out.print(
        f"[bold]{files} files[/]: {summary.valid} valid records, {len(summary.invalid)} invalid, {summary.turns} turns"
    )
    for key, counter in summary.counts.items():
        if counter:
            out.print(f"  {key}: " + ", ".join(f"{k} {v}" for k, v in counter.most_common()))
    if summary.invalid:
        out.print(f"[red]invalid records ({len(summary.invalid)}):[/]")
        for result in summary.invalid[:max_problems]:
            out.print(f"  {result.source}:{result.locator}: " + "; ".join(result.reasons()), markup=False)
    for record in summary.samples:
        out.print(_sample(record))


def _summarise_derived(files: list[str | Path]) -> None:
    """SFT and RL shards: rows per kind and domain (their rows are training samples, not trajectories)."""
    for (kind, domain), n in sorted(count_derived_rows(files).items()):
        out.print(f"  {kind} shards: {n} rows in domain {domain}")


def _sample(record: Trajectory, turns: int = 3, width: int = 160) -> Table:
    table = Table(title=f"{record.trajectory_id} · {record.domain} · {record.environment.name}", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("action")
    table.add_column("observation")
    for turn in record.turns[:turns]:
        action = f"[{turn.action.kind}{':' + turn.action.name if turn.action.name else ''}] {turn.action.content}"
        table.add_row(str(turn.index), _clip(action, width), _clip(turn.observation.content, width))
    if len(record.turns) > turns:
        table.add_row("…", f"{len(record.turns) - turns} more turns", "")
    if record.task_description:
        table.caption = _clip(f"task: {record.task_description}", width)
    return table


def _clip(text: str, width: int) -> str:
    text = text.replace("\n", "⏎ ")
    return escape(text if len(text) <= width else text[: width - 1] + "…")


def _run_sql(files: list[str | Path], sql: str) -> None:
    try:
        result = query(files, sql)
    except ShardError as exc:
        console.print(Text(str(exc), style="red"), soft_wrap=True)  # Text: brackets in paths are not markup
        raise typer.Exit(EXIT_USAGE) from exc
    except QueryError as exc:
        console.print(f"[red]SQL error:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_USAGE) from exc
    grid = Table(*result.columns)
    for row in result.rows:
        grid.add_row(*(_cell(v) for v in row))
    out.print(grid)


def _cell(value) -> str:
    return json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
