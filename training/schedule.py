"""Learning rate: linear warmup, then cosine decay to a floor."""

import math


def warmup_cosine(step: int, warmup: int, total: int, floor: float = 0.1) -> float:
    """The multiplier of the peak learning rate at `step` (0-based) of `total` optimizer steps."""
    if step < warmup:
        return (step + 1) / max(1, warmup)
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
