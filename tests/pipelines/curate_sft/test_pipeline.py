"""curate-sft on the in-process runner: the embedded generator and judge, and a real (tiny) model."""

import json

from typer.testing import CliRunner

from trajforge.evaluation.factory import JudgeSpec
from trajforge.pipelines.cli import app
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.shards import read_shard_table

runner = CliRunner()


def test_best_of_n_with_the_embedded_generator(tmp_path, corpus_dir):
    result = runner.invoke(
        app,
        [
            "curate-sft",
            "-i",
            str(corpus_dir),
            "-o",
            str(tmp_path),
            "--candidates",
            "3",
            "--per-trajectory",
            "2",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = read_manifest(tmp_path)
    assert manifest.reconciles() and manifest.counts["written"] == manifest.counts["read"] > 0
    rows = read_shard_table(tmp_path / manifest.outputs[0]).to_pylist()
    assert [(r["trajectory_id"], r["turn_index"]) for r in rows] == sorted(
        (r["trajectory_id"], r["turn_index"]) for r in rows
    )
    row = rows[0]
    assert row["prediction"] == row["reference"] and row["score"] == 5.0 and row["candidates"] == 3
    assert row["messages"][0]["role"] == "system" and row["target"].startswith("<think>")
    assert len({r["template"] for r in rows}) > 1
    scores = [json.loads(x) for x in (tmp_path / "_scores.jsonl").read_text().splitlines()]
    assert len(scores) == manifest.counts["read"] and all(len(s["means"]) == 3 for s in scores)
    # No model ran: every kept sample is counted as rationalized, and as the verbatim reference it is.
    c = manifest.counts
    assert c["kept.rationalization"] == c["kept.verbatim_reference"] == c["written"] and "kept.rollout" not in c
    assert {s["origins"][0] for s in scores} == {"rationalization:verbatim_reference"}
    assert {s["kept_from"] for s in scores} == {"rationalization"} and {r["origin"] for r in rows} == {
        "rationalization:verbatim_reference"
    }
    assert f"{c['written']} kept (acceptance 100.0%)" in result.output
    assert f"0 sampled from a model, {c['written']} rationalized" in result.output
    assert c["rows_skipped.held_out"] > 0 and {r["split"] for r in rows} == {"train"}


class HalfRightModel:
    """Stands in for a model in this test of the code around it: right on every other query, else wrong."""

    name = "scripted-model"

    def labelled(self, query, n, seed, hint=False):
        from trajforge.training.generators import ROLLOUT, Candidate
        from trajforge.training.prompts import candidate

        right = query.turn_index % 2 == 0
        text = candidate("r", query.reference if right else "something else entirely")
        return [Candidate(text, ROLLOUT)] * n


def test_model_rollouts_are_counted_apart_with_the_acceptance_rate(tmp_path, corpus_dir):
    from trajforge.pipelines.commands.curate_sft import summary_line
    from trajforge.pipelines.curate_sft.config import CurateConfig
    from trajforge.pipelines.curate_sft.pipeline import curate_sft

    manifest = curate_sft(
        corpus_dir, tmp_path, CurateConfig(generator=HalfRightModel, judge=JudgeSpec(), candidates=2), workers=1
    )
    c = manifest.counts
    assert 0 < c["kept.rollout"] == c["written"] < c["read"] and "kept.rationalization" not in c
    line = summary_line(c, tmp_path)
    assert (
        f"acceptance {c['written'] / c['read']:.1%}" in line
        and f"{c['written']} sampled from a model, 0 rationalized" in line
    )


def test_untrained_model_candidates_fall_below_the_threshold(tmp_path, corpus_dir, tiny_checkpoint):
    result = runner.invoke(
        app,
        [
            "curate-sft",
            "-i",
            str(corpus_dir),
            "-o",
            str(tmp_path / "sft"),
            "--generator",
            "checkpoint",
            "--generator-checkpoint",
            str(tiny_checkpoint),
            "--candidates",
            "2",
            "--per-trajectory",
            "1",
            "--max-new-tokens",
            "24",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = read_manifest(tmp_path / "sft")
    assert manifest.reconciles() and manifest.counts["filtered.below_threshold"] == manifest.counts["read"] > 0


def test_bad_options():
    result = runner.invoke(app, ["curate-sft", "--generator", "endpoint"])
    assert result.exit_code == 2 and "--generator-url" in result.output
    result = runner.invoke(app, ["curate-sft", "--judge", "endpoint"])
    assert result.exit_code == 2 and "--judge-url" in result.output


def test_an_llm_judge_decides_what_is_kept(tmp_path, corpus_dir):
    """curate-sft --judge endpoint: every candidate scored by the judge behind a real HTTP server (2 of 5 for
    terminal turns, below the threshold)."""
    from tests.evaluation.judge_server import judge_server

    with judge_server() as (url, requests):
        result = runner.invoke(
            app,
            ["curate-sft", "-i", str(corpus_dir), "-o", str(tmp_path), "--candidates", "2", "--per-trajectory", "1",
             "--workers", "1", "--judge", "endpoint", "--judge-url", url, "--judge-model", "judge-model"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = read_manifest(tmp_path)
    assert manifest.config["judge"] == "endpoint" and manifest.config["judge_model"] == "judge-model"
    assert manifest.counts["filtered.below_threshold"] == manifest.counts["read"] > 0
    scores = [json.loads(x) for x in (tmp_path / "_scores.jsonl").read_text().splitlines()]
    assert all(s["means"] == [2.0, 2.0] for s in scores) and len(requests) == 2 * len(scores)
    assert all("<think>" not in r["body"]["messages"][1]["content"] for r in requests)  # only predictions judged
