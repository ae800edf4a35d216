"""Near-duplicate detection: MinHash signatures over a trajectory's action/observation sequence, LSH bands to
find candidates, estimated Jaccard to confirm. Deterministic: the kept one of a pair is the smaller id.

Shingles are windows of k bytes of the lowercased text, hashed in numpy; the signature is a one-permutation
MinHash (one pass over the shingles): cheap enough for every trajectory of a large corpus.
"""

import io
from dataclasses import dataclass

import numpy as np

from trajforge.schemas.records import Trajectory

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


def fingerprint(sig: np.ndarray) -> np.ndarray:
    """A signature as LSH and the similarity estimate use it: only whether two values agree matters, so each keeps
    its low 16 bits (two different minima agree by chance once in 65,536), half the memory of the whole."""
    return sig.astype(np.uint16)


class SignatureTable:
    """Ids and MinHash fingerprints of a whole corpus in numpy arrays (2 bytes a permutation and the id's bytes per
    record), appended in blocks: what LSH needs, without a Python object per band or signature."""

    BLOCK = 4096

    def __init__(self, permutations: int):
        self.permutations = permutations
        self.ids: list[bytes] = []
        self.sigs: list[np.ndarray] = []
        self.blocks: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, ident: str, sig: np.ndarray) -> None:
        self.ids.append(ident.encode("ascii"))
        self.sigs.append(fingerprint(sig))
        if len(self.ids) >= self.BLOCK:
            self._seal()

    def _seal(self) -> None:
        if self.ids:
            self.blocks.append((np.array(self.ids, dtype=bytes), np.stack(self.sigs)))
            self.ids, self.sigs = [], []

    def merge(self, others) -> "SignatureTable":
        for other in others:
            other._seal()
            self.blocks.extend(other.blocks)
        return self

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct ids, sorted, and their signatures (exact duplicates share an id and a signature)."""
        self._seal()
        if not self.blocks:
            return np.array([], dtype=bytes), np.zeros((0, self.permutations), dtype=np.uint16)
        ids = np.concatenate([b[0] for b in self.blocks])
        sigs = np.concatenate([b[1] for b in self.blocks])
        ids, first = np.unique(ids, return_index=True)
        return ids, sigs[first]

    def __len__(self) -> int:
        return len(self.ids) + sum(len(block[0]) for block in self.blocks)

    def to_bytes(self) -> bytes:
        """The distinct ids and their fingerprints as one .npz file's bytes (numpy arrays, no pickle)."""
        ids, sigs = self.arrays()
        buffer = io.BytesIO()
        np.savez(buffer, ids=ids, sigs=sigs)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "SignatureTable":
        with np.load(io.BytesIO(data)) as saved:
            table = cls(saved["sigs"].shape[1])
            table.blocks.append((saved["ids"], saved["sigs"]))
        return table


def near_duplicate_pairs(table: SignatureTable, config: MinHashConfig) -> list[tuple[str, tuple[str, float]]]:
    """LSH over the table: records whose signatures agree on all rows of some band are candidates, each paired
    with its bucket's smallest id; a candidate whose estimated Jaccard reaches the threshold is dropped in
    favour of the smallest such id. (dropped id, (kept id, similarity)), sorted."""
    ids, sigs = table.arrays()
    rows = config.permutations // config.bands
    candidates: set[tuple[int, int]] = set()
    for band in range(config.bands):
        part = sigs[:, band * rows : (band + 1) * rows]
        order = np.lexsort(part.T[::-1])
        ordered = part[order]
        starts = np.flatnonzero(np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)])
        sizes = np.diff(np.r_[starts, len(order)])
        for start, size in zip(starts[sizes > 1], sizes[sizes > 1], strict=True):
            members = np.sort(order[start : start + size])  # ids are sorted, so the smallest index is the smallest id
            candidates.update((int(m), int(members[0])) for m in members[1:])
    best: dict[int, tuple[int, float]] = {}
    for larger, smaller in candidates:
        score = similarity(sigs[larger], sigs[smaller])
        if score >= config.threshold and (larger not in best or smaller < best[larger][0]):
            best[larger] = (smaller, round(score, 4))
    return sorted((ids[d].decode(), (ids[k].decode(), score)) for d, (k, score) in best.items())
