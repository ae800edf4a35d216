"""Near-duplicate detection: MinHash signatures over a trajectory's action/observation sequence, LSH bands to
find candidates, estimated Jaccard to confirm. Deterministic: the kept one of a pair is the smaller id.

Shingles are windows of k bytes of the lowercased text, hashed in numpy; the signature is a one-permutation
MinHash (one pass over the shingles): cheap enough for every trajectory of a large corpus.
"""

import hashlib
from dataclasses import dataclass

import numpy as np

from schemas.records import Trajectory

MAX_SHINGLE_TEXT = 4096  # characters of each observation that take part


@dataclass(frozen=True)
class MinHashConfig:
    permutations: int = 64
    bands: int = 16  # permutations / bands rows per band; 16 x 4 finds pairs from about 0.5 Jaccard
    shingle_chars: int = 8
    threshold: float = 0.85  # estimated Jaccard at or above which the larger id is dropped
    seed: int = 1

    def __post_init__(self):
        if self.permutations % self.bands:
            raise ValueError("permutations must be a multiple of bands")
        if self.permutations & (self.permutations - 1) or not 8 <= self.permutations <= 1024:
            raise ValueError("permutations must be a power of two between 8 and 1024")


def window_hashes(record: Trajectory, width: int) -> np.ndarray:
    """32-bit hashes of every `width`-byte window of the lowercased action/observation sequence (repeats kept)."""
    text = "\x1e".join(f"{t.action.content}\x1f{t.observation.content[:MAX_SHINGLE_TEXT]}" for t in record.turns)
    data = np.frombuffer(text.lower().encode("utf-8", "replace"), dtype=np.uint8).astype(np.uint32)
    if data.size < width:
        return np.unique(data)
    n = data.size - width + 1
    hashed = np.zeros(n, dtype=np.uint32)
    with np.errstate(over="ignore"):  # arithmetic modulo 2**32 is the point
        for i in range(width):
            hashed = hashed * np.uint32(0x01000193) + data[i : n + i]
        hashed ^= hashed >> np.uint32(15)
        hashed *= np.uint32(0x2C1B3C6D)
        hashed ^= hashed >> np.uint32(12)
    return hashed


def shingle_hashes(record: Trajectory, width: int) -> np.ndarray:
    """The distinct shingle hashes: the set whose Jaccard similarity the signatures estimate."""
    return np.unique(window_hashes(record, width))


def signature(record: Trajectory, config: MinHashConfig) -> np.ndarray:
    """One-permutation MinHash: the top bits of a shingle's hash pick one of `permutations` bins, and each bin
    keeps its smallest remaining bits (empty bins keep the maximum). One pass instead of one per permutation."""
    values = window_hashes(record, config.shingle_chars)
    bits = config.permutations.bit_length() - 1
    sig = np.full(config.permutations, np.uint32(0xFFFFFFFF), dtype=np.uint32)
    if values.size == 0:
        return sig
    with np.errstate(over="ignore"):
        mixed = np.sort(values * np.uint32(config.seed * 2 + 0x9E3779B1))  # the seed picks the permutation
    # Sorted, the bins (top bits) ascend and each bin's first entry holds its smallest remaining bits.
    bins = mixed >> np.uint32(32 - bits)
    first = np.flatnonzero(np.diff(bins, prepend=np.uint32(0xFFFFFFFF)))
    sig[bins[first]] = mixed[first] & np.uint32((1 << (32 - bits)) - 1)
    return sig


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
