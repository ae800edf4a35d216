import json

import pytest

from tests.corpus_fixtures import TRAJECTORIES
from trajforge.schemas.dataset import load_cpt, shard_paths


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


def test_a_truncated_shard_is_named(corpus_dir, tmp_path):
    from trajforge.schemas.shards import ShardError

    shard = sorted((corpus_dir / "cpt").glob("*.arrow"))[0]
    broken = tmp_path / shard.name
    broken.write_bytes(shard.read_bytes()[:92])
    with pytest.raises(ShardError, match=str(broken)):
        load_cpt([broken])


def test_the_training_split_and_the_two_held_out_parts_partition_the_corpus(corpus):
    from trajforge.schemas.dataset import held_out_rows, part_rows, row_splits, stage_rows, training_split_rows

    training, held_out, validation = training_split_rows(corpus), held_out_rows(corpus), part_rows(corpus, "validation")
    assert len(training) + len(held_out) + len(validation) == len(corpus) and len(training) and len(validation)
    assert set(row_splits(training)).isdisjoint({"held_out", "validation"}) and set(row_splits(held_out)) == {
        "held_out"
    }
    assert set(row_splits(validation)) == {"validation"} and len(part_rows(corpus, "test")) == len(held_out)
    training_ids = set(training["trajectory_id"])
    assert not training_ids & set(held_out["trajectory_id"]) and not training_ids & set(validation["trajectory_id"])
    for stage in ("cpt", "sft", "rl"):  # no training stage reads a validation or a test row
        assert set(row_splits(stage_rows(corpus, stage))).isdisjoint({"held_out", "validation"})
