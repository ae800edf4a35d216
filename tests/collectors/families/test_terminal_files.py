import dataclasses
import shlex

import pytest
from pydantic import ValidationError

from tests.collectors.families.runs import doing_nothing, unsolved
from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import generate
from trajforge.collectors.families.terminal_files import TerminalFilesParams
from trajforge.collectors.tasks import load_suite, task_split
from trajforge.schemas.records import Action
from trajforge.schemas.splits import SplitConfig

FAMILY = FAMILIES.get("terminal-files")
PROGRAMS = {"mv", "cp", "mkdir", "rm", "cat", "printf", "ls", "wc", "tar", "sed", "echo", "chmod"}
SYNTAX = {"&&", "|", ">", ">>", "%s\\n", "cf", "czf", "tf"}  # shell syntax, printf's format and tar's modes


def tasks(count: int = 400, seed: int = 0, **params):
    return generate(FAMILY(TerminalFilesParams(**params)), count, seed, "terminal")


def one_per_operation():
    """A suite of the bundled one's kind holding one task of each operation."""
    drawn = tuple(tasks(1, 0, operations=(operation,))[0] for operation in TerminalFilesParams().operations)
    return dataclasses.replace(load_suite("terminal-files-gen"), tasks=drawn)


def named(command: str) -> list[str]:
    """The paths, words and numbers a command uses: its words but programs, flags and shell syntax; a glob's
    folder and extension; a substitution's two words."""
    names = []
    for word in shlex.split(command):
        if word in PROGRAMS | SYNTAX or word.startswith(("-", "+")):
            continue
        if word.startswith("s/"):
            names += word.split("/")[1:3]
        elif "/*" in word:
            names += word.split("/*")  # DIR/*.EXT: the folder and .EXT
        else:
            names.append(word.rstrip("/"))
    return names


def test_solutions_are_one_to_three_commands_naming_only_what_the_instruction_says():
    for task in tasks():
        assert 1 <= len(task.actions) <= 3 and {a.kind for a in task.actions} == {"shell"}
        for action in task.actions:
            for name in named(action.content):
                assert name in task.instruction, (name, action.content, task.instruction)


def test_the_operations_and_the_shapes_vary():
    drawn = tasks()
    assert {w for t in drawn for a in t.actions for w in shlex.split(a.content)} >= PROGRAMS
    verbs = {t.instruction.split()[0] for t in drawn}
    assert verbs == {"Move", "Rename", "Copy", "Create", "Delete", "Concatenate", "Count", "Make", "Replace", "Append"}
    assert {len(t.actions) for t in drawn} == {1, 2, 3}
    assert len({path for t in drawn for path in t.files}) > 300
    assert {len(t.files) for t in drawn} >= {0, 1, 2, 3, 6}  # made from nothing, one file, a folder of them
    assert any(t.setup for t in drawn) and any("&&" in t.check.command for t in drawn)


def test_parameters_narrow_the_operations_and_refuse_none():
    assert all(any(a.content.startswith("chmod +x ") for a in t.actions) for t in tasks(20, operations=("chmod",)))
    assert all(t.instruction.startswith("Append") for t in tasks(20, operations=("append",)))
    with pytest.raises(ValidationError, match="operations must not be empty"):
        TerminalFilesParams(operations=())
    with pytest.raises(ValidationError):
        TerminalFilesParams(operations=("mv",))


def test_each_seed_draws_400_distinct_tasks_and_the_bundled_suite_holds_60():
    for seed in (0, 1, 2):
        drawn = tasks(400, seed)
        assert len({t.instruction for t in drawn}) == 400 and len({t.id for t in drawn}) == 400
    suite = load_suite("terminal-files-gen")
    assert len(suite.tasks) == 60 and {t.family for t in suite.tasks} == {"terminal-files"}
    assert {t.instruction for t in suite.tasks} == {t.instruction for t in tasks(60, 0)}


def test_a_held_out_terminal_files_family_holds_out_its_tasks_and_not_terminal_texts(tmp_path):
    path = tmp_path / "both.yaml"
    path.write_text(
        "suite: both\ndomain: terminal\ngenerated:\n  - {family: terminal-text, count: 100, seed: 1}\n"
        "  - {family: terminal-files, count: 100, seed: 1}\n"
    )
    suite = load_suite(str(path))
    config = SplitConfig(held_out=0.1, held_out_families=("terminal-files",))
    sides = {family: {task_split(suite, t, config) for t in suite.tasks if t.family == family}
             for family in ("terminal-text", "terminal-files")}  # fmt: skip
    assert sides == {"terminal-files": {"held_out"}, "terminal-text": {"train", "validation", "held_out"}}


def test_scripted_solutions_pass_their_checks_in_the_docker_terminal(docker_client, sandbox_image):
    assert unsolved(one_per_operation(), docker_client, sandbox_image) == []


def test_doing_nothing_fails_every_check_in_the_docker_terminal(docker_client, sandbox_image):
    suite = doing_nothing(one_per_operation())
    failed = unsolved(suite, docker_client, sandbox_image)
    assert len(failed) == len(suite.tasks) == 11
    assert all(": failure: its check ShellCheck(" in line for line in failed), failed  # decided, not broken


def test_a_near_miss_fails_the_check_in_the_docker_terminal(docker_client, sandbox_image):
    """Copying what was to be moved leaves the old path; moving what was to be copied loses the original;
    deleting every file of the folder deletes the ones to keep."""
    move, copy, delete = (tasks(1, 0, operations=(operation,))[0] for operation in ("move", "copy", "delete-ext"))
    folder = delete.instruction.split(" in ")[1].split()[0]
    wrong = [
        (move, solution(move, "mv").replace("mv ", "cp ")),
        (copy, solution(copy, "cp").replace("cp ", "mv ")),
        (delete, f"rm {folder}/*"),
    ]
    misses = tuple(dataclasses.replace(t, actions=(Action(kind="shell", content=c),)) for t, c in wrong)
    suite = dataclasses.replace(load_suite("terminal-files-gen"), tasks=misses)
    failed = unsolved(suite, docker_client, sandbox_image)
    assert len(failed) == 3 and all(": failure: its check ShellCheck(" in line for line in failed), failed


def solution(task, program: str) -> str:
    """The command of a task's scripted solution that runs `program` (not its looks before and after)."""
    return next(a.content for a in task.actions if f"{program} " in a.content)
