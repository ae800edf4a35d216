"""SQL with duckdb over trajectory files (`trajforge inspect --sql`): table `trajectories`, one row a record, and
view `turns`, one row a turn. Shards are read as Arrow tables, with every column a later stage added; raw segments
are validated first and only their valid records are queried."""

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from trajforge.schemas import storage
from trajforge.schemas.arrow import records_to_table
from trajforge.schemas.names import SHARD_SUFFIX
from trajforge.schemas.shards import read_shard_table
from trajforge.schemas.sources import read_records

TURNS_VIEW = """
create view turns as
select trajectory_id, domain, t.index as turn_index,
       t.action.kind as action_kind, t.action.name as action_name, t.action.content as action,
       t.observation.content as observation, t.observation.format as observation_format,
       t.observation.exit_code as exit_code, t.observation.is_error as is_error,
       t.observation.truncated as truncated, t.latency_ms, t.fault, t.no_change, t.loss_weight
from (select trajectory_id, domain, unnest(turns) as t from trajectories)
"""


class QueryError(ValueError):
    """The SQL did not run (duckdb's message says why)."""


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple]


def trajectories_table(files: list[str | Path]) -> pa.Table:
    """One Arrow table of every shard and every valid segment record; a broken shard is a ShardError naming it."""
    tables = [read_shard_table(f) for f in files if storage.name(f).endswith(SHARD_SUFFIX)]
    segments = [f for f in files if not storage.name(f).endswith(SHARD_SUFFIX)]
    if segments:
        tables.append(records_to_table([r.record for r in read_records(segments) if r.ok]))
    return pa.concat_tables(tables, promote_options="permissive") if tables else records_to_table([])


def query(files: list[str | Path], sql: str) -> QueryResult:
    """Run `sql` over the files' `trajectories` (and `turns`, where the rows have turns: SFT and RL shards hold
    messages)."""
    table = trajectories_table(files)
    con = duckdb.connect()
    con.register("trajectories", table)
    if "turns" in table.column_names:
        con.execute(TURNS_VIEW)
    try:
        result = con.execute(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc
    return QueryResult([d[0] for d in result.description], result.fetchall())
