"""`trajforge train` end to end: CPT with and without masking, the held-out loss, SFT from the CPT checkpoint."""

import json

from typer.testing import CliRunner

from trajforge.pipelines.cli import app

runner = CliRunner()
SMALL = [
    "--context-length",
    "128",
    "--batch-size",
    "2",
    "--hidden-size",
    "32",
    "--layers",
    "2",
    "--lr",
    "5e-3",
    "--warmup-steps",
    "2",
]


def test_cpt_masked_and_unmasked_then_sft(tmp_path, corpus_dir):
    untrained = runner.invoke(app, ["train", "--data", str(corpus_dir), "--eval", *SMALL])
    assert untrained.exit_code == 0, untrained.output
    before = float(untrained.output.split("next-observation loss ")[1].split()[0])
    for name, extra in (("masked", []), ("nomask", ["--no-mask"])):
        done = runner.invoke(
            app,
            [
                "train",
                "--data",
                str(corpus_dir),
                "-o",
                str(tmp_path / name),
                "--max-steps",
                "8",
                "--eval-every",
                "8",
                *extra,
                *SMALL,
            ],
        )
        assert done.exit_code == 0, done.output
    metrics = {
        name: json.loads((tmp_path / name / "metrics.jsonl").read_text().splitlines()[-1])
        for name in ("masked", "nomask")
    }
    assert all(m["eval_loss"] < before for m in metrics.values())
    data = {name: json.loads((tmp_path / name / "data.json").read_text()) for name in ("masked", "nomask")}
    assert data["masked"]["loss_tokens"] < data["nomask"]["loss_tokens"]  # masking drops some observation tokens
    again = runner.invoke(
        app, ["train", "--data", str(corpus_dir), "-o", str(tmp_path / "masked"), "--max-steps", "8", *SMALL]
    )
    assert "nothing to do" in again.output

    sft = tmp_path / "sft-data"
    curated = runner.invoke(
        app, ["curate-sft", "-i", str(corpus_dir), "-o", str(sft), "--per-trajectory", "1", "--workers", "1"]
    )
    assert curated.exit_code == 0, curated.output
    tuned = runner.invoke(
        app,
        [
            "train",
            "--stage",
            "sft",
            "--data",
            str(sft),
            "--init",
            str(tmp_path / "masked" / "checkpoint-8"),
            "-o",
            str(tmp_path / "sft"),
            "--max-steps",
            "2",
            *SMALL,
        ],
    )
    assert tuned.exit_code == 0, tuned.output
    info = json.loads((tmp_path / "sft" / "checkpoint-2" / "checkpoint.json").read_text())
    assert info["stage"] == "sft" and info["init"].endswith("checkpoint-8")


def test_bad_stage_and_bad_data_are_usage_errors(tmp_path):
    assert runner.invoke(app, ["train", "--stage", "dpo"]).exit_code == 2
    missing = runner.invoke(app, ["train", "--data", str(tmp_path)])
    assert missing.exit_code == 2 and "shards in" in missing.output
