"""prepare-rl on the in-process runner: one prompt per trajectory, within the budget, with verifier specs."""

import json

from typer.testing import CliRunner

from trajforge.evaluation.verifiers import verify
from trajforge.pipelines.cli import app
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.shards import read_shard_table

runner = CliRunner()


def test_one_prompt_per_trajectory_with_verifiers(tmp_path, corpus_dir):
    result = runner.invoke(
        app, ["prepare-rl", "-i", str(corpus_dir), "-o", str(tmp_path), "--token-budget", "120", "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    manifest = read_manifest(tmp_path)
    assert manifest.reconciles()
    rows = [r for shard in manifest.outputs for r in read_shard_table(tmp_path / shard).to_pylist()]
    assert len(rows) == manifest.counts["written"] and len({r["trajectory_id"] for r in rows}) == len(rows)
    assert all(r["prompt_tokens"] <= 120 for r in rows)
    assert any(len(r["messages"]) < 2 * r["turn_index"] + 2 for r in rows)  # history cut to fit the budget
    for row in rows:
        assert row["messages"][0]["role"] == "system" and row["messages"][-1]["role"] == "user"
        spec = json.loads(row["verifier"])
        assert verify(spec, row["reference"])  # the real observation passes its own verifier
        assert not verify(spec, wrong_prediction(spec, row["reference"]))


def wrong_prediction(spec: dict, reference: str) -> str:
    """The reference changed so that it breaks one rule of its verifier spec, for every kind of spec."""
    if spec["kind"] == "json":
        return reference + "\nsomething else"  # no longer JSON
    if spec["kind"] == "aria":
        key, value = next(iter(spec["anchors"].items()))
        return reference.replace(f"{key}: {value}", f"{key}: elsewhere")
    if spec["kind"] == "text" and spec.get("empty"):
        return "unexpected output"
    if spec["kind"] == "text":
        return "an unexpected first line\n" + reference
    raise AssertionError(f"no wrong prediction for a {spec['kind']!r} verifier: the test would check nothing")


def test_missing_corpus(tmp_path):
    assert runner.invoke(app, ["prepare-rl", "-i", str(tmp_path)]).exit_code == 2
