import pytest
from pydantic import ValidationError

from tests.builders import make_trajectory
from trajforge.schemas.records import Trajectory, trajectory_content_id


def test_content_id_ignores_provenance_and_timing():
    a = make_trajectory()
    b = make_trajectory(source={"kind": "imported", "by": "chat", "run_id": "other"}, started_at=None)
    assert a.trajectory_id == b.trajectory_id
    assert len(a.trajectory_id) == 32


def test_content_id_changes_with_any_observation():
    a = make_trajectory()
    turns = [t.model_dump() for t in a.turns]
    turns[2]["observation"]["content"] = "something else"
    b = make_trajectory(turns=turns)
    assert a.trajectory_id != b.trajectory_id


def test_a_records_content_id_is_the_id_of_its_dump():
    a = make_trajectory(action_space='[{"name": "shell"}]', initial_state="/tmp", demonstrations="d")
    turns = [t.model_dump() for t in a.turns]
    turns[0]["action"] |= {"kind": "tool_call", "name": "search", "content": '{"q": 1}'}
    turns[1]["observation"]["format"] = "json"
    b = make_trajectory(turns=turns, environment={"name": "other"}, domain="mcp")
    for record in (a, b):
        assert record.content_id() == trajectory_content_id(record.model_dump()) == record.trajectory_id
    assert a.content_id() != b.content_id()


def test_records_are_strict_and_closed():
    data = make_trajectory().model_dump()
    with pytest.raises(ValidationError):
        Trajectory.model_validate({**data, "surprise": 1})
    data["turns"][0]["index"] = "0"
    with pytest.raises(ValidationError):
        Trajectory.model_validate(data)
