"""`trajforge export --format trl|verl`: which rows go where, the manifest, the tokenizer beside the data, and the
bad inputs (a tokenizer that cannot be loaded, a shard kind the format does not read) as one-line usage errors."""

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.schemas.dataset import held_out_rows, load_cpt, stage_rows
from trajforge.training import trainer_export
from trajforge.training.tokenizer import load_tokenizer, save_tokenizer
from trajforge.training.trainer_export import TrainerExportResult, export_tokenizer

runner = CliRunner()


def export(*args: str):
    return runner.invoke(app, ["export", *map(str, args)])


@pytest.fixture(scope="module")
def trl_dir(tmp_path_factory, corpus_dir, sft_dir, rl_dir, tiny_checkpoint):
    out = tmp_path_factory.mktemp("trl-export")
    result = export(corpus_dir, sft_dir, rl_dir, "--format", "trl", "--tokenizer", tiny_checkpoint, "-o", out,
                    "--context-length", "128")  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_every_dataset_holds_its_stage_rows_and_held_out_tasks_only_in_test(trl_dir, corpus_dir):
    manifest = json.loads((trl_dir / "_manifest.json").read_text())
    assert manifest["stage"] == "export-trl" and manifest["config"]["context_length"] == 128
    expected = {"cpt-tokenized/train.parquet", "cpt-tokenized/test.parquet", "sft-messages/train.parquet",
                "sft-prompt-completion/train.parquet", "sft-tokenized/train.parquet", "grpo/train.parquet"}  # fmt: skip
    assert set(manifest["outputs"]) == expected  # the SFT and RL shards hold no held-out rows: no test files
    for name in expected:
        assert pq.read_metadata(trl_dir / name).num_rows == manifest["counts"][f"rows:{name}"] > 0
    corpus = load_cpt(corpus_dir)
    trained, held = stage_rows(corpus, "cpt"), held_out_rows(corpus)
    assert len(held) and manifest["counts"]["read"] >= len(corpus)
    # Every trained-on trajectory shows up in train (one or more chunks each), none of the held-out ones
    train_ids = {tuple(ids) for ids in pq.read_table(trl_dir / "cpt-tokenized/train.parquet")["input_ids"].to_pylist()}
    test_ids = {tuple(ids) for ids in pq.read_table(trl_dir / "cpt-tokenized/test.parquet")["input_ids"].to_pylist()}
    assert not train_ids & test_ids and len(trained) > len(held)


def test_the_tokenizer_used_is_saved_beside_the_data(trl_dir, tiny_checkpoint):
    saved, original = load_tokenizer(trl_dir / "tokenizer"), load_tokenizer(tiny_checkpoint)
    assert saved.get_vocab() == original.get_vocab() and saved.chat_template == original.chat_template


def test_a_rerun_with_other_shards_removes_what_it_no_longer_writes(tmp_path, corpus_dir, rl_dir, tiny_checkpoint):
    assert export(corpus_dir, "--format", "trl", "--tokenizer", tiny_checkpoint, "-o", tmp_path).exit_code == 0
    assert (tmp_path / "cpt-tokenized" / "train.parquet").exists()
    assert export(rl_dir, "--format", "trl", "-o", tmp_path).exit_code == 0
    assert not (tmp_path / "cpt-tokenized" / "train.parquet").exists() and (tmp_path / "grpo/train.parquet").exists()


