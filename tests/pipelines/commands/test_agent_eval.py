"""`trajforge agent-eval` as a user runs it: two agents on the same held-out terminal tasks in Docker, the scripted
policy and an untrained tiny model served behind the OpenAI-compatible server, acting through the llm policy;
one row each, the JSON report, and every episode kept as a raw trajectory run folder."""

import json

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from trajforge.agents import agent_eval
from trajforge.collectors.collection import Collected
from trajforge.collectors.runner import RunResult
from trajforge.collectors.tasks import load_suite, task_split
from trajforge.pipelines.cli import app
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig

runner = CliRunner()


@pytest.mark.slow
def test_scripted_solves_and_an_untrained_model_does_not(tmp_path, sandbox_image, served_model):
    url, model = served_model
    report = tmp_path / "agent-eval.json"
    args = ["agent-eval", "--policy", "scripted", "--agent", f"{url}={model}", "--suite", "terminal",
            "--output", str(tmp_path / "raw"), "--report", str(report), "--image", sandbox_image,
            "--max-turns", "8", "--held-out", "0.15"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "test tasks of terminal" in result.output and f"{model} @ {url}" in result.output
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


def test_a_folder_without_a_model_or_no_agent_is_a_usage_error_before_any_episode(tmp_path):
    result = runner.invoke(app, ["agent-eval", "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "name an agent to evaluate" in result.output
    result = runner.invoke(app, ["agent-eval", "--agent", str(tmp_path), "--report", str(tmp_path / "r.json"),
                                 "-o", str(tmp_path / "raw")])  # fmt: skip
    assert result.exit_code == 2 and f"--agent {tmp_path}: no model folder" in result.output
    no_model = ["agent-eval", "--agent", "http://127.0.0.1:9/v1", "--report", str(tmp_path / "r.json")]
    result = runner.invoke(app, no_model)
    assert result.exit_code == 2 and "give URL=MODEL" in result.output
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "raw").exists()


def fake_collect(ran: list[tuple[str, ...]]):
    """collect() as agent-eval calls it, without a sandbox: every planned task solved once, its names kept."""

    def collect(run, log, warn, progress):
        ran.append(run.tasks)
        folder = f"{run.output}/{run.policy}"
        episodes = [make_trajectory(source={"kind": "collected", "by": run.policy, "run_id": run.policy,
                                            "origin": f"{name}#0"}) for name in run.tasks]  # fmt: skip
        write_segments(episodes, folder, per_file=100)
        return Collected(run.policy, folder, RunResult(planned=len(episodes), skipped=0), {})

    return collect


def two_suites(tmp_path) -> list[str]:
    gen, kv = tmp_path / "gen.yaml", tmp_path / "kv.yaml"
    gen.write_text("suite: gen\ndomain: terminal\ngenerated:\n  - {family: terminal-text, count: 60, seed: 3}\n")
    kv.write_text("suite: kv\ndomain: mcp\nenvironment: {kind: mcp, server: kvstore}\n"
                  "generated:\n  - {family: kvstore, count: 12, seed: 1}\n")  # fmt: skip
    return [str(gen), str(kv)]


def test_part_validation_evaluates_the_validation_tasks_only(tmp_path, monkeypatch):
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(agent_eval, "collect", fake_collect(ran))
    suites = two_suites(tmp_path)
    report = tmp_path / "r.json"
    args = ["agent-eval", "--policy", "scripted", *(x for s in suites for x in ("--suite", s)), "--held-out-family",
            "kvstore", "--part", "validation", "-o", str(tmp_path / "raw"), "--report", str(report)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    split = SplitConfig(held_out_families=("kvstore",))
    gen = load_suite(suites[0])
    validation = [t.id for t in gen.tasks if task_split(gen, t, split) == "validation"]
    assert validation and ran == [tuple(f"gen/{t}" for t in validation)]  # no test, training or held-out family task
    figures = json.loads(report.read_text())
    assert figures["part"] == "validation" and figures["held_out_tasks"] == {"gen": validation, "kv": []}
    assert "validation tasks of gen, kv" in result.output


def test_the_test_part_has_an_in_family_row_and_a_held_out_family_row_each_with_its_n(tmp_path, monkeypatch):
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(agent_eval, "collect", fake_collect(ran))
    suites = two_suites(tmp_path)
    report = tmp_path / "r.json"
    args = ["agent-eval", "--policy", "scripted", *(x for s in suites for x in ("--suite", s)), "--held-out-family",
            "kvstore", "-o", str(tmp_path / "raw"), "--report", str(report)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    gen = load_suite(suites[0])
    in_family = [
        t.id for t in gen.tasks if task_split(gen, t, SplitConfig(held_out_families=("kvstore",))) == "held_out"
    ]
    (scripted,) = json.loads(report.read_text())["agents"]
    rows = {part: figures["scored"] for part, figures in scripted["per_part"].items()}
    assert rows == {"test, in family": len(in_family), "test, held-out family": 12} and in_family
    assert "test, in family" in result.output and "test, held-out family" in result.output
