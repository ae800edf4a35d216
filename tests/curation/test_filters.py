import json

import pytest

from tests.builders import make_trajectory
from trajforge.curation.filters import FILTERS, FilterConfig, apply_filters

ALL = FilterConfig()


def turn(i, content, obs="ok", kind="shell", name=None, exit_code=0, is_error=False, no_change=None):
    action = {"kind": kind, "content": content, **({"name": name} if name else {})}
    return {
        "index": i,
        "action": action,
        "observation": {"content": obs, "exit_code": exit_code, "is_error": is_error},
        "no_change": no_change,
    }


def test_min_turns():
    assert apply_filters(make_trajectory(1), ALL).dropped_by == "min_turns"
    assert apply_filters(make_trajectory(1), FilterConfig(min_turns=0)).record is not None


def test_infra_errors_never_become_targets():
    record = make_trajectory(3, outcome={"status": "infra_error", "error": "container died"})
    assert apply_filters(record, ALL).dropped_by == "infra_errors"
    gui = make_trajectory(3, domain="web", outcome={"status": "infra_error"})
    assert apply_filters(gui, FilterConfig(disabled=("infra_errors",))).dropped_by == "gui_environment_failures"


def test_undeclared_tools():
    space = json.dumps([{"name": "get_page"}])
    turns = [turn(0, "{}", kind="tool_call", name="get_page"), turn(1, "{}", kind="tool_call", name="delete_all")]
    record = make_trajectory(turns=turns, domain="mcp", action_space=space)
    assert apply_filters(record, ALL).dropped_by == "undeclared_tools"
    assert apply_filters(record, FilterConfig(disabled=("undeclared_tools",))).record is not None
    for names, kept in ((("get_page", "delete_all"), True), (("get_page",), False)):  # OpenAI's tool format
        space = json.dumps([{"type": "function", "function": {"name": n}} for n in names])
        assert (apply_filters(record.model_copy(update={"action_space": space}), ALL).record is not None) is kept
    assert apply_filters(record.model_copy(update={"action_space": "[]"}), ALL).record is not None  # none declared


def test_empty_actions_are_stripped_and_turns_renumbered():
    record = make_trajectory(turns=[turn(0, "ls"), turn(1, "   "), turn(2, "pwd")])
    result = apply_filters(record, ALL)
    assert [t.action.content for t in result.record.turns] == ["ls", "pwd"]
    assert [t.index for t in result.record.turns] == [0, 1]
    assert result.removed_turns == {"empty_actions": 1}
    assert result.record.trajectory_id == result.record.content_id()


def test_retry_cycle_keeps_the_retry():
    turns = [
        turn(0, "ls"),
        turn(1, "git comit -m x", "git: 'comit' is not a git command", exit_code=1),
        turn(2, "git commit -m x", "[main 1a2b] x"),
        turn(3, "cat missing", "No such file", exit_code=1),
        turn(4, "ls"),
    ]
    result = apply_filters(make_trajectory(turns=turns), ALL)
    assert [t.action.content for t in result.record.turns] == ["ls", "git commit -m x", "cat missing", "ls"]
    assert result.removed_turns == {"retry_cycles": 1}


def controlled(turns: list[dict], *faulted: int):
    """A trajectory recorded under a control spec with an intermittent error at each of `faulted` (action indices)."""
    spec = {"injections": [{"kind": "intermittent_error", "turn": t} for t in faulted]}
    return make_trajectory(turns=turns, metadata=json.dumps({"control": spec}))


ERROR = "assign: temporary failure (503 Service Unavailable)"


