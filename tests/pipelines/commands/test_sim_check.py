"""`trajforge sim-check` on a real (tiny) checkpoint: its weights answer the held-out turns, it serves the simulated
episodes on loopback, and the real Docker environment runs the real episodes and the WM2Real replays."""

import json
import re

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.schemas.sources import read_records

runner = CliRunner()


@pytest.mark.slow
def test_sim_check_of_a_checkpoint_prints_every_figure(tmp_path, corpus_dir, tiny_checkpoint, sandbox_image):
    report = tmp_path / "sim-check.json"
    args = ["sim-check", "--world-model", str(tiny_checkpoint), "--corpus", str(corpus_dir), "--limit", "2",
            "--max-new-tokens", "8",
            "--suite", "terminal", "--task", "project-dirs", "--split-seed", "16",  # in the test part under seed 16
            "--control", "errors", "-o", str(tmp_path / "runs"),
            "--concurrency", "1", "--report", str(report),
            "--predictions", str(tmp_path / "predictions.jsonl")]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "copy previous (model-free)" in result.output and "retrieval (model-free)" in result.output
    assert "WM2Real exact %" in result.output and "faults produced %" in result.output
    said = " ".join(result.output.split())  # the tables say how they sampled, and compare with each baseline paired
    assert (
        "minus each baseline, paired on the same turns" in said
        and "greedy (temperature 0), <= 8 new tokens, seed 0" in said
    )
    assert "model-free, 1 sample per task, seed 0; world model greedy" in said
    assert "success agree % [95%]" in said and "faults not reached" in said and "exact % [95%]" in said
    said_below = re.search(r"warning: single-step exact match 0\.0% \[0\.0%, (\d+\.\d)%\] is below 80%", said)
    assert said_below and float(said_below.group(1)) > 0  # an untrained-ish model; its interval is over 2 episodes
    figures = json.loads(report.read_text())
    assert figures["sampling"]["episodes"] == {"temperature": 0.0, "samples_per_task": 1, "seed": 0,
                                               "model_free_agent": True}  # fmt: skip
    name = f"{tiny_checkpoint.parent.name}/checkpoint-2"
    assert figures["world_model"] == name and name in figures["single_step"]["all"]
    assert (
        figures["single_step"]["all"][name]["turns"]
        == figures["single_step"]["all"]["copy previous (model-free)"]["turns"]
    )
    by_action = figures["single_step"]["all"][name]["exact_by_action"]
    assert "single-step exact % by action" in result.output and all(label in result.output for label in by_action)
    assert sum(f["turns"] for f in by_action.values()) == figures["single_step"]["all"][name]["turns"]
    by_source = figures["single_step"]["all"][name]["exact_by_source"]
    assert "single-step exact % by where the answer is found" in result.output and "in the prompt" in result.output
    assert sum(f["turns"] for f in by_source.values()) == figures["single_step"]["all"][name]["turns"]
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert {d["model"] for d in lines} == set(figures["single_step"]["all"])  # the world model and both baselines
    ours = [d for d in lines if d["model"] == name]
    assert len(ours) == figures["single_step"]["all"][name]["turns"] and all(d["reference"] is not None for d in ours)
    assert sum(d["exact"] for d in ours) == round(figures["single_step"]["all"][name]["exact_match"] * len(ours))
    episodes = figures["episodes"]
    (simulated,) = [r.record for r in read_records([episodes["runs"]["sim"]])]
    (replayed,) = [r.record for r in read_records([episodes["runs"]["replay"]])]
    assert simulated.source.kind == "simulated" and simulated.environment.name == f"simulated:{name}"
    assert [t.action for t in replayed.turns] == [t.action for t in simulated.turns]
    assert replayed.source.kind == "collected" and replayed.outcome.status == "success"  # the actions, for real
    assert episodes["wm2real"]["all"]["turns"] == len(simulated.turns)
    assert episodes["success"]["all"]["episodes"] == 1 and "controllability" in episodes
    # rerun: every episode is found done and the same figures come back
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert json.loads(report.read_text())["episodes"] == episodes


def test_a_control_file_naming_an_unknown_fault_kind_is_refused(tmp_path, corpus_dir):
    control = tmp_path / "control.yaml"
    control.write_text("faults:\n  teleport: {rate: 0.5}\n")
    result = runner.invoke(
        app,
        ["sim-check", "--world-model", "http://127.0.0.1:9/v1=wm", "--corpus", str(corpus_dir), "--limit", "1",
         "--control", str(control), "--report", str(tmp_path / "out.json")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert f"{control}: faults.teleport: unknown fault kind 'teleport'; known: intermittent_error" in result.output
    assert not (tmp_path / "out.json").exists()
    needs_a_model = runner.invoke(app, ["sim-check", "--corpus", str(corpus_dir)])
    assert needs_a_model.exit_code == 2 and "give the world model to check: --world-model" in needs_a_model.output
