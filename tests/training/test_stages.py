"""`trajforge train` end to end: CPT with and without masking, the held-out loss, SFT from the CPT checkpoint, agent
SFT on successful trajectories, and --role."""

import json

import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from tests.corpus_fixtures import WORDS
from trajforge.pipelines.cli import app
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.splits import split_of
from trajforge.training.launch import stage_config
from trajforge.training.stages import stage_data

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
SIZE = ("--hidden-size", "--layers")  # the tiny model's: a run from --init takes its checkpoint's (refused with it)
FROM_INIT = [part for pair in zip(SMALL[::2], SMALL[1::2], strict=True) if pair[0] not in SIZE for part in pair]


def test_cpt_masked_and_unmasked_then_sft(tmp_path, corpus_dir):
    untrained = runner.invoke(app, ["train", "cpt", "--data", str(corpus_dir), "--eval-only", *SMALL])
    assert untrained.exit_code == 0, untrained.output
    before = float(untrained.output.split("next-observation loss ")[1].split()[0])
    for name, extra in (("masked", []), ("nomask", ["--no-mask"])):
        done = runner.invoke(
            app,
            [
                "train",
                "cpt",
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
        app, ["train", "cpt", "--data", str(corpus_dir), "-o", str(tmp_path / "masked"), "--max-steps", "8", *SMALL]
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
            "sft",
            "--data",
            str(sft),
            "--init",
            str(tmp_path / "masked" / "checkpoint-8"),
            "-o",
            str(tmp_path / "sft"),
            "--max-steps",
            "2",
            *FROM_INIT,
        ],
    )
    assert tuned.exit_code == 0, tuned.output
    info = json.loads((tmp_path / "sft" / "checkpoint-2" / "checkpoint.json").read_text())
    assert info["stage"] == "sft" and info["init"].endswith("checkpoint-8")


def test_bad_stage_and_bad_data_are_usage_errors(tmp_path):
    assert runner.invoke(app, ["train", "dpo"]).exit_code == 2
    missing = runner.invoke(app, ["train", "cpt", "--data", str(tmp_path)])
    assert missing.exit_code == 2 and "shards in" in missing.output


def agent_episode(k: int, status: str = "success"):
    """A terminal episode of its own task: write a word into a file, then read it back."""
    word, name = WORDS[k % len(WORDS)], f"note{k % 5}.txt"
    turns = [
        {"index": 0, "action": {"kind": "shell", "content": f"echo {word} > {name}"}, "observation": {"content": ""}},
        {"index": 1, "action": {"kind": "shell", "content": f"cat {name}"}, "observation": {"content": f"{word}\n"}},
    ]
    source = {"kind": "collected", "by": "scripted", "run_id": "r1", "origin": f"terminal/write-{k}#0"}
    task = f"Write {word} into {name}."
    return make_trajectory(turns=turns, task_description=task, source=source, outcome={"status": status})


def test_agent_sft_learns_the_actions_of_successful_trajectories_only(tmp_path):
    episodes = [agent_episode(k, "success" if k % 4 else "failure") for k in range(32)]
    write_segments(episodes, tmp_path / "raw" / "run-1", per_file=10)
    training = [e.outcome.status for e in episodes if split_of(e.model_dump()) not in ("held_out", "validation")]
    args = ["train", "agent-sft", "--data", str(tmp_path / "raw"), "--max-steps", "30", *SMALL]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "agent"), "--eval-every", "0"])
    assert done.exit_code == 0, done.output
    losses = [json.loads(line)["loss"] for line in (tmp_path / "agent" / "metrics.jsonl").read_text().splitlines()]
    assert len(losses) == 30 and sum(losses[-5:]) / 5 < 0.5 * sum(losses[:5]) / 5, losses
    data = json.loads((tmp_path / "agent" / "data.json").read_text())
    counts = data["trajectories"]
    assert counts == {
        "read": 32,
        "invalid": 0,
        "held_out": 32 - len(training),
        "kept": training.count("success"),
        "dropped_by_outcome": {"failure": training.count("failure")},
    }
    assert data["train_rows"] + data["held_out_rows"] == counts["kept"]  # validation: a share of the kept ones
    assert f"{counts['kept']} successful kept of 32 read" in " ".join(done.output.split())
    info = json.loads((tmp_path / "agent" / "checkpoint-30" / "checkpoint.json").read_text())
    assert info["stage"] == "agent-sft" and info["role"] == "agent" and info["trajectories"] == counts

    both = runner.invoke(app, [*args, "-o", str(tmp_path / "both"), "--role", "both", "--max-steps", "1"])
    assert both.exit_code == 0, both.output
    assert json.loads((tmp_path / "both" / "data.json").read_text())["loss_tokens"] > data["loss_tokens"]
    world = runner.invoke(app, [*args, "-o", str(tmp_path / "world"), "--role", "world"])
    assert world.exit_code == 2 and "agent-sft trains the role agent or both" in world.output


def test_cpt_teaches_both_roles_from_one_trajectory(tmp_path, corpus_dir):
    args = ["train", "cpt", "--data", str(corpus_dir), "--max-steps", "1", "--eval-every", "0", *SMALL]
    for role in ("world", "both"):
        done = runner.invoke(app, [*args, "-o", str(tmp_path / role), "--role", role])
        assert done.exit_code == 0, done.output
    world, both = (json.loads((tmp_path / r / "data.json").read_text()) for r in ("world", "both"))
    assert both["train_rows"] == world["train_rows"] and both["loss_tokens"] > world["loss_tokens"]
    sft = runner.invoke(app, ["train", "sft", "--data", str(corpus_dir), "--role", "agent"], terminal_width=200)
    assert sft.exit_code == 2 and "No such option: --role" in sft.output  # SFT rows are world-model queries
    with pytest.raises(ValueError, match="sft trains the role world"):
        stage_data(stage_config("sft", data=str(corpus_dir), role="agent"))