def test_an_injected_error_and_its_retry_both_stay_as_the_instruction_names_them():
    turns = [turn(0, '{"number": 3}', kind="tool_call", name="get_issue"),
             turn(1, '{"assignee": "dave"}', ERROR, kind="tool_call", name="assign", is_error=True),
             turn(2, '{"assignee": "bob"}', kind="tool_call", name="assign"),
             turn(3, '{"number": 3}', kind="tool_call", name="get_issue")]  # fmt: skip
    result = apply_filters(controlled(turns, 1), ALL)  # "action 2 fails": the retry cycle is what it asked for
    assert [t.action.name for t in result.record.turns] == ["get_issue", "assign", "assign", "get_issue"]
    assert result.removed_turns == {}
    assert len(apply_filters(make_trajectory(turns=turns), ALL).record.turns) == 3  # uncontrolled: removed
    imported = make_trajectory(turns=turns, metadata="exported by hand")  # not JSON: no spec, filtered as before
    assert apply_filters(imported, ALL).removed_turns == {"retry_cycles": 1}


def test_no_turn_before_an_instructed_fault_is_removed_and_those_after_the_last_are():
    turns = [
        turn(0, "cat a.txt", "No such file", exit_code=1),
        turn(1, "cat a.txt"),
        turn(2, "sort a.txt", "sort: temporary failure", exit_code=1),
        turn(3, "sort b.txt > out.txt"),
        turn(4, "wc -l out.txt", "wc: out.txt: No such file", exit_code=1),
        turn(5, "wc -l out.txt"),
    ]
    result = apply_filters(controlled(turns, 2), ALL)  # removing turn 0 would make "action 3" name turn 3
    assert [t.action.content for t in result.record.turns][:4] == [t["action"]["content"] for t in turns[:4]]
    assert [t.index for t in result.record.turns] == [0, 1, 2, 3, 4]  # the retry cycle after the fault: removed
    assert result.removed_turns == {"retry_cycles": 1}


def test_gui_no_change_turns_are_removed():
    turns = [
        turn(0, "{}", kind="browser", name="click", no_change=False),
        turn(1, "{}", kind="browser", name="scroll", no_change=True),
        turn(2, "{}", kind="browser", name="click", no_change=False),
    ]
    result = apply_filters(make_trajectory(turns=turns, domain="web"), ALL)
    assert [t.action.name for t in result.record.turns] == ["click", "click"]
    terminal = apply_filters(make_trajectory(turns=turns, domain="terminal"), ALL)
    assert len(terminal.record.turns) == 3


def test_unknown_filter_names():
    with pytest.raises(ValueError, match="unknown filter 'teleport'; known: gui_environment_failures, infra_errors, "):
        FilterConfig.from_dict({"teleport": True})
    with pytest.raises(ValueError, match="unknown filter 'fly', 'teleport'; known: .*, min_turns$"):
        FilterConfig(disabled=("teleport", "fly", "min_turns"))


def test_min_turns_can_be_disabled_by_name():
    assert apply_filters(make_trajectory(1), FilterConfig(disabled=("min_turns",))).record is not None


def test_gui_environment_failures_fire_before_the_general_infra_filter():
    gui = make_trajectory(3, domain="web", outcome={"status": "infra_error", "error": "page never loaded"})
    result = apply_filters(gui, ALL)
    assert result.dropped_by == "gui_environment_failures"
    assert result.detail == "web environment failed: page never loaded"
    terminal = make_trajectory(3, outcome={"status": "infra_error"})
    assert apply_filters(terminal, ALL).dropped_by == "infra_errors"


def test_a_retry_cycle_is_the_same_command_not_the_same_program():
    turns = [
        turn(0, "git commit -m x", "nothing added to commit", exit_code=1),
        turn(1, "git add notes.txt"),
        turn(2, "git commit -m x", "[main 1a2b] x"),
        turn(3, "pip install reqests", "No matching distribution", exit_code=1),
        turn(4, "pip install requests"),
    ]
    result = apply_filters(make_trajectory(turns=turns), ALL)
    assert [t.action.content for t in result.record.turns] == [
        "git commit -m x",
        "git add notes.txt",
        "git commit -m x",
        "pip install requests",
    ]
    assert result.removed_turns == {"retry_cycles": 1}


def test_each_filter_is_one_name_for_disable_reason_and_count():
    for name, unit in FILTERS.items():
        assert unit.name == name and unit.reason
        assert FilterConfig(disabled=(name,)).disabled == (name,)
