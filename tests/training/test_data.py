import json

import pytest

from tests.corpus_fixtures import TRAJECTORIES
from trajforge.training.data import held_out_draw, load_cpt, shard_paths, split_by_trajectory


def test_loads_every_shard_memory_mapped(corpus_dir, corpus):
    paths = shard_paths(corpus_dir)
    assert len(paths) > 1 and paths == sorted(paths)
    assert all(p.parent == corpus_dir / "cpt" for p in paths)
    manifest = json.loads((corpus_dir / "_manifest.json").read_text())
    assert len(corpus) == manifest["counts"]["written"] == TRAJECTORIES
    assert {f["filename"] for f in corpus.cache_files} == {str(p) for p in paths}  # read in place, not copied
    assert {"turns", "masking_policy"} <= set(corpus.column_names)
    assert {"loss_spans", "in_loss", "category"} <= set(corpus[0]["turns"][0])


def test_sources_folder_or_files(corpus_dir):
    paths = shard_paths(corpus_dir)
    assert shard_paths(corpus_dir / "cpt") == paths
    assert shard_paths(paths[0]) == [paths[0]]
    assert len(load_cpt(paths[:2])) == len(load_cpt(paths[0])) + len(load_cpt(paths[1]))
    with pytest.raises(FileNotFoundError):
        shard_paths(corpus_dir / "missing")
    with pytest.raises(FileNotFoundError):
        shard_paths([])


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


def test_a_truncated_shard_is_named(corpus_dir, tmp_path):
    from trajforge.schemas.shards import ShardError

    shard = sorted((corpus_dir / "cpt").glob("*.arrow"))[0]
    broken = tmp_path / shard.name
    broken.write_bytes(shard.read_bytes()[:92])
    with pytest.raises(ShardError, match=str(broken)):
        load_cpt([broken])
