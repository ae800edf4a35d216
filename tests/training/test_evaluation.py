import json

from typer.testing import CliRunner

from pipelines.cli import app
from training.evaluation import benchmark_queries, sample_turns, score
from training.prompts import candidate

runner = CliRunner()


def test_sample_turns_like_agentworldbench():
    assert sample_turns(3) == [0, 1, 2]
    assert sample_turns(20) == [0, 5, 10, 15, 19]
    assert sample_turns(6) == [0, 2, 3, 4, 5]


def test_perfect_answers_score_100_and_pass_the_verifiers(corpus):
    queries = benchmark_queries(list(corpus)[:4], plain=True)
    perfect = score("oracle", queries, [candidate("r", q.reference) for q, _ in queries])
    assert perfect.macro["overall"] == 100.0 and perfect.verifier_accuracy == 1.0
    raw = score("raw", queries, [q.reference for q, _ in queries])  # a CPT model answers without tags
    assert raw.macro == perfect.macro
    empty = score("empty", queries, ["" for _ in queries])
    assert empty.macro["overall"] < 50 and empty.verifier_accuracy < 1.0


def test_eval_command_compares_with_untrained_and_exports(tmp_path, corpus_dir, tiny_checkpoint):
    result = runner.invoke(
        app,
        [
            "eval",
            "-c",
            str(tiny_checkpoint),
            "--untrained",
            "--corpus",
            str(corpus_dir),
            "--limit",
            "3",
            "--max-new-tokens",
            "8",
            "-o",
            str(tmp_path / "eval.json"),
            "--export",
            str(tmp_path / "bench.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    reports = json.loads((tmp_path / "eval.json").read_text())
    assert [r["model"] for r in reports] == ["untrained", f"{tiny_checkpoint.parent.name}/checkpoint-2"]
    assert all(0 <= r["macro"]["overall"] <= 100 and r["samples"] > 0 for r in reports)
    lines = [json.loads(x) for x in (tmp_path / "bench.jsonl").read_text().splitlines()]
    assert lines and {
        "task",
        "id",
        "prompt",
        "response",
        "current_prompt",
        "system_str",
        "turn_idx",
        "total_turns",
        "reference",
    } <= set(lines[0])
    again = runner.invoke(
        app,
        [
            "eval",
            "-c",
            str(tiny_checkpoint),
            "--agentworldbench",
            str(tmp_path / "bench.jsonl"),
            "--limit",
            "2",
            "--max-new-tokens",
            "4",
        ],
    )
    assert again.exit_code == 0, again.output  # AgentWorldBench files are evaluated on directly
