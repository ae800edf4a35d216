"""Confidence intervals for rates measured by counting: the Wilson score interval of a binomial proportion, which
stays inside [0, 1] and keeps its width at 0 and n successes out of n (where the normal approximation collapses to a
point), so a success rate on a few held-out tasks still says how little it knows."""

import math
from statistics import NormalDist


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval (low, high) of `successes` out of `trials` at `confidence` (two-sided)."""
    if trials <= 0:
        raise ValueError(f"a rate needs at least one trial, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes {successes} not in [0, {trials}]")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: expected a value in (0, 1)")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    rate, z2 = successes / trials, z * z
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else centre - half  # exact ends where rounding would leave 1e-17 or 1 - 1e-16
    high = 1.0 if successes == trials else centre + half
    return low, high
