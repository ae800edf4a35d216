"""The Wilson interval against values published for it (R's prop.test without continuity correction, statsmodels'
proportion_confint(method="wilson")), and its shape at the edges."""

import pytest

from trajforge.evaluation.intervals import wilson_interval


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (5, 10, 0.236593, 0.763407),
        (0, 10, 0.0, 0.277533),
        (10, 10, 0.722467, 1.0),
        (81, 263, 0.255289, 0.366210),
        (1, 1, 0.206549, 1.0),
    ],
)
def test_known_values(successes, trials, low, high):
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-6)


def test_a_lower_confidence_gives_a_narrower_interval():
    assert wilson_interval(5, 10, confidence=0.90) == pytest.approx((0.269272, 0.730728), abs=1e-6)


def test_mirrored_counts_give_a_mirrored_interval():
    low, high = wilson_interval(3, 17)
    assert wilson_interval(14, 17) == pytest.approx((1 - high, 1 - low))


def test_it_holds_the_rate_and_narrows_with_more_trials():
    small, large = wilson_interval(4, 10), wilson_interval(400, 1000)
    assert small[0] < 0.4 < small[1] and large[0] < 0.4 < large[1]
    assert large[1] - large[0] < small[1] - small[0]


@pytest.mark.parametrize(
    ("successes", "trials", "confidence"), [(0, 0, 0.95), (3, 2, 0.95), (-1, 2, 0.95), (1, 2, 1.0)]
)
def test_impossible_counts_are_refused(successes, trials, confidence):
    with pytest.raises(ValueError):
        wilson_interval(successes, trials, confidence)
