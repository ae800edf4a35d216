"""What inspect counts: valid records by domain, outcome and version, the invalid ones with their reasons, samples;
SFT and RL shards apart, by kind and domain."""

import json

import pyarrow as pa

from tests.builders import make_trajectory
from trajforge.schemas.arrow import records_to_table
from trajforge.schemas.inspection import count_derived_rows, is_derived, summarise_records
from trajforge.schemas.shards import write_shard
from trajforge.schemas.sinks import write_segments


def _derived(kind: str, domains: list[str]) -> pa.Table:
    return pa.table({"domain": domains}).replace_schema_metadata({"trajforge.kind": kind})


def test_records_are_counted_and_the_invalid_ones_kept_with_their_reasons(tmp_path):
    records = [make_trajectory(2), make_trajectory(3, domain="mcp"), make_trajectory(1, domain="mcp")]
    (segment,) = write_segments(records, tmp_path)
    with open(segment, "a") as f:
        f.write(json.dumps({"schema_version": "7"}) + "\n")
    summary = summarise_records([segment], samples=2)
    assert summary.valid == 3 and summary.turns == 6
    assert summary.counts["domain"] == {"mcp": 2, "terminal": 1} and summary.counts["outcome"] == {"success": 3}
    assert [r.locator for r in summary.invalid] == ["line 4"]
    assert "schema_version: unknown version '7'" in summary.invalid[0].reasons()[0]
    assert [len(r.turns) for r in summary.samples] == [2, 3]


def test_sft_and_rl_shards_are_told_apart_and_counted_by_kind_and_domain(tmp_path):
    sft = write_shard(_derived("sft", ["web", "web", "mcp"]), tmp_path / "sft")
    rl = write_shard(_derived("rl", ["web"]), tmp_path / "rl")
    trajectories = write_shard(records_to_table([make_trajectory(1)]), tmp_path / "cpt")
    broken = tmp_path / "broken.arrow"
    broken.write_bytes(b"truncated")
    (segment,) = write_segments([make_trajectory(1)], tmp_path / "raw")
    assert [is_derived(f) for f in (sft, rl, trajectories, broken, segment)] == [True, True, False, False, False]
    assert count_derived_rows([sft, rl]) == {("sft", "web"): 2, ("sft", "mcp"): 1, ("rl", "web"): 1}
