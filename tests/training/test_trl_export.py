"""`trajforge export --format trl`, read by the real TRL: its own dataset preparation turns our pre-tokenized rows into
exactly our labels (the per-turn loss masks of CPT reach it), and a few SFTTrainer and GRPOTrainer steps of the tiny
model run on CPU from our files, GRPO with our reward."""

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
import trl
from datasets import load_dataset
from typer.testing import CliRunner

from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.extraction import CLOSE, OPEN
from trajforge.pipelines.cli import app
from trajforge.schemas.dataset import load_cpt, load_shards, stage_rows
from trajforge.schemas.names import RL_DIR
from trajforge.training.labels import IGNORE_INDEX
from trajforge.training.model import load_model
from trajforge.training.rewards import row_reward
from trajforge.training.sequences import tokenized_documents
from trajforge.training.tokenizer import load_tokenizer

CONTEXT = 128


@pytest.fixture(scope="module")
def exported(tmp_path_factory, corpus_dir, sft_dir, rl_dir, tiny_checkpoint):
    out = tmp_path_factory.mktemp("trl")
    args = [str(corpus_dir), str(sft_dir), str(rl_dir), "--format", "trl", "--tokenizer", str(tiny_checkpoint)]
    result = CliRunner().invoke(app, ["export", *args, "-o", str(out), "--context-length", str(CONTEXT)])
    assert result.exit_code == 0, result.output
    return out


def dataset(folder, name: str):
    return load_dataset("parquet", data_files={"train": str(folder / name / "train.parquet")})["train"]


def test_cpt_rows_carry_the_tokens_and_loss_masks_cpt_trains_on(exported, corpus_dir, tiny_checkpoint):
    tokenizer = load_tokenizer(tiny_checkpoint)
    ours = tokenized_documents(stage_rows(load_cpt(corpus_dir), "cpt"), tokenizer, CONTEXT, "masked", "split")
    table = pq.read_table(exported / "cpt-tokenized" / "train.parquet")
    assert table.column_names == ["input_ids", "assistant_masks"]
    assert table["input_ids"].to_pylist() == [d.input_ids.tolist() for d in ours]
    assert table["assistant_masks"].to_pylist() == [(d.labels != IGNORE_INDEX).astype(int).tolist() for d in ours]
    masks = np.concatenate([np.asarray(m) for m in table["assistant_masks"].to_pylist()])
    assert 0 < masks.mean() < 1  # the masks drop some tokens (actions, system prompt, masked turns), keep others
    # Masked CPT keeps fewer tokens than the same rows with every observation in the loss
    unmasked = tokenized_documents(stage_rows(load_cpt(corpus_dir), "cpt"), tokenizer, CONTEXT, "all", "split")
    assert masks.sum() < sum(d.loss_tokens for d in unmasked)


def _sft_config(output):
    return trl.SFTConfig(
        output_dir=str(output), max_steps=2, per_device_train_batch_size=2, learning_rate=1e-3, max_length=CONTEXT,
        report_to="none", use_cpu=True, bf16=False, save_strategy="no", logging_steps=1,
    )  # fmt: skip


def _changed(before: dict, model) -> bool:
    return any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


@pytest.mark.parametrize("name", ["cpt-tokenized", "sft-tokenized", "sft-prompt-completion", "sft-messages"])
def test_sft_trainer_trains_the_tiny_model_from_each_export(exported, tiny_checkpoint, tmp_path, name):
    tokenizer = load_tokenizer(exported / "tokenizer")
    model = load_model(tiny_checkpoint)  # a trajforge checkpoint is a Hugging Face model folder
    before = {k: v.clone() for k, v in model.state_dict().items()}
    data = dataset(exported, name)
    trainer = trl.SFTTrainer(model=model, args=_sft_config(tmp_path), train_dataset=data, processing_class=tokenizer)
    prepared = trainer.train_dataset
    if name.endswith("tokenized"):  # TRL's own preparation gives our labels: -100 exactly where our mask is 0
        expected = [[t if m else -100 for t, m in zip(r["input_ids"], r["assistant_masks"], strict=True)] for r in data]
        assert sorted(prepared["labels"]) == sorted(expected)
    if name == "sft-prompt-completion":  # the completion alone is in the loss
        assert all(-100 in labels and set(labels) != {-100} for labels in prepared["labels"])
    result = trainer.train()
    assert trainer.state.global_step == 2 and np.isfinite(result.training_loss) and _changed(before, model)


def test_grpo_trainer_runs_gspo_steps_with_our_reward(exported, tiny_checkpoint, rl_dir, tmp_path):
    from trajforge.training.reward_functions import trl_reward

    tokenizer = load_tokenizer(exported / "tokenizer")
    model = load_model(tiny_checkpoint)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rows = {(r["trajectory_id"], r["turn_index"]): r for r in stage_rows(load_shards(rl_dir, RL_DIR), "rl")}
    calls = []

    def trajforge_reward(completions, **columns):
        calls.append((completions, columns, trl_reward(completions, **columns)))
        return calls[-1][2]

    # The tiny policy never writes the answer tags, so every reward would be 0 (no advantage, nothing learned):
    # nudging the tag tokens up makes some samples tagged and rewards differ within a group.
    bias = {(tokenizer.convert_tokens_to_ids(OPEN),): 4.0, (tokenizer.convert_tokens_to_ids(CLOSE),): 2.0}
    config = trl.GRPOConfig(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=12, learning_rate=1e-2, importance_sampling_level="sequence", loss_type="grpo",
        generation_kwargs={"sequence_bias": bias}, report_to="none", use_cpu=True, bf16=False, save_strategy="no",
        logging_steps=1,
    )  # fmt: skip
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=trajforge_reward, args=config, train_dataset=dataset(exported, "grpo"),
        processing_class=tokenizer,
    )  # fmt: skip
    trainer.train()
    assert trainer.state.global_step == 2 and calls
    judge = EmbeddedJudge()  # what reward_functions builds with no judge settings, as train rl does
    for completions, columns, rewards in calls:
        keys = zip(columns["trajectory_id"], columns["turn_index"], strict=True)
        texts = [c[0]["content"] for c in completions]
        assert rewards == [row_reward(judge, rows[key], text).total for key, text in zip(keys, texts, strict=True)]
    assert len({r for _, _, rewards in calls for r in rewards}) > 1  # rewards differ: there is a signal to learn
    logged = [h for h in trainer.state.log_history if "rewards/trajforge_reward/mean" in h]
    assert len(logged) == 2 and _changed(before, model)
