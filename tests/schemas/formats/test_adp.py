"""ADP standardized trajectories. The sample, schemas/examples/adp_handwritten.json, is hand-written from the
published ADP schema (neulab/agent-data-protocol, schema/): no real dataset's rows are used here."""

import json

import pytest

from tests.builders import EXAMPLES, make_trajectory
from trajforge.schemas.formats import ImportOptions, adp
from trajforge.schemas.splits import task_key
from trajforge.schemas.transfer import ImportJob, import_records


def read(path, **options):
    return list(adp.read(path, ImportOptions(**options)))


def test_handwritten_sample_maps_actions_and_observations_onto_turns_with_their_domain():
    """Hand-written sample: code actions -> terminal, web observations -> web, API calls -> mcp."""
    results = read(EXAMPLES / "adp_handwritten.json")
    assert [r.locator for r in results] == ["file [0]", "file [1]", "file [2]"] and all(r.ok for r in results)
    terminal, web, tools = (r.record for r in results)
    assert [t.domain for t in (terminal, web, tools)] == ["terminal", "web", "mcp"]
    assert terminal.task_description == "The tests of calc.py fail. Find the bug and fix it."
    assert [(t.action.kind, t.action.name) for t in terminal.turns] == [
        ("shell", None),
        ("tool_call", "str_replace_editor"),
        ("tool_call", "python"),
    ]
    assert terminal.turns[0].action.content == "python3 -m pytest -q"
    assert json.loads(terminal.turns[2].action.content) == {"code": "import calc\nprint(calc.add(2, 3))"}
    assert json.loads(terminal.turns[2].observation.metadata) == {"reward": 1.0}
    kept = json.loads(terminal.metadata)["adp"]
    assert kept["id"] == "handwritten-terminal-1" and kept["turn_sources"][1]["tool_call_id"] == "call_000001"
    assert kept["unanswered"][0]["content"] == "Fixed: add() now adds."  # the final message: nothing answered it
    assert kept["reasoning"][1]["reasoning_content"] == "The failing assertion is 2 - 3 = -1."
    assert task_key(json.loads(terminal.model_dump_json())) == "adp:handwritten-terminal-1"
    # web: the first page is the initial state; a browser action's observation is the page's tree, URL aside
    assert web.initial_state.startswith("[1] RootWebArea 'Shop'")
    assert [(t.action.kind, t.action.name, t.observation.format) for t in web.turns] == [
        ("browser", "click", "aria"),
        ("message", None, "text"),
    ]
    assert json.loads(web.turns[0].observation.metadata) == {"url": "http://shop.local/mugs"}
    assert web.turns[1].observation.content == "Thanks!"  # the user's reply answers the agent's message


def test_tool_call_ids_pair_parallel_calls_answered_out_of_order():
    tools = read(EXAMPLES / "adp_handwritten.json")[2].record
    assert [(t.action.name, json.loads(t.observation.content)) for t in tools.turns] == [
        ("get_weather", {"sky": "rain", "celsius": 11}),
        ("get_time", {"time": "14:05"}),
    ]
    assert json.loads(tools.action_space) == [{"name": "get_weather"}, {"name": "get_time"}]  # available_apis
    sources = json.loads(tools.metadata)["adp"]["turn_sources"]
    assert sources == [
        {"action": 1, "observation": 4, "tool_call_id": "call_1"},
        {"action": 2, "observation": 3, "tool_call_id": "call_2"},
    ]


def _line(content, **fields):
    return json.dumps({"id": fields.pop("id", "t"), "content": content, **fields})


USER = {"class_": "text_observation", "content": "do it", "source": "user"}
OUT = {"class_": "text_observation", "content": "done", "source": "environment"}
BASH = {"class_": "code_action", "language": "bash", "content": "ls", "description": None}


def test_what_cannot_be_read_is_rejected_with_path_and_field_and_counted(tmp_path):
    lines = [
        _line([USER, BASH, OUT]),
        _line([USER, {"class_": "robot_action"}, OUT]),
        _line([USER, BASH, {"class_": "image_observation", "content": "shot.png", "source": "environment"}]),
        _line([USER, {"class_": "api_action", "function": "get"}, OUT]),
        _line([USER, BASH, {**OUT, "tool_call_id": "call_9"}]),
        _line([USER, {"class_": "message_action", "content": "hi"}]),
        _line([USER, BASH, OUT], schema_version="2.0.0"),
        json.dumps([1]),
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    reasons = {r.locator: r.reasons() for r in read(tmp_path / "in.jsonl") if not r.ok}
    assert reasons == {
        "line 2": ["content[1].class_: unknown class_ 'robot_action'"],
        "line 3": ["content[2].class_: images are not read"],
        "line 4": ["content[1].kwargs: missing"],
        "line 5": ["content[2].tool_call_id: no earlier action has 'call_9'"],
        "line 6": ["content: no action is answered by an observation: no turn to learn from"],
        "line 7": ["schema_version: unsupported ADP schema version '2.0.0' (accepted: 1.x)"],
        "line 8 [0]": ["expected a JSON object, got int"],
    }
    manifest = import_records([tmp_path / "in.jsonl"], ImportJob("adp", tmp_path / "raw"))
    assert manifest.counts == {"read": 8, "written": 1, "rejected": 7} and manifest.reconciles()
    assert manifest.rejection_reasons["content[].class_: images are not read"] == 1


def test_adp_is_read_only(tmp_path):
    with pytest.raises(ValueError, match="adp is read only"):
        adp.write([make_trajectory()], tmp_path / "out.json")
