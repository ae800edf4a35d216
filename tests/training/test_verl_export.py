"""`trajforge export --format verl`: the parquet rows verl's RL trainer reads, checked with pyarrow and pandas against
verl's documented layout (verl itself needs Ray and GPUs; it is not run here)."""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.schemas.dataset import load_shards, stage_rows
from trajforge.schemas.names import RL_DIR

MESSAGE_LIST = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
# verl's data preparation (examples/data_preprocess, docs "Prepare Data for Post-Training"): these five columns.
DOCUMENTED = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", MESSAGE_LIST),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [
                    ("split", pa.string()),
                    ("index", pa.int64()),
                    ("domain", pa.string()),
                    ("verifier", pa.string()),
                    ("messages", MESSAGE_LIST),
                    ("trajectory_id", pa.string()),
                    ("turn_index", pa.int64()),
                ]
            ),
        ),
    ]
)


@pytest.fixture(scope="module")
def verl_file(tmp_path_factory, rl_dir):
    out = tmp_path_factory.mktemp("verl")
    result = CliRunner().invoke(app, ["export", str(rl_dir), "--format", "verl", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out / "train.parquet"


def test_the_parquet_has_exactly_the_documented_columns_and_types(verl_file):
    schema = pq.read_schema(verl_file)
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    for field in DOCUMENTED:
        assert schema.field(field.name).type.equals(field.type), field.name


def test_each_row_is_its_rl_prompt_as_verl_reads_it(verl_file, rl_dir):
    frame = pd.read_parquet(verl_file)
    rows = stage_rows(load_shards(rl_dir, RL_DIR), "rl")
    assert len(frame) == len(rows) > 0
    for i, (verl, row) in enumerate(zip(frame.to_dict("records"), rows, strict=True)):
        assert verl["data_source"] == f"trajforge/{row['domain']}" and verl["ability"] == "world-model"
        assert [dict(m) for m in verl["prompt"]] == row["messages"]
        assert verl["prompt"][-1]["role"] == "user"  # the action the policy answers with its observation
        assert verl["reward_model"] == {"style": "rule", "ground_truth": row["reference"]}
        info = verl["extra_info"]
        assert (info["split"], info["index"], info["domain"]) == ("train", i, row["domain"])
        assert info["verifier"] == row["verifier"] and json.loads(info["verifier"])["kind"]
        assert [dict(m) for m in info["messages"]] == row["messages"]
        assert (info["trajectory_id"], info["turn_index"]) == (row["trajectory_id"], row["turn_index"])
