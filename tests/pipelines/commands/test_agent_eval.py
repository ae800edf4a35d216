"""`trajforge agent-eval` as a user runs it: two agents on the same held-out terminal tasks in Docker, the scripted
policy and an untrained tiny model served behind the OpenAI-compatible server, acting through the llm policy;
one row each, the JSON report, and every episode kept as a raw trajectory run folder."""

import json

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.schemas.sources import read_records

runner = CliRunner()


@pytest.mark.slow
def test_scripted_solves_and_an_untrained_model_does_not(tmp_path, sandbox_image, served_model):
    url, model = served_model
    report = tmp_path / "agent-eval.json"
    args = ["agent-eval", "--policy", "scripted", "--endpoint", f"{url}={model}", "--suite", "terminal",
            "--output", str(tmp_path / "raw"), "--json", str(report), "--image", sandbox_image,
            "--max-turns", "8"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "held-out tasks of terminal" in result.output and f"{model} @ {url}" in result.output
    figures = json.loads(report.read_text())
    scripted, untrained = figures["agents"]
    assert figures["confidence"] == 0.95 and len(figures["held_out_tasks"]["terminal"]) >= 2
    assert scripted["overall"]["success_rate"] == 1.0 and scripted["model_free"]
    assert untrained["overall"]["success_rate"] == 0.0 and not untrained["model_free"]
    assert untrained["overall"]["scored"] == scripted["overall"]["scored"] >= 2
    low, high = untrained["overall"]["interval"]
    assert low == 0.0 and 0.0 < high < 1.0
    episodes = [r.record for r in read_records([untrained["run_dir"]])]
    assert {r.agent.model for r in episodes} == {model}
    assert len(episodes) == untrained["overall"]["episodes"] == len(figures["held_out_tasks"]["terminal"])


def test_a_checkpoint_or_no_agent_is_a_usage_error_before_any_episode(tmp_path, monkeypatch):
    from trajforge.agents import agent_eval
    from trajforge.schemas.registry import Registry

    result = runner.invoke(app, ["agent-eval", "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "name an agent to evaluate" in result.output
    monkeypatch.setattr(agent_eval, "POLICIES", Registry("policy"))  # a trajforge without the checkpoint policy
    result = runner.invoke(app, ["agent-eval", "-c", str(tmp_path), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "no checkpoint policy" in result.output
    assert not (tmp_path / "r.json").exists()
