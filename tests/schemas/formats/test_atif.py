import json

from tests.builders import EXAMPLES, make_trajectory
from trajforge.schemas.formats import ImportOptions, atif


def read(path, **options):
    return list(atif.read(path, ImportOptions(**options)))


def test_example_imports_one_turn_per_answered_tool_call():
    (result,) = read(EXAMPLES / "atif_terminal.json")
    assert result.ok, result.reasons()
    record = result.record
    assert record.domain == "terminal"
    assert record.task_description == "Create hello.txt containing 'Hello, world!' and show it."
    assert [t.action.name for t in record.turns] == ["bash", "bash", "bash"]
    assert json.loads(record.turns[2].action.content) == {"command": "ls -l"}
    assert record.turns[1].observation.content == "Hello, world!\n"
    assert record.agent.model == "example-model"
    kept = json.loads(record.metadata)["atif"]
    assert kept["agent_system_prompt"].startswith("You are an agent")
    assert kept["skipped_steps"] == [{"step_id": 5, "agent_message": "hello.txt now contains 'Hello, world!'."}]


def test_atif_round_trip_keeps_steps(tmp_path):
    (result,) = read(EXAMPLES / "atif_terminal.json")
    atif.write([result.record], tmp_path / "out.json")
    exported = json.loads((tmp_path / "out.json").read_text())
    assert exported["schema_version"].startswith("ATIF-v1.")
    calls = [c for s in exported["steps"] for c in s.get("tool_calls", [])]
    assert [c["arguments"]["command"] for c in calls] == ["echo 'Hello, world!' > hello.txt", "cat hello.txt", "ls -l"]
    (again,) = read(tmp_path / "out.json")
    assert again.record.turns == result.record.turns
    assert again.record.task_description == result.record.task_description


def test_trajforge_record_survives_atif(tmp_path):
    record = make_trajectory(3, simulation_instruction="Act as bash.", initial_state="/work is empty")
    atif.write([record], tmp_path / "out.jsonl")
    (result,) = read(tmp_path / "out.jsonl")
    back = result.record
    assert back.turns == record.turns
    assert (back.simulation_instruction, back.initial_state) == ("Act as bash.", "/work is empty")
    assert back.trajectory_id == record.trajectory_id


def test_bad_atif_files(tmp_path):
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "broken.json").write_text('{"schema_version": "ATIF-v1.4", "steps": [')
    (tmp_path / "v2.json").write_text(json.dumps({"schema_version": "ATIF-v2.0", "agent": {}, "steps": []}))
    (tmp_path / "nosteps.json").write_text(json.dumps({"schema_version": "ATIF-v1.2", "agent": {"name": "a"}}))
    bad_call = {
        "schema_version": "ATIF-v1.4",
        "agent": {"name": "a"},
        "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c"}]}],
    }
    (tmp_path / "call.json").write_text(json.dumps(bad_call))
    reasons = {p.name: read(p)[0].reasons() for p in tmp_path.iterdir()}
    assert reasons["empty.json"][-1] == "empty file: no records"
    assert reasons["broken.json"][0].startswith("invalid JSON")
    assert reasons["v2.json"] == ["schema_version: unsupported ATIF version 'ATIF-v2.0' (accepted: ATIF-v1.x)"]
    assert reasons["nosteps.json"] == ["steps: missing"]
    assert reasons["call.json"] == ["steps[0].tool_calls[0].function_name: missing"]
