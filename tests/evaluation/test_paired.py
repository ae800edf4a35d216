import random

import pytest

from trajforge.evaluation.paired import clustered_mean_interval, paired_difference


def test_two_rows_that_agree_on_every_task_keep_an_interval_around_zero():
    result = paired_difference([0] * 14, [0] * 14)
    assert result.difference == 0
    assert result.low < -0.1 and result.high > 0.1  # 0 of 14 twice says little, not "exactly equal"
    assert not result.excludes_zero()


def test_pairing_narrows_the_interval_when_the_rows_share_their_hard_tasks():
    # b solves every task a solves and 10 more of 100: a paired reading is sure b is better.
    a = [1] * 40 + [0] * 60
    b = [1] * 50 + [0] * 50
    paired = paired_difference(a, b)
    assert paired.difference == pytest.approx(0.10)
    assert paired.excludes_zero()
    # unpaired, the same rows' Wilson intervals overlap ([30.9, 49.8] and [40.4, 59.6])
    shuffled_b = [0] * 50 + [1] * 50  # same rate, no shared tasks
    assert not paired_difference(a, shuffled_b).excludes_zero()


def test_the_paired_interval_covers_the_true_difference_about_95_times_in_100():
    rng = random.Random(7)
    covered, trials = 0, 400
    for _ in range(trials):  # 60 tasks; a solves 40% of them, b the same ones plus 15% of a's failures
        a = [1 if rng.random() < 0.4 else 0 for _ in range(60)]
        b = [1 if x or rng.random() < 0.25 else 0 for x in a]  # true difference 0.6 * 0.25 = 0.15
        result = paired_difference(a, b)
        covered += result.low <= 0.15 <= result.high
    assert 0.92 <= covered / trials <= 0.99


def test_scores_are_bootstrapped_and_repeats_of_a_task_are_one_draw():
    a = [0.0, 1.0, 2.0, 3.0] * 5
    b = [x + 1.0 for x in a]
    result = paired_difference(a, b)
    assert (
        result.difference == pytest.approx(1.0)
        and result.low == pytest.approx(1.0)
        and result.high == pytest.approx(1.0)
    )
    values = [1.0] * 10 + [0.0] * 10
    independent = clustered_mean_interval(values, list(range(20)))
    one_task_each = clustered_mean_interval(values, [0] * 10 + [1] * 10)  # two tasks, ten repeats each
    assert independent[0] == one_task_each[0] == 0.5
    assert one_task_each[2] - one_task_each[1] > independent[2] - independent[1]


def test_unpaired_rows_are_refused():
    with pytest.raises(ValueError, match="same units"):
        paired_difference([1, 0], [1])
    with pytest.raises(ValueError, match="at least one"):
        paired_difference([], [])


def test_clustered_outcomes_that_agree_everywhere_keep_an_interval():
    # three seeds of 14 tasks, both rows failing every one: a bootstrap alone would say [0, 0]
    tasks = [t for t in range(14) for _ in range(3)]
    result = paired_difference([0] * 42, [0] * 42, clusters=tasks)
    assert result.difference == 0 and result.low < -0.05 and result.high > 0.05
