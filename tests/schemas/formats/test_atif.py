import json

from tests.builders import EXAMPLES, make_trajectory, record_dict
from trajforge.masking.annotate import mask_trajectory
from trajforge.masking.policy import load_policy
from trajforge.schemas.formats import ImportOptions, atif
from trajforge.schemas.splits import task_key
from trajforge.schemas.transfer import ImportJob, import_records


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


def test_v1_7_subagents_are_records_linked_both_ways_and_kept_on_one_side_of_the_split():
    parent, child = (r.record for r in read(EXAMPLES / "atif_v1_7_subagents.json"))
    ours, theirs = json.loads(parent.metadata)["atif"], json.loads(child.metadata)["atif"]
    assert ours["subagents"] == [{"trajectory_id": child.trajectory_id, "atif_trajectory_id": "helper-1"}]
    assert theirs["parent"] == {"trajectory_id": parent.trajectory_id, "atif_trajectory_id": "orchestrator-1"}
    assert (ours["trajectory_id"], theirs["trajectory_id"], ours["session_id"]) == (
        "orchestrator-1",
        "helper-1",
        "run-7",
    )
    assert task_key(record_dict(parent)) == task_key(record_dict(child)) == "atif:run-7"  # the child has no session
    assert child.source.origin == "atif_v1_7_subagents.json subagent_trajectories[0]"
    assert [json.loads(t.action.content) for t in child.turns] == [{"command": "wc -l notes.txt"}]
    assert ours["turn_sources"][1] == {
        "step_id": 5,
        "tool_call_id": "call_2",
        "subagent_trajectory_ref": [{"trajectory_id": "helper-1"}],
    }
    assert ours["turn_sources"][2]["call_extra"] == {"timeout_s": 10}
    assert ours["reasoning"] == [{"step_id": 5, "reasoning_content": "A helper can run wc while I read the file."}]
    tools = json.loads(parent.action_space)
    assert [t["function"]["name"] for t in tools] == ["bash", "delegate"]


def test_copied_context_is_never_in_the_loss():
    (parent, _) = (r.record for r in read(EXAMPLES / "atif_v1_7_subagents.json"))
    assert [t.loss_weight for t in parent.turns] == [0.0, None, None]
    masks = [a.mask for a in mask_trajectory(parent, load_policy("paper"))]
    assert [(m.in_loss, m.decided_by) for m in masks[:1]] == [(False, "loss_weight")]
    assert masks[0].spans == () and masks[0].keep_ratio == 0.0
    # copied steps are history: the user message after them still opens the task
    assert parent.task_description == "List the files.\n\nNow count the lines of notes.txt; a helper may do it."


def test_every_record_survives_atif_v1_7_unchanged(tmp_path):
    """ours -> ATIF-v1.7 -> ours: every field of every record, sub-agents embedded in their parent's file."""
    turns = [
        {
            "index": 0,
            "action": {"kind": "shell", "content": "ls"},
            "observation": {"content": "a\n"},
            "loss_weight": 0.0,
        },
        {
            "index": 1,
            "action": {"kind": "tool_call", "name": "read", "content": '{"path":"a"}'},  # not canonical JSON
            "observation": {"content": "{}", "format": "json", "metadata": '{"url": "x"}'},
            "fault": "latency",
            "latency_ms": 2.0,
        },
        {
            "index": 2,
            "action": {"kind": "tool_call", "name": "write", "content": "not json"},
            "observation": {"content": "denied", "is_error": True, "exit_code": 1},
            "no_change": True,
            "loss_weight": 0.5,
        },
        {
            "index": 3,
            "action": {"kind": "message", "content": "done?"},
            "observation": {"content": "y", "truncated": True},
        },
        {
            "index": 4,
            "action": {"kind": "browser", "name": "click", "content": '{"ref": "e1"}'},
            "observation": {"content": "p"},
        },
    ]
    rich = make_trajectory(
        turns=turns,
        simulation_instruction="Act as the system.",
        initial_state="an empty folder",
        metadata='{"task_id":"t1"}',
        ended_at="2026-11-30T03:00:00Z",
        environment={"name": "mcp", "version": "2"},
        outcome={"status": "failure", "verifier": "{}", "error": "x"},
    )
    family = [r.record for r in read(EXAMPLES / "atif_v1_7_subagents.json", run_id="imp")]
    records = [make_trajectory(), rich, *family]
    assert atif.write(records, tmp_path / "out.jsonl") == 4
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {line["schema_version"] for line in lines} == {"ATIF-v1.7"}
    assert [len(line.get("subagent_trajectories", [])) for line in lines] == [0, 0, 1]  # the child in its parent
    assert [s.get("is_copied_context") for s in lines[1]["steps"]][2:4] == [True, None]  # loss weight 0, 0.5
    back = [r.record for r in read(tmp_path / "out.jsonl")]
    assert sorted(back, key=lambda r: r.trajectory_id) == sorted(records, key=lambda r: r.trajectory_id)


