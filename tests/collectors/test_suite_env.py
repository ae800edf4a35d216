"""A suite opened for another trainer's loop offers it the training tasks unless told a part."""

import pytest

from trajforge.collectors.environments import Settings
from trajforge.collectors.suite_env import OpenSuite
from trajforge.collectors.tasks import load_suite, task_split


def test_a_trainer_is_offered_the_training_tasks_and_an_evaluation_its_part():
    suite = load_suite("terminal-gen")
    opened = OpenSuite(suite, Settings())
    splits = {task.id: task_split(suite, task) for task in suite.tasks}
    parts = {part: {task.id for task in opened.tasks_in(part)} for part in ("train", "validation", "test", "all")}
    assert parts["train"] == {t for t, split in splits.items() if split in ("train", "sft_rl")}
    assert parts["validation"] == {t for t, split in splits.items() if split == "validation"}
    assert parts["test"] == {t for t, split in splits.items() if split == "held_out"}
    assert parts["train"] and parts["validation"] and parts["test"]  # the bundled suite has all three
    assert parts["train"] | parts["validation"] | parts["test"] == parts["all"] == set(splits)
    with pytest.raises(ValueError, match="part 'eval': expected one of train, validation, test, all"):
        opened.tasks_in("eval")


def test_a_reset_by_seed_numbers_the_tasks_of_its_part():
    opened = OpenSuite(load_suite("terminal-gen"), Settings())
    train, test = opened.tasks_in("train"), {t.id for t in opened.tasks_in("test")}
    numbers = [0, 1, 2, len(train) - 1, len(train), len(train) + 1]
    assert [opened.task_numbered(n, "train") for n in numbers] == [*train[:3], train[-1], *train[:2]]
    assert {opened.task_numbered(n, "train").id for n in range(50)}.isdisjoint(test)
    assert opened.task_numbered(0, "test").id in test
