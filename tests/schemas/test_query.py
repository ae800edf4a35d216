"""SQL over trajectory files: shards and valid segment records in one `trajectories` table, a `turns` view where
the rows have turns, duckdb's own message for bad SQL."""

import pyarrow as pa
import pytest

from tests.builders import make_trajectory
from trajforge.schemas.arrow import records_to_table
from trajforge.schemas.query import QueryError, query
from trajforge.schemas.shards import ShardError, write_shard
from trajforge.schemas.sinks import write_segments


def test_shards_and_segments_are_one_table_with_a_turns_view(tmp_path):
    shard = write_shard(
        records_to_table([make_trajectory(2, domain="mcp"), make_trajectory(1, domain="mcp")]), tmp_path
    )
    (segment,) = write_segments([make_trajectory(3)], tmp_path / "raw")
    with open(segment, "a") as f:
        f.write("{not json}\n")  # an invalid record is not queried
    result = query([shard, segment], "select domain, count(*) as n from trajectories group by 1 order by 1")
    assert result.columns == ["domain", "n"] and result.rows == [("mcp", 2), ("terminal", 1)]
    turns = query([shard, segment], "select turn_index, action from turns where domain = 'terminal' order by 1")
    assert turns.rows == [(0, "echo step 0"), (1, "echo step 1"), (2, "echo step 2")]
    assert query([], "select count(*) from trajectories").rows == [(0,)]


def test_bad_sql_a_broken_shard_and_rows_without_turns_are_errors(tmp_path):
    shard = write_shard(records_to_table([make_trajectory(1)]), tmp_path)
    with pytest.raises(QueryError, match="(?i)syntax"):
        query([shard], "select nonsense from")
    broken = tmp_path / "broken.arrow"
    broken.write_bytes(b"truncated")
    with pytest.raises(ShardError, match="broken.arrow: not a readable Arrow IPC stream shard"):
        query([broken], "select 1")
    sft = write_shard(pa.table({"domain": ["web"]}).replace_schema_metadata({"trajforge.kind": "sft"}), tmp_path / "s")
    assert query([sft], "select domain from trajectories").rows == [("web",)]
    with pytest.raises(QueryError, match="turns"):  # SFT and RL shards hold messages, not turns: no view
        query([sft], "select * from turns")
