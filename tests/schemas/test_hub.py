"""Hugging Face Hub datasets as inputs (schemas/hub.py): huggingface_hub resolves hf://datasets/OWNER/NAME through
its cache. No Hub is reachable here, so the dataset is placed in the cache as huggingface_hub lays it out
(refs/REVISION -> snapshots/COMMIT/, files linked to blobs/) and read offline (HF_HUB_OFFLINE), the real library
resolving the name, the revision and the folder."""

import json

import pytest
from typer.testing import CliRunner

from tests.builders import EXAMPLES
from trajforge.pipelines.cli import app
from trajforge.schemas.sources import read_records

runner = CliRunner()


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An offline Hugging Face cache holding dataset acme/chats at commit c0ffee (branch main and tag v1): its chat
    rows in data/train-00000-of-00001.parquet, a README and a JSON file that is not data."""
    import datasets
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    repo = cache / "datasets--acme--chats"
    conversations = [json.loads(line) for line in (EXAMPLES / "chat.jsonl").read_text().splitlines()]
    blobs, snapshot = repo / "blobs", repo / "snapshots" / "c0ffee"
    blobs.mkdir(parents=True)
    datasets.Dataset.from_dict({"conversation": [json.dumps(c) for c in conversations]}).to_parquet(blobs / "b1")
    (blobs / "b2").write_text("# acme/chats\n")
    (blobs / "b3").write_text("{}")
    for name, blob in (("data/train-00000-of-00001.parquet", "b1"), ("README.md", "b2"), ("meta/info.json", "b3")):
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).symlink_to(blobs / blob)
    (repo / "refs").mkdir()
    for ref in ("main", "v1"):
        (repo / "refs" / ref).write_text("c0ffee")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return conversations


def imported(tmp_path, source: str, name: str):
    """`import -f chat SOURCE --column conversation` into tmp_path/name: its result and the ids it wrote."""
    out = tmp_path / name
    result = runner.invoke(app, ["import", "-f", "chat", source, "--column", "conversation", "-o", str(out)])
    return result, [] if result.exit_code else sorted(r.record.trajectory_id for r in read_records([out]))


def test_a_hub_dataset_by_name_revision_and_folder_imports_its_parquet_rows_from_the_cache(tmp_path, hub_cache):
    result, by_name = imported(tmp_path, "hf://datasets/acme/chats", "raw")
    assert result.exit_code == 0, result.output
    assert "read 3, written 3, rejected 0" in result.output  # the README and the JSON file are not rows
    local = runner.invoke(app, ["import", "-f", "chat", str(EXAMPLES / "chat.jsonl"), "-o", str(tmp_path / "lines")])
    assert local.exit_code == 0
    assert by_name == sorted(r.record.trajectory_id for r in read_records([tmp_path / "lines"]))
    for source in ("hf://datasets/acme/chats@v1", "hf://datasets/acme/chats/data"):
        result, ids = imported(tmp_path, source, source.rsplit("/", 1)[1].replace("@", "-"))
        assert result.exit_code == 0 and ids == by_name, result.output
    corpus = tmp_path / "corpus"
    built = runner.invoke(app, ["build-corpus", "-i", "hf://datasets/acme/chats", "--input-format", "chat",
                                "--column", "conversation", "-o", str(corpus), "--min-turns", "0"])  # fmt: skip
    assert built.exit_code == 0, built.output
    assert json.loads((corpus / "_manifest.json").read_text())["counts"]["read"] == 3


def test_a_hub_dataset_the_cache_lacks_offline_and_a_malformed_name_are_usage_errors(tmp_path, hub_cache):
    result, _ = imported(tmp_path, "hf://datasets/acme/other", "a")
    assert result.exit_code == 2 and "not in the Hugging Face cache, and the Hub cannot be reached" in result.output
    result, _ = imported(tmp_path, "hf://datasets/acme/chats/meta", "b")  # a folder with no parquet or arrow file
    assert result.exit_code == 2 and "no .parquet/.arrow files" in result.output, result.output
    result, _ = imported(tmp_path, "hf://datasets/acme", "c")
    assert result.exit_code == 2 and "a Hub dataset is named hf://datasets/OWNER/NAME" in result.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
