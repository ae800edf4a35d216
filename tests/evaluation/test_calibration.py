import json

from PIL import Image
from typer.testing import CliRunner

from tests.evaluation.judge_server import judge_server
from trajforge.evaluation.adversaries import KINDS
from trajforge.pipelines.cli import app


def test_judge_check_on_a_corpus(tmp_path, corpus_dir):
    result = CliRunner().invoke(
        app,
        [
            "judge-check",
            "--corpus",
            str(corpus_dir),
            "--pairs",
            str(tmp_path / "p.jsonl"),
            "--report",
            str(tmp_path / "c.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "judge calibration: embedded (embedded judge, not comparable with AgentWorldBench)" in result.output
    table = json.loads((tmp_path / "c.json").read_text())
    pairs = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(pairs) == table["overall"]["pairs"] > 0 and set(table["kinds"]) == set(KINDS)
    assert sum(p["correct"] for p in pairs) == table["overall"]["correct"]
    assert {p["kind"] for p in pairs} >= {"empty", "outcome_flipped", "other_trajectory", "verbose_paraphrase"}
    assert all(p["real_mean"] == 5.0 and p["real"] != p["adversary"] for p in pairs)
    with Image.open(tmp_path / "c.png") as chart:  # the table as a chart beside its JSON
        assert chart.format == "PNG" and chart.size[0] > 600


def test_judge_check_of_an_endpoint_judge(tmp_path, corpus_dir):
    """A judge that scores everything alike ranks nothing: calibration shows it."""
    with judge_server() as (url, _):
        result = CliRunner().invoke(
            app,
            ["judge-check", "--corpus", str(corpus_dir), "--limit", "2", "--judge", "endpoint", "--judge-url", url,
             "--judge-model", "judge-model", "--report", str(tmp_path / "c.json")],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    table = json.loads((tmp_path / "c.json").read_text())
    assert table["judge"] == "endpoint:judge-model" and table["overall"]["pairs"] > 0
    assert table["overall"]["accuracy"] == 0.0  # the same score for the real observation and every adversary
