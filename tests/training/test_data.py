import pytest

from trajforge.training.data import held_out_draw, split_by_trajectory


def test_split_by_trajectory(corpus):
    train, held_out = split_by_trajectory(corpus, 0.25, seed=3)
    train_ids, held_ids = set(train["trajectory_id"]), set(held_out["trajectory_id"])
    assert train_ids and held_ids and not train_ids & held_ids
    assert train_ids | held_ids == set(corpus["trajectory_id"])
    assert held_ids == {i for i in corpus["trajectory_id"] if held_out_draw(i, seed=3) < 0.25}


def test_split_is_stable_under_reordering_and_subsets(corpus):
    held = set(split_by_trajectory(corpus, 0.3).held_out["trajectory_id"])
    reordered = corpus.select(list(reversed(range(len(corpus)))))
    assert set(split_by_trajectory(reordered, 0.3).held_out["trajectory_id"]) == held
    half = corpus.select(range(len(corpus) // 2))
    assert set(split_by_trajectory(half, 0.3).held_out["trajectory_id"]) == held & set(half["trajectory_id"])
    assert set(split_by_trajectory(corpus, 0.3, seed=1).held_out["trajectory_id"]) != held


def test_split_edges(corpus):
    assert len(split_by_trajectory(corpus, 0.0).held_out) == 0
    assert len(split_by_trajectory(corpus, 1.0).train) == 0
    with pytest.raises(ValueError):
        split_by_trajectory(corpus, 1.5)
