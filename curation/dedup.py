"""Near-duplicate detection: MinHash signatures over a trajectory's action/observation sequence, LSH bands to
find candidates, estimated Jaccard to confirm. Deterministic: the kept one of a pair is the smaller id."""

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from schemas.records import Trajectory

MERSENNE = np.uint64((1 << 61) - 1)
MAX_SHINGLE_TEXT = 4096  # characters of each observation that take part


@dataclass(frozen=True)
class MinHashConfig:
    permutations: int = 64
    bands: int = 16  # permutations / bands rows per band; 16 x 4 finds pairs from about 0.5 Jaccard
    shingle_words: int = 3
    threshold: float = 0.85  # estimated Jaccard at or above which the larger id is dropped
    seed: int = 1

    def __post_init__(self):
        if self.permutations % self.bands:
            raise ValueError("permutations must be a multiple of bands")

    def coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        a = rng.integers(1, int(MERSENNE), self.permutations, dtype=np.uint64)
        b = rng.integers(0, int(MERSENNE), self.permutations, dtype=np.uint64)
        return a, b


def shingles(record: Trajectory, words: int) -> set[int]:
    tokens: list[str] = []
    for turn in record.turns:
        tokens += ["<a>", *re.findall(r"\w+", turn.action.content.lower())]
        tokens += ["<o>", *re.findall(r"\w+", turn.observation.content[:MAX_SHINGLE_TEXT].lower())]
    grams = {" ".join(tokens[i : i + words]) for i in range(max(1, len(tokens) - words + 1))}
    return {int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little") for g in grams}


def signature(record: Trajectory, config: MinHashConfig, coefficients=None) -> np.ndarray:
    a, b = coefficients if coefficients is not None else config.coefficients()
    values = np.fromiter(shingles(record, config.shingle_words), dtype=np.uint64)
    if values.size == 0:
        return np.zeros(config.permutations, dtype=np.uint64)
    values %= MERSENNE
    # (a * x + b) mod p, computed without overflow by splitting x into 32-bit halves.
    hi, lo = values >> np.uint64(32), values & np.uint64(0xFFFFFFFF)
    hashed = (
        (a[:, None] * hi[None, :]) % MERSENNE * np.uint64(1 << 32) % MERSENNE
        + a[:, None] * lo[None, :] % MERSENNE
        + b[:, None]
    ) % MERSENNE
    return hashed.min(axis=1)


def band_keys(sig: np.ndarray, config: MinHashConfig) -> list[str]:
    rows = config.permutations // config.bands
    return [
        f"{band}:{hashlib.blake2b(sig[band * rows : (band + 1) * rows].tobytes(), digest_size=8).hexdigest()}"
        for band in range(config.bands)
    ]


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(a == b))


def duplicates_in_bucket(members: list[tuple[str, np.ndarray]], threshold: float, max_compare: int = 16):
    """(dropped id, kept id, similarity) for each member with a smaller-id near-duplicate in the bucket."""
    members = sorted(members, key=lambda m: m[0])
    for i, (ident, sig) in enumerate(members[1:], start=1):
        for other, other_sig in members[max(0, i - max_compare) : i]:
            score = similarity(sig, other_sig)
            if score >= threshold:
                yield ident, other, score
                break
