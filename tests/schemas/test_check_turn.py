import json

from trajforge.schemas.check_turn import (
    check_turn,
    exit_code_command,
    exit_code_observation,
    recorded_check_turn,
)
from trajforge.schemas.records import Action


def test_a_check_command_prints_its_exit_code_last():
    assert exit_code_command("test -f done") == '( test -f done ); echo "exit code: $?"'
    assert exit_code_command("a\nb") == '(\na\nb\n); echo "exit code: $?"'
    assert exit_code_observation("", 1) == "exit code: 1\n"
    assert exit_code_observation("cat: x: No such file", 1) == "cat: x: No such file\nexit code: 1\n"


def test_the_recorded_turn_reads_back_from_the_outcome_verifier():
    action = Action(kind="tool_call", name="get", content='{"key": "a"}')
    verifier = json.dumps({"decided_by": "the task's check, in the real environment"} | check_turn(action, "1"))
    row = {"outcome": {"status": "success", "verifier": verifier}}
    assert recorded_check_turn(row) == ({"kind": "tool_call", "name": "get", "content": '{"key": "a"}'}, "1")


def test_rows_without_a_recorded_check_have_none():
    for outcome in (None, {}, {"verifier": None}, {"verifier": "not json"}, {"verifier": '["a list"]'},
                    {"verifier": '{"decided_by": "x"}'}, {"verifier": '{"check_turn": {"action": "ls"}}'}):  # fmt: skip
        assert recorded_check_turn({"outcome": outcome}) is None
