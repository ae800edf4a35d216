"""SWE-agent `.traj` files. `schemas/examples/swe_agent.traj` is hand-written in the layout SWE-agent 1.x saves
(`sweagent/types.py`'s TrajectoryStep and history items, `DefaultAgent.get_trajectory_data`): SWE-agent is not on
PyPI and runs only in its own Docker deployment, so no file here comes from a real run."""

import json

from tests.builders import EXAMPLES
from trajforge.schemas.formats import ImportOptions, swe_agent
from trajforge.schemas.transfer import ImportJob, import_records

SAMPLE = EXAMPLES / "swe_agent.traj"


def read(path, **options):
    return list(swe_agent.read(path, ImportOptions(**options)))


def kept(record) -> dict:
    return json.loads(record.metadata)["swe_agent"]


def test_each_step_is_a_shell_turn_with_the_problem_statement_as_task():
    (result,) = read(SAMPLE)
    assert result.ok, result.reasons()
    record = result.record
    steps = json.loads(SAMPLE.read_text())["trajectory"]
    assert [t.action.content for t in record.turns] == [s["action"] for s in steps]
    assert [t.observation.content for t in record.turns] == [s["observation"] for s in steps]
    assert {t.action.kind for t in record.turns} == {"shell"} and record.domain == "swe"
    assert record.task_description.startswith("add(2, 3) returns -1")
    assert json.loads(record.turns[0].observation.metadata) == {"cwd": "/testbed", "open_file": "n/a"}
    assert record.turns[3].latency_ms == 900.0
    assert (record.agent.model, record.environment.name) == ("example/model", "python:3.11")
    ids = kept(record)
    assert (ids["instance_id"], ids["exit_status"], ids["swe_agent_version"]) == ("calc__calc-1", "submitted", "1.1.0")
    assert ids["agent_system_prompt"].startswith("You are a software engineer")


def test_a_file_before_1_0_an_exit_step_and_the_run_folder(tmp_path):
    """Before 1.0 there was no replay config and the state was a JSON string; the task is then the first user
    message that is not a demonstration. The run is the experiment folder of trajectories/USER/EXPERIMENT/."""
    value = json.loads(SAMPLE.read_text())
    del value["replay_config"]
    value["history"][1:1] = [{"role": "user", "content": "a demonstration", "agent": "main", "is_demo": True}]
    value["trajectory"][0]["state"] = json.dumps({"working_dir": "/calc"})
    value["trajectory"].append({"action": "", "observation": "Exited", "thought": "Exit due to cost limit"})
    path = tmp_path / "trajectories" / "me" / "gpt__calc__t-0.00" / "calc__calc-1.traj"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(value))
    (result,) = read(path)
    assert result.ok, result.reasons()
    assert "<pr_description>\nadd(2, 3) returns -1" in result.record.task_description
    assert json.loads(result.record.turns[0].observation.metadata) == {"cwd": "/calc"}
    ids = kept(result.record)
    assert (ids["instance_id"], ids["run"]) == ("calc__calc-1", "gpt__calc__t-0.00")
    assert ids["skipped_steps"] == [{"step": 5, "thought": "Exit due to cost limit", "observation": "Exited"}]


def test_what_cannot_be_read_is_rejected_with_its_field(tmp_path):
    value = json.loads(SAMPLE.read_text())
    files = {
        "nosteps.traj": {"history": value["history"]},  # a demonstration file: a chat, no run
        "action.traj": {**value, "trajectory": [{"action": ["ls"], "observation": "x"}]},
        "config.traj": {**value, "replay_config": "{not json"},
        "empty.traj": {**value, "trajectory": [{"action": "", "observation": "Exited"}]},
    }
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    reasons = {p.name: read(p)[0].reasons() for p in tmp_path.iterdir()}
    assert reasons == {
        "nosteps.traj": ["trajectory: missing"],
        "action.traj": ["trajectory[0].action: not text (list)"],
        "config.traj": ["replay_config: not valid JSON"],
        "empty.traj": ["trajectory: no step with an action: nothing to import"],
    }


def test_import_counts_read_written_and_rejected_with_reasons(tmp_path):
    (tmp_path / "run" / "calc__calc-1").mkdir(parents=True)
    (tmp_path / "run" / "calc__calc-1" / "calc__calc-1.traj").write_text(SAMPLE.read_text())
    (tmp_path / "run" / "calc__calc-1" / "calc__calc-1.config.yaml").write_text("agent: {}\n")  # not a trajectory
    (tmp_path / "run" / "broken.traj").write_text('{"trajectory": [')
    manifest = import_records([tmp_path / "run"], ImportJob("swe-agent", tmp_path / "raw"))
    assert manifest.counts == {"read": 2, "written": 1, "rejected": 1}
    assert list(manifest.rejection_reasons) == ["invalid JSON: Expecting value at line 1, column 17"]
