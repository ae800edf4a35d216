import numpy as np
import pytest

from tests.builders import make_trajectory
from trajforge.curation.dedup import (
    MinHashConfig,
    SignatureTable,
    duplicates_in_bucket,
    near_duplicate_pairs,
    signature,
    similarity,
)

CONFIG = MinHashConfig()


def long_trajectory(changed_turn: int | None = None):
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": f"cat file{i}.txt"},
            "observation": {"content": f"line {i} of the report about the quarterly numbers and the budget"},
        }
        for i in range(20)
    ]
    if changed_turn is not None:
        turns[changed_turn]["observation"]["content"] = "something entirely different happened here today"
    return make_trajectory(turns=turns)


def test_identical_and_near_and_far():
    a, b = signature(long_trajectory(), CONFIG), signature(long_trajectory(3), CONFIG)
    c = signature(make_trajectory(2, task_description="other"), CONFIG)
    assert similarity(a, a) == 1.0
    assert similarity(a, b) > 0.8
    assert similarity(a, c) < 0.3


def test_lsh_pairs_near_duplicates_with_the_smallest_id_across_merged_tables():
    near, near2, far = long_trajectory(), long_trajectory(3), make_trajectory(2, task_description="other")
    left, right = SignatureTable(CONFIG.permutations), SignatureTable(CONFIG.permutations)
    for record in (near, far, near):  # an exact duplicate shares its id and signature
        left.add(record.trajectory_id, signature(record, CONFIG))
    right.add(near2.trajectory_id, signature(near2, CONFIG))
    table = SignatureTable(CONFIG.permutations).merge([left, right])
    kept, dropped = sorted([near.trajectory_id, near2.trajectory_id])
    loose = MinHashConfig(threshold=0.75)
    ((loser, (winner, score)),) = near_duplicate_pairs(table, loose)
    assert (loser, winner) == (dropped, kept) and 0.75 <= score < 1
    # the table keeps 16-bit fingerprints; they agree exactly where the full signatures do
    assert score == round(similarity(signature(near, CONFIG), signature(near2, CONFIG)), 4)
    assert near_duplicate_pairs(table, MinHashConfig(threshold=0.99)) == []
    assert near_duplicate_pairs(SignatureTable(CONFIG.permutations), CONFIG) == []


def test_a_table_read_back_from_its_bytes_finds_the_same_pairs():
    near, near2, far = long_trajectory(), long_trajectory(3), make_trajectory(2, task_description="other")
    table = SignatureTable(CONFIG.permutations)
    for record in (near, far, near2, near):
        table.add(record.trajectory_id, signature(record, CONFIG))
    copy = SignatureTable.from_bytes(table.to_bytes())
    assert len(copy) == 3  # distinct ids
    loose = MinHashConfig(threshold=0.5)
    assert near_duplicate_pairs(copy, loose) == near_duplicate_pairs(table, loose) != []


def test_signature_estimates_jaccard():
    from trajforge.curation.dedup import shingle_hashes

    a, b = long_trajectory(), long_trajectory(3)
    sa, sb = set(shingle_hashes(a, 8).tolist()), set(shingle_hashes(b, 8).tolist())
    true = len(sa & sb) / len(sa | sb)
    assert abs(similarity(signature(a, CONFIG), signature(b, CONFIG)) - true) < 0.15


def test_signature_is_deterministic():
    assert np.array_equal(signature(long_trajectory(), CONFIG), signature(long_trajectory(), MinHashConfig()))


def test_bucket_keeps_the_smallest_id():
    sig = signature(long_trajectory(), CONFIG)
    pairs = list(duplicates_in_bucket([("c", sig), ("a", sig), ("b", signature(make_trajectory(2), CONFIG))], 0.85))
    assert pairs == [("c", "a", 1.0)]


def test_bands_must_divide_permutations():
    with pytest.raises(ValueError):
        MinHashConfig(permutations=64, bands=10)
    with pytest.raises(ValueError):
        MinHashConfig(permutations=48, bands=16)
