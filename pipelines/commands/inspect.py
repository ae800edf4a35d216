"""`trajforge inspect`: counts, schema versions and a sample of any raw segment or shard; SQL with duckdb."""

import json
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, require_inputs
from trajforge.pipelines.console import console, out, progress
from trajforge.schemas import storage
from trajforge.schemas.arrow import records_to_table, schema_kind
from trajforge.schemas.inspection import RecordSummary, summarise_records
from trajforge.schemas.names import SHARD_SUFFIX
from trajforge.schemas.records import Trajectory
from trajforge.schemas.shards import ShardError, read_shard_table
from trajforge.schemas.sources import NATIVE_SUFFIXES, read_records

TURNS_VIEW = """
create view turns as
select trajectory_id, domain, t.index as turn_index,
       t.action.kind as action_kind, t.action.name as action_name, t.action.content as action,
       t.observation.content as observation, t.observation.format as observation_format,
       t.observation.exit_code as exit_code, t.observation.is_error as is_error,
       t.observation.truncated as truncated, t.latency_ms, t.fault, t.no_change, t.loss_weight
from (select trajectory_id, domain, unnest(turns) as t from trajectories)
"""


def inspect_command(
    paths: list[str] = typer.Argument(
        ...,
        help="Raw segments (.jsonl), shards (.arrow), or directories of them; local or URLs (s3://bucket/corpus; "
        "S3 settings from the AWS environment, e.g. AWS_ENDPOINT_URL_S3).",
    ),
    sql: str | None = typer.Option(
        None,
        help="Run SQL with duckdb over table `trajectories` (one row a record) and view `turns` "
        "(one row a turn: turn_index, action_kind, action, observation, exit_code, ...), "
        'e.g. "select domain, count(*) from trajectories group by 1".',
    ),
    samples: int = typer.Option(1, min=0, help="Sample trajectories to show."),
    max_problems: int = typer.Option(20, min=0, help="Invalid records to list."),
) -> None:
    """Summarise trajectory files: records, turns, domains, outcomes, schema versions, invalid records, a sample.

    Exit code 0 when every record is valid, 1 when some were rejected.
    """
    files = require_inputs(paths, NATIVE_SUFFIXES)
    if sql is not None:
        _run_sql(files, sql)
        return
    derived = [f for f in files if _is_derived(f)]
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


def shard_kind(path: str | Path) -> str:
    """From the stream's schema alone (the first bytes of the file); a file that is not a shard names itself."""
    try:
        with storage.open_read(path) as source:
            return schema_kind(pa.ipc.open_stream(source).schema)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ShardError(f"{path}: not a readable Arrow IPC stream shard (truncated or corrupt?): {exc}") from exc


def _is_derived(path: str | Path) -> bool:
    """An SFT or RL shard; an unreadable one is left to read_records, which lists it as invalid."""
    try:
        return storage.name(path).endswith(SHARD_SUFFIX) and shard_kind(path) in ("sft", "rl")
    except ShardError:
        return False


def _summarise_derived(files: list[str | Path]) -> None:
    """SFT and RL shards: rows per kind and domain (their rows are training samples, not trajectories)."""
    counts: Counter = Counter()
    for path in files:
        table = read_shard_table(path)
        kind = shard_kind(path)
        for domain in table.column("domain").to_pylist():
            counts[(kind, domain)] += 1
    for (kind, domain), n in sorted(counts.items()):
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
    """Shards are read as Arrow tables (with every column a later stage added); segments are validated first."""
    try:
        tables = [read_shard_table(f) for f in files if storage.name(f).endswith(SHARD_SUFFIX)]
    except ShardError as exc:
        console.print(Text(str(exc), style="red"), soft_wrap=True)  # Text: brackets in paths are not markup
        raise typer.Exit(EXIT_USAGE) from exc
    segments = [f for f in files if not storage.name(f).endswith(SHARD_SUFFIX)]
    if segments:
        records = [r.record for r in read_records(segments) if r.ok]
        tables.append(records_to_table(records))
    table = pa.concat_tables(tables, promote_options="permissive") if tables else records_to_table([])
    con = duckdb.connect()
    con.register("trajectories", table)
    if "turns" in table.column_names:  # SFT and RL shards hold messages, not turns
        con.execute(TURNS_VIEW)
    try:
        result = con.execute(sql)
    except duckdb.Error as exc:
        console.print(f"[red]SQL error:[/] {exc}")
        raise typer.Exit(EXIT_USAGE) from exc
    columns = [d[0] for d in result.description]
    grid = Table(*columns)
    for row in result.fetchall():
        grid.add_row(*(_cell(v) for v in row))
    out.print(grid)


def _cell(value) -> str:
    return json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
