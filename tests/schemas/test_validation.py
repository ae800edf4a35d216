import json

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import make_trajectory, record_dict
from trajforge.schemas.validation import format_path, validate_record


def problems_of(data: dict, **kwargs) -> list[str]:
    record, problems = validate_record(data, **kwargs)
    assert record is None
    return [str(p) for p in problems]


def test_valid_record_passes(trajectory):
    record, problems = validate_record(record_dict(trajectory))
    assert problems == []
    assert record == trajectory


def test_missing_field_has_its_path(trajectory):
    data = record_dict(trajectory)
    del data["turns"][2]["observation"]["content"]
    assert "turns[2].observation.content: missing" in problems_of(data)


def test_every_problem_is_reported_not_just_the_first(trajectory):
    data = record_dict(trajectory)
    data["turns"][0]["action"]["kind"] = "teleport"
    data["turns"][1]["observation"]["exit_code"] = "zero"
    data["domain"] = 7
    problems = problems_of(data)
    paths = {p.split(":")[0] for p in problems}
    assert {"turns[0].action.kind", "turns[1].observation.exit_code", "domain"} <= paths


def test_wrong_type_is_not_coerced(trajectory):
    data = record_dict(trajectory)
    data["turns"][0]["observation"]["exit_code"] = "0"
    assert any(p.startswith("turns[0].observation.exit_code: ") for p in problems_of(data))


def test_unknown_field_is_reported(trajectory):
    data = record_dict(trajectory)
    data["turns"][1]["action"]["colour"] = "red"
    assert "turns[1].action.colour: unknown field" in problems_of(data)


def test_unknown_schema_version(trajectory):
    data = {**record_dict(trajectory), "schema_version": "9"}
    assert problems_of(data) == ["schema_version: unknown version '9' (this reader accepts 1)"]


def test_missing_schema_version(trajectory):
    data = record_dict(trajectory)
    del data["schema_version"]
    assert problems_of(data) == ["schema_version: missing"]


def test_tampered_content_does_not_match_its_id(trajectory):
    data = record_dict(trajectory)
    data["turns"][0]["observation"]["content"] = "edited by hand"
    assert any(p.startswith("trajectory_id: does not match the content hash") for p in problems_of(data))


def test_turn_indices_must_count_from_zero(trajectory):
    data = record_dict(trajectory)
    data["turns"][1]["index"] = 5
    data["trajectory_id"] = make_trajectory().trajectory_id
    assert "turns[1].index: expected 1, got 5" in problems_of(data)


def test_json_string_fields_must_hold_json(trajectory):
    data = record_dict(trajectory)
    data["action_space"] = "{not json"
    assert "action_space: not a valid JSON string" in problems_of(data)


def test_oversized_observation(trajectory):
    data = record_dict(trajectory)
    data["turns"][1]["observation"]["content"] = "x" * 101
    assert problems_of(data, max_observation_chars=100)[0] == (
        "turns[1].observation.content: 101 characters exceeds the limit of 100"
    )


def test_format_path():
    assert format_path(("turns", 3, "observation", "content")) == "turns[3].observation.content"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_never_raises_on_arbitrary_json(value):
    record, problems = validate_record(value)
    assert record is None and problems


@given(st.dictionaries(st.sampled_from(["turns", "domain", "source", "agent", "environment"]), json_values))
def test_never_raises_on_arbitrary_fields(fields):
    base = record_dict(make_trajectory())
    record, problems = validate_record({**base, **fields})
    assert (record is None) == bool(problems)
    json.dumps([str(p) for p in problems])
