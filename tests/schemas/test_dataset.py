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
