"""OpenHands event streams. The sample, schemas/examples/openhands_events_handwritten.jsonl, is hand-written from
OpenHands' published event schema (openhands/events/serialization, openhands/core/schema): not a real run."""

import json

import pytest

from tests.builders import EXAMPLES, make_trajectory
from trajforge.schemas.formats import ImportOptions, openhands
from trajforge.schemas.splits import task_key
from trajforge.schemas.transfer import ImportJob, import_records

SAMPLE = EXAMPLES / "openhands_events_handwritten.jsonl"


def read(path, **options):
    return list(openhands.read(path, ImportOptions(**options)))


def test_handwritten_run_each_agent_action_with_the_observation_its_cause_names():
    """Hand-written sample: a SWE run (evaluation output line) and a browsing run."""
    swe, web = (r.record for r in read(SAMPLE))
    assert (swe.domain, swe.outcome.status, swe.agent.name, swe.agent.model) == (
        "swe",
        "success",
        "CodeActAgent",
        "example-model",
    )
    assert swe.task_description == "The tests of calc.py fail. Find the bug and fix it."
    assert [t["function"]["name"] for t in json.loads(swe.action_space)] == [
        "execute_bash",
        "str_replace_editor",
        "finish",
    ]
    assert [(t.action.kind, t.action.name) for t in swe.turns] == [
        ("shell", None),
        ("tool_call", "str_replace_editor"),
        ("tool_call", "str_replace_editor"),
        ("shell", None),
    ]
    assert swe.turns[0].action.content == "cd /workspace && python3 -m pytest -q"
    assert [t.observation.exit_code for t in swe.turns] == [1, None, None, 0]
    assert json.loads(swe.turns[0].observation.metadata) == {"cwd": "/workspace"}
    # the agent's arguments, without OpenHands' bookkeeping (thought, impl_source, unset fields)
    assert json.loads(swe.turns[2].action.content) == {
        "path": "/workspace/calc.py",
        "command": "str_replace",
        "old_str": "return a - b",
        "new_str": "return a + b",
    }
    kept = json.loads(swe.metadata)["openhands"]
    assert kept["turn_events"][0] == {"action": 5, "observation": 6, "tool_call_id": "toolu_01"}
    assert kept["thoughts"][1] == {"event": 9, "thought": "add() subtracts."}
    assert kept["unanswered"][0]["action"] == "finish" and kept["task_id"] == "handwritten__calc-1"
    assert task_key(json.loads(swe.model_dump_json())) == "openhands:handwritten__calc-1"
    assert web.domain == "web" and [(t.action.kind, t.action.name) for t in web.turns] == [("browser", "goto")]
    assert json.loads(web.turns[0].observation.metadata) == {"url": "http://example.org/"}


def test_a_saved_list_of_events_is_one_run(tmp_path):
    history = json.loads(SAMPLE.read_text().splitlines()[1])["history"]
    (tmp_path / "run.json").write_text(json.dumps(history))
    (tmp_path / "saved.json").write_text(json.dumps({"trajectory": history}))
    for name in ("run.json", "saved.json"):
        (result,) = read(tmp_path / name)
        assert result.ok and result.locator == "file" and result.record.source.origin == name
        assert result.record.turns == read(SAMPLE)[1].record.turns


def _event(i, **fields):
    return {"id": i, "source": "agent", **fields}


def _run(i, command):
    return _event(i, action="run", args={"command": command, "thought": ""})


def _out(i, cause, content):
    return _event(i, observation="run", cause=cause, content=content, extras={"metadata": {"exit_code": 0}})


def test_pairing_follows_cause_not_order():
    events = [_run(1, "ls"), _run(2, "pwd"), _out(3, 2, "/work\n"), _out(4, 1, "a.txt\n")]
    record, problems = openhands.convert({"history": events}, "x", ImportOptions())
    assert problems == []
    assert [(t["action"]["content"], t["observation"]["content"]) for t in record["turns"]] == [
        ("ls", "a.txt\n"),
        ("pwd", "/work\n"),
    ]


def test_what_cannot_be_paired_is_rejected_with_the_event_and_counted(tmp_path):
    user = {"id": 0, "source": "user", "action": "message", "args": {"content": "go"}}
    runs = [
        [user, _run(1, "ls"), _out(2, 1, "a\n")],
        [user, _run(1, "ls"), _out(2, 9, "a\n")],
        [user, _run(1, "ls"), _out(2, 1, "a\n"), _out(3, 1, "b\n")],
        [user, _run(1, "ls"), {k: v for k, v in _out(2, 1, "a\n").items() if k != "cause"}],  # before `cause`
        [user, _run(1, "ls"), "ls"],
    ]
    lines = [json.dumps({"history": events}) for events in runs] + [json.dumps(_run(1, "ls"))]
    (tmp_path / "output.jsonl").write_text("\n".join(lines) + "\n")
    reasons = {r.locator: r.reasons() for r in read(tmp_path / "output.jsonl") if not r.ok}
    assert reasons == {
        "line 2": ["history[2].cause: names no event (9)"],
        "line 3": ["history[3].cause: a second observation of action 1"],
        "line 4": ["history: no agent action is answered by an observation (`cause`): no turn"],
        "line 5": ["history[2]: not an event (expected an object with `action` or `observation`)"],
        "line 6": ["history: one event, not a run (expected a list of events, or an object with `history`)"],
    }
    manifest = import_records([tmp_path / "output.jsonl"], ImportJob("openhands", tmp_path / "raw"))
    assert manifest.counts == {"read": 6, "written": 1, "rejected": 5} and manifest.reconciles()
    assert manifest.rejection_reasons["history[].cause: names no event"] == 1


def test_openhands_is_read_only(tmp_path):
    with pytest.raises(ValueError, match="openhands is read only"):
        openhands.write([make_trajectory()], tmp_path / "out.json")