def test_a_bad_subagent_is_rejected_alone_with_where_and_why(tmp_path):
    child = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "h"},
        "steps": [{"step_id": 1, "source": "user", "message": "x"}],
    }
    bad_step = {**child, "trajectory_id": "c", "steps": [{"step_id": 1, "source": "robot", "message": "x"}]}
    document = json.loads((EXAMPLES / "atif_v1_7_subagents.json").read_text())
    document["subagent_trajectories"] += [child, bad_step, {**child, "trajectory_id": "helper-1"}]
    (tmp_path / "run.json").write_text(json.dumps(document))
    results = read(tmp_path / "run.json")
    assert [(r.locator, r.reasons()) for r in results if not r.ok] == [
        ("file subagent_trajectories[1]", ["trajectory_id: missing (required on an embedded sub-agent trajectory)"]),
        ("file subagent_trajectories[2]", ["steps[0].source: expected system, user or agent, got 'robot'"]),
        (
            "file subagent_trajectories[3]",
            ["trajectory_id: 'helper-1' is not unique among its parent's subagent_trajectories"],
        ),
    ]
    links = json.loads(results[0].record.metadata)["atif"]["subagents"]
    assert [link["trajectory_id"] is not None for link in links] == [True, False, False, False]
    manifest = import_records([tmp_path / "run.json"], ImportJob("atif", tmp_path / "raw"))
    assert manifest.counts == {"read": 5, "written": 2, "rejected": 3}
    assert manifest.rejection_reasons == {
        "trajectory_id: missing": 1,
        "steps[].source: expected system, user or agent, got 'robot'": 1,
        "trajectory_id: 'helper-1' is not unique among its parent's subagent_trajectories": 1,
    }
    rejected = [json.loads(line) for line in (tmp_path / "raw" / "_rejections.jsonl").read_text().splitlines()]
    assert json.loads(rejected[1]["raw"])["trajectory_id"] == "c" and rejected[0]["source"].endswith("run.json")


def test_a_screenshot_in_an_observation_rejects_the_trajectory_saying_why(tmp_path):
    """A world model of text predicts text: an image part is named as the reason, text parts alone are read."""
    example = json.loads((EXAMPLES / "atif_terminal.json").read_text())
    parts = [{"type": "text", "text": "total 4\n"}, {"type": "image", "source": {"path": "shot.png"}}]
    example["steps"][3]["observation"]["results"][1]["content"] = parts
    (tmp_path / "shot.json").write_text(json.dumps(example))
    (result,) = read(tmp_path / "shot.json")
    assert result.record is None
    assert result.reasons() == ["steps[3].tool_calls[1].observation: content of type image: only text is read"]
    example["steps"][3]["observation"]["results"][1]["content"] = parts[:1]
    (tmp_path / "text.json").write_text(json.dumps(example))
    (result,) = read(tmp_path / "text.json")
    assert result.record.turns[2].observation.content == "total 4\n"
