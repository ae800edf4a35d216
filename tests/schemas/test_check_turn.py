import json
import shlex

from trajforge.schemas.check_turn import (
    check_turn,
    compared_file,
    exit_code_command,
    exit_code_observation,
    file_turn,
    learned_check_turns,
    recorded_check_turns,
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
    assert recorded_check_turns(row) == [({"kind": "tool_call", "name": "get", "content": '{"key": "a"}'}, "1")]


def test_a_compared_file_is_read_back_after_the_check():
    check = check_turn(Action(kind="shell", content=exit_code_command('test "$(cat a.txt)" = 5')), "exit code: 1\n")
    row = {"outcome": {"verifier": json.dumps(check | file_turn("a.txt", "4\n"))}}
    assert [action["content"] for action, _ in recorded_check_turns(row)] == [
        '( test "$(cat a.txt)" = 5 ); echo "exit code: $?"',
        "cat a.txt",
    ]
    assert recorded_check_turns(row)[1][1] == "4\n"
    alone = {"outcome": {"verifier": json.dumps(file_turn("a.txt", "4\n"))}}  # never without its check
    assert recorded_check_turns(alone) == []


def test_a_world_model_learns_a_compared_files_read_alone_and_any_other_check_as_it_ran():
    command = exit_code_command('test "$(cat a.txt)" = 5')
    compared = check_turn(Action(kind="shell", content=command), "exit code: 1\n") | file_turn("a.txt", "4\n")
    assert learned_check_turns({"outcome": {"verifier": json.dumps(compared)}}) == [
        ({"kind": "shell", "content": "cat a.txt"}, "4\n")
    ]
    other = check_turn(Action(kind="shell", content=exit_code_command("test -f done")), "exit code: 0\n")
    assert learned_check_turns({"outcome": {"verifier": json.dumps(other)}}) == recorded_check_turns(
        {"outcome": {"verifier": json.dumps(other)}}
    )
    assert learned_check_turns({"outcome": None}) == []


def test_rows_without_a_recorded_check_have_none():
    for outcome in (None, {}, {"verifier": None}, {"verifier": "not json"}, {"verifier": '["a list"]'},
                    {"verifier": '{"decided_by": "x"}'}, {"verifier": '{"check_turn": {"action": "ls"}}'}):  # fmt: skip
        assert recorded_check_turns({"outcome": outcome}) == []


def test_only_a_one_file_one_value_comparison_is_read_as_one():
    assert compared_file('test "$(cat results/answer.txt)" = 9') == ("results/answer.txt", "9")
    assert compared_file("test \"$(cat out.txt)\" = 'two words'") == ("out.txt", "two words")
    sorted_lines = 'test "$(cat out.txt)" = ' + shlex.quote("apple\nkoala")  # how generated tasks quote a list
    assert compared_file(sorted_lines) == ("out.txt", "apple\nkoala")
    for command in (
        "test -f out.txt",
        'test "$(cat a.txt b.txt)" = 1',
        'test "$(cat a.txt)" = 1 && rm a.txt',
        "grep -q x a.txt",
        'test "$(cat a.txt)" = "unclosed',
    ):
        assert compared_file(command) is None, command