def test_sft_without_a_tokenizer_writes_messages_and_says_what_it_skipped(tmp_path, sft_dir):
    result = export(sft_dir, "--format", "trl", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    assert "sft-tokenized/ not written: give --tokenizer" in result.output
    assert (tmp_path / "sft-messages/train.parquet").exists() and not (tmp_path / "sft-tokenized").exists()


@pytest.mark.parametrize("make", ["missing", "empty", "not-a-tokenizer"])
def test_a_tokenizer_that_cannot_be_loaded_is_a_usage_error_naming_it(tmp_path, corpus_dir, make):
    bad = tmp_path / "tok"
    if make != "missing":
        bad.mkdir()
    if make == "not-a-tokenizer":
        (bad / "tokenizer.json").write_text("{not json")
        (bad / "tokenizer_config.json").write_text("{}")
    result = export(corpus_dir, "--format", "trl", "--tokenizer", bad, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert f"--tokenizer {bad}" in result.output.replace("\n", "")
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_run_folder_gives_its_tokenizer(tmp_path, tokenizer):
    save_tokenizer(tokenizer, tmp_path / "run" / "tokenizer")
    loaded = export_tokenizer(str(tmp_path / "run"), TrainerExportResult())
    assert loaded.get_vocab() == tokenizer.get_vocab()


def test_wrong_inputs_are_usage_errors_that_say_why(tmp_path, corpus_dir, rl_dir, tiny_checkpoint):
    no_tokenizer = export(corpus_dir, "--format", "trl", "-o", tmp_path / "a")
    assert no_tokenizer.exit_code == 2 and "CPT shards needs --tokenizer" in no_tokenizer.output
    verl_cpt = export(corpus_dir, "--format", "verl", "-o", tmp_path / "b")
    assert verl_cpt.exit_code == 2 and "a cpt shard; --format verl reads rl (prepare-rl) shards" in verl_cpt.output
    tokenizer_elsewhere = export(rl_dir, "--format", "shards", "--tokenizer", tiny_checkpoint, "-o", tmp_path / "c")
    assert tokenizer_elsewhere.exit_code == 2
    assert "--tokenizer is for --format trl, not shards" in tokenizer_elsewhere.output
    (tmp_path / "file").write_text("")
    onto_a_file = export(rl_dir, "--format", "verl", "-o", tmp_path / "file")
    assert onto_a_file.exit_code == 2 and "writes a folder of parquet files" in onto_a_file.output


@pytest.mark.slow
@pytest.mark.timeout(900)  # the GGUF conversion, once
def test_smollm2_names_the_real_models_tokenizer(tmp_path, corpus_dir, in_smollm2_folder):
    result = export(corpus_dir, "--format", "trl", "--tokenizer", "smollm2", "-o", "out", "--context-length", "256")
    assert result.exit_code == 0, result.output
    saved = load_tokenizer(tmp_path / "out" / "tokenizer")
    assert len(saved) == 49152 and "<|im_start|>" in saved.chat_template  # SmolLM2's own, nothing added
    rows = pq.read_table(tmp_path / "out" / "cpt-tokenized" / "train.parquet").to_pylist()
    assert "<|im_start|>" in saved.decode(rows[0]["input_ids"]) and any(1 in r["assistant_masks"] for r in rows)


def test_rows_are_written_a_batch_at_a_time_with_the_same_result(tmp_path, corpus_dir, rl_dir, trl_dir,
                                                                 tiny_checkpoint, monkeypatch):  # fmt: skip
    monkeypatch.setattr(trainer_export, "EXPORT_BATCH", 5)
    result = export(corpus_dir, rl_dir, "--format", "trl", "--tokenizer", tiny_checkpoint, "-o", tmp_path / "trl",
                    "--context-length", "128")  # fmt: skip
    assert result.exit_code == 0, result.output
    for name in ("cpt-tokenized/train.parquet", "cpt-tokenized/test.parquet", "grpo/train.parquet"):
        assert pq.read_table(tmp_path / "trl" / name).equals(pq.read_table(trl_dir / name))
    assert pq.ParquetFile(tmp_path / "trl" / "grpo/train.parquet").num_row_groups > 1
    assert not list(tmp_path.rglob("*.tmp"))
    assert export(rl_dir, "--format", "verl", "-o", tmp_path / "verl").exit_code == 0
    info = pq.read_table(tmp_path / "verl" / "train.parquet")["extra_info"].to_pylist()
    assert [i["index"] for i in info] == list(range(len(info))) and len(info) > 5  # one numbering across batches
