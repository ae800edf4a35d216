import pytest

from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import FamilyError, generate
from trajforge.collectors.tasks import load_suite, task_split
from trajforge.schemas.splits import SplitConfig

GENERATED_SUITES = {"terminal-text": "terminal-gen", "kvstore": "mcp-kvstore-gen", "workspace": "mcp-workspace-gen"}


def family(name: str, **params):
    family_class = FAMILIES.get(name)
    return family_class(family_class.Params(**params))


def told(task) -> tuple:
    """A task as the agent is told and given it: its instruction, its files and its setup."""
    return task.instruction, tuple(sorted(task.files.items())), task.setup


def test_three_families_each_generate_a_thousand_distinct_tasks_with_a_check_and_a_solution():
    assert set(GENERATED_SUITES) <= set(FAMILIES)
    for name, suite_name in GENERATED_SUITES.items():
        suite = load_suite(suite_name)
        tasks = [t for t in suite.tasks if t.family == name]
        assert len(tasks) >= 1000
        assert len({(t.instruction, tuple(sorted(t.files.items()))) for t in tasks}) == len(tasks)
        assert len({t.instruction for t in tasks}) == len(tasks)  # distinct by instruction alone, even
        assert all(t.actions and t.check is not None for t in tasks)
        assert len({t.id for t in tasks}) == len(tasks) and all(t.id.startswith(f"{name}-") for t in tasks)


def test_a_seed_gives_the_same_tasks_and_another_seed_others():
    first, again = generate(family("kvstore"), 50, 7, "mcp"), generate(family("kvstore"), 50, 7, "mcp")
    assert [told(t) for t in first] == [told(t) for t in again] and [t.id for t in first] == [t.id for t in again]
    other = generate(family("kvstore"), 50, 8, "mcp")
    assert not {t.instruction for t in first} & {t.instruction for t in other}


def test_the_id_follows_the_instruction_so_equal_tasks_share_a_side_of_the_split():
    by_seed = [generate(family("terminal-text", operations=("count-lines",), min_lines=2, max_lines=2), 40, s, "t")
               for s in (1, 2)]  # fmt: skip
    ids = {t.instruction: t.id for t in by_seed[0]}
    shared = [t for t in by_seed[1] if t.instruction in ids]
    assert shared, "a narrow family repeats instructions across seeds"
    assert all(ids[t.instruction] == t.id for t in shared)


def test_held_out_tasks_share_no_instruction_and_files_with_training_ones():
    config = SplitConfig(held_out=0.1)
    for suite_name in GENERATED_SUITES.values():
        suite = load_suite(suite_name)
        sides = {"held_out": set(), "validation": set(), "train": set()}
        for task in suite.tasks:
            sides[task_split(suite, task, config)].add((task.instruction, tuple(sorted(task.files.items()))))
        assert 0.05 * len(suite.tasks) < len(sides["held_out"]) < 0.15 * len(suite.tasks)
        assert not sides["held_out"] & sides["train"] and not sides["validation"] & sides["train"]


def test_a_held_out_family_holds_out_each_of_its_tasks():
    suite = load_suite("mcp-kvstore-gen")
    config = SplitConfig(held_out=0.1, held_out_families=("kvstore",))
    assert {task_split(suite, task, config) for task in suite.tasks} == {"held_out"}
    terminal = load_suite("terminal")  # hand-written tasks have no family: the draw alone decides
    assert {task_split(terminal, task, config) for task in terminal.tasks} == {"train", "validation", "held_out"}


def test_a_family_too_narrow_for_the_count_says_so():
    narrow = family("terminal-text", operations=("count-lines",), min_lines=2, max_lines=2, answer_dirs=(".",))
    with pytest.raises(FamilyError, match=r"family 'terminal-text' gave only \d+ distinct tasks of the 2000 asked"):
        generate(narrow, 2000, 0, "terminal")
