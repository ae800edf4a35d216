"""`trajforge inspect`: counts and exit codes, derived shards, SQL over shards and segments."""

import pyarrow as pa
from typer.testing import CliRunner

from tests.builders import EXAMPLES
from trajforge.pipelines.cli import app
from trajforge.schemas.shards import write_shard

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_a_missing_input_is_a_usage_error(tmp_path):
    assert run("inspect", tmp_path / "nope").exit_code == 2


def test_inspect_counts_and_exit_codes(tmp_path):
    raw = tmp_path / "raw"
    for fmt, name in (
        ("chat", "chat.jsonl"),
        ("atif", "atif_terminal.json"),
        ("agentworldbench", "agentworldbench.jsonl"),
    ):
        assert run("import", "-f", fmt, EXAMPLES / name, "-o", raw / fmt).exit_code == 0
    result = run("inspect", raw)
    assert result.exit_code == 0, result.output
    assert "6 valid records, 0 invalid, 16 turns" in result.output
    assert "schema_version: 1 6" in result.output
    bad = raw / "chat" / "broken.jsonl"
    bad.write_text('{"schema_version": "7"}\n')
    result = run("inspect", raw)
    assert result.exit_code == 1
    assert "broken.jsonl:line 1: schema_version: unknown version '7'" in result.output


def test_inspect_sql_over_shards_and_segments(tmp_path):
    raw = tmp_path / "raw"
    assert run("import", "-f", "chat", EXAMPLES / "chat.jsonl", "-o", raw, "--domain", "mcp").exit_code == 0
    assert run("export", raw, "-f", "shards", "-o", tmp_path / "shards").exit_code == 0
    assert run("import", "-f", "atif", EXAMPLES / "atif_terminal.json", "-o", tmp_path / "atif").exit_code == 0
    sql = "select domain, count(*) as n from trajectories group by 1 order by 1"
    result = run("inspect", tmp_path / "shards", tmp_path / "atif", "--sql", sql)
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:3] for line in result.output.splitlines() if line.startswith("│")]
    assert [(d.strip(), n.strip()) for d, n in rows] == [("mcp", "3"), ("terminal", "1")]
    result = run("inspect", tmp_path / "shards", "--sql", "select count(*) from turns where action_kind = 'message'")
    assert "8" in result.output
    assert run("inspect", tmp_path / "shards", "--sql", "select nonsense from").exit_code == 2


def test_sft_and_rl_shards_are_counted_apart(tmp_path):
    write_shard(pa.table({"domain": ["web", "web"]}).replace_schema_metadata({"trajforge.kind": "rl"}), tmp_path)
    result = run("inspect", tmp_path)
    assert result.exit_code == 0 and "rl shards: 2 rows in domain web" in result.output
