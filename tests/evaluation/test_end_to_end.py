"""eval as a user runs it against the benchmark's format: a trained tiny checkpoint served by `trajforge serve`
(a real process), a judge behind a real HTTP server answering in the rubric's JSON, an exported folder."""

import json

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from tests.evaluation.judge_server import judge_server
from tests.serve_process import serving
from trajforge.evaluation.scores import normalize
from trajforge.pipelines.cli import app
from trajforge.schemas.formats.agentworldbench import export_folder

JUDGE_SCORE = {"terminal": 2, "mcp": 4}  # what the judge server gives each domain


@pytest.fixture
def served(tiny_checkpoint):
    with serving(tiny_checkpoint) as url:
        yield url


@pytest.mark.slow
def test_eval_with_an_endpoint_model_and_an_endpoint_judge(tmp_path, served):
    silent = make_trajectory(2, domain="mcp")
    turns = [t.model_copy(update={"observation": t.observation.model_copy(update={"content": "JUDGE-SAYS-NOTHING"})})
             for t in silent.turns]  # fmt: skip
    records = [make_trajectory(3, domain="terminal"), make_trajectory(2, domain="mcp", task_description="other"),
               silent.model_copy(update={"turns": turns}), make_trajectory(1, domain="other")]  # fmt: skip
    summary = export_folder(records, tmp_path / "bench")
    assert summary.count == 7 and dict(summary.skipped) == {"other": 1}
    with judge_server() as (judge_url, requests):
        result = CliRunner().invoke(
            app,
            ["eval", "--world-model", f"{served}=tiny", "--agentworldbench", str(tmp_path / "bench"),
             "--judge", "endpoint", "--judge-url", judge_url, "--judge-model", "judge-model", "--max-new-tokens", "24",
             "--predictions", str(tmp_path / "predictions.jsonl"), "--report", str(tmp_path / "report.json"),
             "--no-baselines"],  # the model-free rows are tests/evaluation/test_baselines.py's
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    (report,) = json.loads((tmp_path / "report.json").read_text())
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert report["samples"] == len(lines) == 7 and report["judge"] == "endpoint:judge-model" and report["comparable"]
    answered = [d for d in lines if d["answer"]]
    silent_answered = [d for d in answered if d["id"].startswith(str(tmp_path / "bench" / "mcp_test.jsonl"))
                       and d["scores"] is None]  # fmt: skip
    ruled = [d for d in lines if d["rule"]]  # no answer, or an empty prediction: scored by the rule, no judge asked
    assert len(ruled) >= 7 - len(answered) and "no answer" not in report["excluded"]
    assert report["excluded"].get("judge answer not parseable", 0) == len(silent_answered)
    assert (
        report["scored"]
        == 7 - sum(report["excluded"].values())
        == len(requests) - 3 * len(silent_answered) + len(ruled)
    )  # 3 tries
    judged = [d for d in lines if d["scores"] and not d["rule"]]
    assert judged, (result.output, lines)
    assert all(d["scores"]["format"] == JUDGE_SCORE[d["domain"]] for d in judged)
    overall = [(d["domain"], sum(map(normalize, d["scores"].values())) / 5) for d in lines if d["scores"]]
    pooled = sum(v for _, v in overall) / len(overall)
    domains = {domain for domain, _ in overall}
    means = [sum(v for d, v in overall if d == domain) / sum(d == domain for d, _ in overall) for domain in domains]
    assert report["pooled"]["overall"] == pytest.approx(pooled)
    assert report["equal_weight"]["overall"] == pytest.approx(sum(means) / len(means))
    assert "judge: endpoint:judge-model" in result.output
