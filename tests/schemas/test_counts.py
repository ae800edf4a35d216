"""A manifest's count names: built with `key`, read back by group, and the reconciliation over them."""

from trajforge.schemas import counts

COUNTS = {
    counts.READ: 10,
    counts.WRITTEN: 5,
    counts.REJECTED: 1,
    counts.key(counts.DEDUPLICATED, "exact"): 2,
    counts.key(counts.FILTERED, "min_turns"): 1,
    counts.key(counts.FILTERED, counts.KNOWLEDGE_SHARE): 1,
    counts.key(counts.SPLIT, "train"): 4,
    counts.key(counts.SPLIT, "held_out"): 1,
    counts.KNOWLEDGE_DOCUMENTS: 2,
    counts.key(counts.CHARS, counts.KNOWLEDGE): 300,
    counts.key(counts.CHARS, counts.TRAJECTORIES): 900,
}


def test_groups_are_read_back_by_their_kinds_in_order():
    assert counts.kinds(COUNTS, counts.SPLIT) == {"train": 4, "held_out": 1}
    assert counts.kinds(COUNTS, counts.TASKS) == {}
    assert list(counts.groups(COUNTS)) == ["deduplicated", "filtered", "split", "knowledge", "chars"]
    assert counts.total(COUNTS, counts.FILTERED) == 2 and counts.total(COUNTS, counts.WRITTEN) == 5


def test_read_is_written_plus_rejected_deduplicated_and_filtered():
    assert counts.reconciles(COUNTS)
    assert not counts.reconciles({**COUNTS, counts.key(counts.FILTERED, "another"): 1})
    assert not counts.reconciles({**COUNTS, counts.READ: 11})


def test_the_knowledge_share_of_the_characters():
    assert counts.knowledge_share(COUNTS) == 0.25
    assert counts.knowledge_share({}) == 0.0
