import re

from tests.collectors.families.runs import first_tasks, unsolved
from trajforge.collectors.tasks import load_suite


def test_solutions_are_one_to_three_commands_naming_only_what_the_instruction_says():
    suite = load_suite("terminal-gen")
    for task in suite.tasks:
        assert 1 <= len(task.actions) <= 3 and {a.kind for a in task.actions} == {"shell"}
        (answer,) = re.findall(r" to (\S+)\.$", task.instruction)
        assert sum(f"> {answer}" in a.content for a in task.actions) == 1, task  # one command writes the answer
        for path in (p for p in task.files if not p.endswith((".md", ".py", ".csv", ".log", ".json", ".cfg"))):
            assert path in task.instruction, (path, task.instruction)  # inputs are named (find-ext: the folder)


def test_the_operations_and_the_shapes_vary():
    suite = load_suite("terminal-gen")
    programs = {a.content.split()[0] for t in suite.tasks for a in t.actions}
    assert {"wc", "grep", "sort", "cut", "head", "tail", "tr", "sed", "awk", "find", "cat"} <= programs
    assert {len(t.actions) for t in suite.tasks} == {1, 2, 3}
    assert len({next(iter(t.files)) for t in suite.tasks}) > 100  # file names
    assert len({len(next(iter(t.files.values())).splitlines()) for t in suite.tasks}) >= 10  # sizes


def test_scripted_solutions_pass_their_checks_in_the_docker_terminal(docker_client, sandbox_image):
    assert unsolved(first_tasks("terminal-gen", 6), docker_client, sandbox_image) == []
