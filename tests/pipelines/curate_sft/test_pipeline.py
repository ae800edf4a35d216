"""curate-sft on the in-process runner: the embedded generator and judge, and a real (tiny) model."""

import json

from typer.testing import CliRunner

from pipelines.cli import app
from schemas.manifest import read_manifest
from schemas.shards import read_shard_table

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
        from training.generators import ROLLOUT, Candidate
        from training.prompts import candidate

        right = query.turn_index % 2 == 0
        text = candidate("r", query.reference if right else "something else entirely")
        return [Candidate(text, ROLLOUT)] * n


def test_model_rollouts_are_counted_apart_with_the_acceptance_rate(tmp_path, corpus_dir):
    from pipelines.commands.curate_sft import _Factory, summary_line
    from pipelines.curate_sft.pipeline import curate_sft

    manifest = curate_sft(
        corpus_dir,
        tmp_path,
        _Factory("tests.pipelines.curate_sft.test_pipeline", "HalfRightModel"),
        _Factory("pipelines.curate_sft.transforms", "ReferenceJudge"),
        {},
        candidates=2,
        workers=1,
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
            "--checkpoint",
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


def test_llm_judge_scores_and_settles_close_calls():
    """The code around an LLM judge, against a scripted OpenAI-compatible endpoint."""
    import httpx

    from pipelines.curate_sft.transforms import EndpointJudge
    from training.prompts import Query, candidate

    answers = iter(['{"format": 5, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4}', "not json", "B"])
    requests = []

    def reply(request):
        requests.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": next(answers)}}]})

    judge = EndpointJudge("http://judge/v1", "judge-model")
    judge.client.http = httpx.Client(transport=httpx.MockTransport(reply))
    query = Query("a" * 32, 1, "terminal", 0, (("system", "S"), ("user", "ls")), "a.txt")
    first, second = candidate("r", "a.txt"), candidate("r", "b.txt")
    assert judge.score(query, first).format == 5
    assert judge.score(query, second).mean == 1  # an answer that does not parse earns nothing
    assert judge.prefer(query, first, second, [0, 1]) == 1
    assert "Prediction A:\na.txt" in requests[-1]["messages"][0]["content"]
    assert "<think>" not in requests[0]["messages"][0]["content"]  # only the prediction reaches the judge
