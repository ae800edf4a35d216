"""Comparisons of two rows measured on the same units (tasks, turns): the paired difference and its interval.

Two rows scored on the same tasks are compared by the mean of their per-task differences, never by two unpaired
intervals side by side: most of the variation between tasks is shared by both rows and cancels in the difference.
- Success or failure per task (0/1, one outcome per task): Newcombe's hybrid score interval for a difference of
  paired proportions (his method 10, built from the two Wilson intervals and the pairs' correlation). It stays
  inside [-1, 1] and keeps its width when both rows agree on every task, where a bootstrap collapses to a point.
- Anything else (scores, or several units per cluster, e.g. N samples of one task or the turns of one episode):
  a percentile bootstrap that resamples whole clusters, so repeats of one task count as one draw, not N; for 0/1
  outcomes in clusters it is widened to at least Newcombe's interval over the units, which keeps a width where
  the two rows agree on every unit (a bootstrap of all-zero differences is a point).
"""

import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from trajforge.evaluation.intervals import wilson_interval

RESAMPLES = 2000


@dataclass(frozen=True)
class PairedDifference:
    """Row b minus row a over `n` paired units, with its interval at `confidence`."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    confidence: float
    method: str

    def describe(self, scale: float = 100.0, unit: str = "points", of: str = "tasks") -> str:
        """e.g. "+3.2 points [-1.0, +7.5] (paired, 120 tasks)"; `scale` 100 reads a rate as percentage points."""
        figure = f"{self.difference * scale:+.1f} {unit} [{self.low * scale:+.1f}, {self.high * scale:+.1f}]"
        return f"{figure} (paired, {self.n} {of})"

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """b - a over paired units (a[i] and b[i] measured on the same unit). `clusters` groups units that are not
    independent (the samples of one task); without it each unit is its own cluster."""
    if len(a) != len(b):
        raise ValueError(f"paired rows need the same units: {len(a)} values against {len(b)}")
    if not a:
        raise ValueError("a paired difference needs at least one unit")
    if clusters is not None and len(clusters) != len(a):
        raise ValueError(f"{len(clusters)} cluster labels for {len(a)} units")
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    binary = all(v in (0, 1) for v in (*a, *b))
    if binary and (clusters is None or len(set(clusters)) == len(a)):
        low, high = _newcombe_paired(a, b, confidence)
        method = "Newcombe's paired score interval"
    elif binary:  # a bootstrap of rows that agree on every unit is a point: never narrower than the units' own interval
        low, high = _cluster_bootstrap([y - x for x, y in zip(a, b, strict=True)], clusters, confidence, seed)
        unit_low, unit_high = _newcombe_paired(a, b, confidence)
        low, high = min(low, unit_low), max(high, unit_high)
        method = f"bootstrap over clusters ({RESAMPLES} resamples, seed {seed}), at least Newcombe's over units"
    else:
        low, high = _cluster_bootstrap([y - x for x, y in zip(a, b, strict=True)], clusters, confidence, seed)
        method = (
            f"bootstrap over {'clusters' if clusters is not None else 'units'} ({RESAMPLES} resamples, seed {seed})"
        )
    return PairedDifference(len(a), mean_a, mean_b, mean_b - mean_a, low, high, confidence, method)


def clustered_mean_interval(
    values: Sequence[float], clusters: Sequence[Hashable], confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, low, high) of `values` where units of one cluster (repeats of one task) are one draw."""
    if not values:
        raise ValueError("an interval needs at least one unit")
    low, high = _cluster_bootstrap(list(values), clusters, confidence, seed)
    return sum(values) / len(values), low, high


def clustered_share_interval(
    outcomes: Sequence[float], clusters: Sequence[Hashable], confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(share, low, high) of 0/1 `outcomes`, units of one cluster one draw (`clustered_mean_interval`). Where every
    cluster has the same share (all agree, say) the bootstrap has nothing to resample and gives a point: Wilson's
    interval with the clusters as the trials instead."""
    mean, low, high = clustered_mean_interval(outcomes, clusters, confidence, seed)
    if low == high:
        count = len(set(clusters))
        low, high = wilson_interval(round(mean * count), count, confidence)
    return mean, low, high


def _newcombe_paired(a: Sequence[float], b: Sequence[float], confidence: float) -> tuple[float, float]:
    n = len(a)
    both = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    neither = n - both - only_a - only_b
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    low_a, high_a = wilson_interval(both + only_a, n, confidence)
    low_b, high_b = wilson_interval(both + only_b, n, confidence)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins else 0.0
    # Newcombe (1998), method 10, for b - a: the lower end pairs b's lower error with a's upper one.
    below = math.sqrt(max((p_b - low_b) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a) + (high_a - p_a) ** 2, 0.0))
    above = math.sqrt(max((high_b - p_b) ** 2 - 2 * phi * (high_b - p_b) * (p_a - low_a) + (p_a - low_a) ** 2, 0.0))
    return max(p_b - p_a - below, -1.0), min(p_b - p_a + above, 1.0)


def _cluster_bootstrap(
    values: Sequence[float], clusters: Sequence[Hashable] | None, confidence: float, seed: int
) -> tuple[float, float]:
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(clusters)} cluster labels for {len(values)} units")
    groups: dict[Hashable, list[float]] = {}
    for i, value in enumerate(values):
        groups.setdefault(clusters[i] if clusters is not None else i, []).append(value)
    sums = [(sum(g), len(g)) for g in groups.values()]
    rng = random.Random(seed)
    means = []
    for _ in range(RESAMPLES):
        drawn = [sums[rng.randrange(len(sums))] for _ in sums]
        means.append(sum(s for s, _ in drawn) / sum(k for _, k in drawn))
    means.sort()
    tail = (1.0 - confidence) / 2
    return means[int(tail * (RESAMPLES - 1))], means[math.ceil((1.0 - tail) * (RESAMPLES - 1))]
