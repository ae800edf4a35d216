import datasets
import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import make_trajectory
from trajforge.schemas.arrow import TRAJECTORY_SCHEMA, records_to_table
from trajforge.schemas.records import Action, Observation, Trajectory, Turn
from trajforge.schemas.shards import ShardError, read_shard, read_shard_table, shard_kind, write_shard
from trajforge.schemas.sinks import write_segments, write_shards
from trajforge.schemas.sources import read_records


def test_schema_covers_every_record_field():
    assert TRAJECTORY_SCHEMA.names == list(Trajectory.model_fields)
    turn = TRAJECTORY_SCHEMA.field("turns").type.value_type
    assert [f.name for f in turn] == list(Turn.model_fields)
    assert [f.name for f in turn.field("action").type] == list(Action.model_fields)
    assert [f.name for f in turn.field("observation").type] == list(Observation.model_fields)


def test_shard_round_trip_and_name(tmp_path):
    records = [make_trajectory(n) for n in (1, 4, 2)]
    path = write_shard(records_to_table(records), tmp_path)
    assert path.name.startswith("shard-") and path.suffix == ".arrow"
    assert [r.record for r in read_shard(path)] == records
    assert read_shard_table(path).schema.equals(TRAJECTORY_SCHEMA, check_metadata=False)


def test_shards_are_deterministic(tmp_path):
    records = [make_trajectory(n) for n in range(1, 6)]
    first = write_shards(records, tmp_path / "a", per_file=2)
    second = write_shards(records, tmp_path / "b", per_file=2)
    assert [p.name for p in first] == [p.name for p in second]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert len(first) == 3


def test_datasets_memory_maps_a_shard(tmp_path):
    records = [make_trajectory(n) for n in (2, 3)]
    path = write_shard(records_to_table(records), tmp_path)
    ds = datasets.Dataset.from_file(str(path))
    assert ds.num_rows == 2
    assert ds[1]["turns"][2]["observation"]["content"] == "step 2\n"


def test_duckdb_queries_a_shard(tmp_path):
    shard = read_shard_table(  # noqa: F841 (duckdb reads the local by name)
        write_shard(records_to_table([make_trajectory(2), make_trajectory(3)]), tmp_path)
    )
    rows = duckdb.sql("select domain, sum(len(turns)) from shard group by 1").fetchall()
    assert rows == [("terminal", 5)]


def test_not_a_shard(tmp_path):
    path = tmp_path / "junk.arrow"
    path.write_bytes(b"not arrow at all")
    (result,) = read_shard(path)
    assert not result.ok and result.reasons()[0].startswith("not a readable Arrow IPC stream")


def test_a_shards_kind_is_read_from_its_schema_and_a_non_shard_names_itself(tmp_path):
    assert shard_kind(write_shard(records_to_table([make_trajectory(1)]), tmp_path)) == "trajectory"
    rl = pa.table({"domain": ["web"]}).replace_schema_metadata({"trajforge.kind": "rl"})
    assert shard_kind(write_shard(rl, tmp_path / "rl")) == "rl"
    junk = tmp_path / "junk.arrow"
    junk.write_bytes(b"not arrow at all")
    with pytest.raises(ShardError, match=r"junk.arrow: not a readable Arrow IPC stream shard"):
        shard_kind(junk)


def test_shard_with_a_foreign_schema(tmp_path):
    path = write_shard(pa.table({"domain": ["terminal"]}), tmp_path)
    (result,) = read_shard(path)
    assert "turns: missing column" in result.reasons()


def test_read_records_mixes_segments_and_shards(tmp_path):
    write_segments([make_trajectory(1)], tmp_path / "raw")
    write_shards([make_trajectory(2)], tmp_path / "corpus")
    (tmp_path / "raw" / "_rejections.jsonl").write_text("{}\n")
    results = list(read_records([tmp_path]))
    assert sorted(len(r.record.turns) for r in results) == [1, 2]


text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)
turn = st.fixed_dictionaries(
    {
        "action": st.fixed_dictionaries(
            {"kind": st.sampled_from(["shell", "keystrokes", "tool_call", "browser", "message"]), "content": text},
            optional={"name": st.none() | text},
        ),
        "observation": st.fixed_dictionaries(
            {"content": text},
            optional={
                "format": st.sampled_from(["text", "json", "aria", "html"]),
                "exit_code": st.none() | st.integers(-(2**40), 2**40),
                "is_error": st.booleans(),
                "truncated": st.booleans(),
            },
        ),
        "latency_ms": st.none() | st.floats(0, 1e6),
        "fault": st.none() | text,
        "no_change": st.none() | st.booleans(),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(turn, max_size=4), text)
def test_any_record_survives_segment_and_shard(tmp_path_factory, turns, task):
    turns = [{**t, "index": i} for i, t in enumerate(turns)]
    record = make_trajectory(turns=turns, task_description=task)
    directory = tmp_path_factory.mktemp("rt")
    write_segments([record], directory / "raw")
    write_shards([record], directory / "corpus")
    results = list(read_records([directory]))
    assert [r.record for r in results] == [record, record]


def test_a_cpt_shard_from_before_the_split_columns_still_reads(tmp_path, corpus_dir):
    from trajforge.schemas.dataset import load_cpt, row_splits
    from trajforge.schemas.splits import split_of

    table = read_shard_table(next((corpus_dir / "cpt").glob("*.arrow")))
    old = table.drop_columns(["task", "split"])
    path = write_shard(old, tmp_path)
    results = list(read_shard(path))
    assert len(results) == table.num_rows and all(r.ok for r in results)
    assert row_splits(load_cpt(path)) == [split_of(row) for row in old.to_pylist()]  # derived, default config
