"""The one task split, followed end to end: a corpus from two suites, curate-sft, prepare-rl, and the batches each
training stage (CPT, SFT, RL) actually trains on. No held-out task may reach any of them; eval reads only them."""

import dataclasses

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from tests.builders import make_trajectory
from trajforge.evaluation.factory import JudgeSpec
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.pipelines.cli import app
from trajforge.pipelines.curate_sft.pipeline import curate_sft
from trajforge.pipelines.prepare_rl.pipeline import prepare_rl
from trajforge.schemas.dataset import held_out_rows, load_cpt
from trajforge.schemas.shards import read_shard_table, write_shard
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.splits import SplitConfig
from trajforge.training.distributed import World

pytestmark = pytest.mark.slow
SUITES = {"terminal": "terminal", "mcp-workspace": "mcp"}
TASKS = 8


def marker(suite: str, task: int) -> str:
    return f"mark{suite[:3]}{task:02d}z"


def episode(suite: str, task: int, policy: str):
    word = marker(suite, task)
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": f"cat {policy}-{i}.txt"},
            "observation": {"content": f"{word} says {policy} line {i}: " + " ".join([word] * (3 + i))},
        }
        for i in range(3)
    ]
    return make_trajectory(
        domain=SUITES[suite],
        source={"kind": "collected", "by": policy, "run_id": policy, "origin": f"{suite}/task-{task}#0"},
        agent={"name": policy},
        turns=turns,
        task_description=f"Task {task} of {suite}.",
    )


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    root = tmp_path_factory.mktemp("split-flow")
    records = [episode(s, k, p) for s in SUITES for k in range(TASKS) for p in ("scripted", "explorer")]
    write_segments(records, root / "raw", per_file=8)
    config = BuildConfig(near_dedup=False, split=SplitConfig(held_out=0.3, sft_rl_share=0.5))
    manifest = build_corpus([str(root / "raw")], root / "corpus", config, workers=1)
    rows = load_cpt(root / "corpus").to_list()
    by_split: dict[str, set[str]] = {}
    for row in rows:
        by_split.setdefault(row["split"], set()).add(row["task"])
    return root, manifest, rows, by_split


def markers_of(tasks: set[str]) -> set[str]:
    out = set()
    for task in tasks:
        suite, name = task.removeprefix("task:").split("/")
        out.add(marker(suite, int(name.removeprefix("task-"))))
    return out


def test_the_split_is_by_task_and_recorded(pools):
    _, manifest, rows, by_split = pools
    assert set(by_split) == {"held_out", "validation", "cpt", "sft_rl"}
    for part in ("held_out", "validation"):  # neither held-out part shares a task with a training pool
        assert not (by_split[part] & by_split["cpt"]) and not (by_split[part] & by_split["sft_rl"])
    assert not by_split["held_out"] & by_split["validation"]
    assert not (by_split["cpt"] & by_split["sft_rl"])  # disjoint pools: SFT/RL tasks never feed CPT
    assert {t.split("/")[0] for t in by_split["held_out"]} == {"task:terminal", "task:mcp-workspace"}
    for row in rows:  # both policies' episodes of a task land on one side
        assert row["task"] == f"task:{row['source']['origin'].split('#')[0]}"
    counts = manifest.counts
    assert sum(counts[f"split.{s}"] for s in by_split) == counts["written"] == len(rows) == 2 * len(SUITES) * TASKS
    assert {s: counts[f"tasks.{s}"] for s in by_split} == {s: len(t) for s, t in by_split.items()}
    assert manifest.config["split"] == {"held_out": 0.3, "sft_rl_share": 0.5, "seed": 0, "validation": 0.1}


def test_no_held_out_task_reaches_any_stage(pools, tmp_path, tiny_checkpoint, monkeypatch):
    root, _, _, by_split = pools
    # both held-out parts: the test part (eval's) and the validation part (what choices read)
    held, cpt_only = by_split["held_out"] | by_split["validation"], by_split["cpt"]
    corpus = root / "corpus"

    from trajforge.pipelines.curate_sft.config import CurateConfig
    from trajforge.training.generators import GeneratorSpec

    sft = curate_sft(corpus, tmp_path / "sft", CurateConfig(GeneratorSpec("rationalization"), JudgeSpec()), workers=1)
    sft_rows = [r for f in sft.outputs for r in read_shard_table(tmp_path / "sft" / f).to_pylist()]
    assert sft_rows and {r["task"] for r in sft_rows} <= by_split["sft_rl"]
    assert {r["split"] for r in sft_rows} == {"sft_rl"}
    assert (
        sft.counts["rows_skipped.held_out"] and sft.counts["rows_skipped.validation"] and sft.counts["rows_skipped.cpt"]
    )

    rl = prepare_rl(corpus, tmp_path / "rl", workers=1)
    rl_rows = [r for f in rl.outputs for r in read_shard_table(tmp_path / "rl" / f).to_pylist()]
    assert rl_rows and {r["task"] for r in rl_rows} <= by_split["sft_rl"] and rl.reconciles()
    assert (
        rl.counts["filtered.split_held_out"]
        and rl.counts["filtered.split_validation"]
        and rl.counts["filtered.split_cpt"]
    )

    # What each training stage hands to the loop, decoded: the held-out tasks' words never appear in it.
    from trajforge.training import rl as rl_module
    from trajforge.training import stages as stages_module
    from trajforge.training.configs import GSPOConfig
    from trajforge.training.rl import RLConfig, run_rl
    from trajforge.training.stages import StageConfig, run_stage

    batches = {}

    def capture(model, train_sequences, *args, **kwargs):
        batches[len(batches)] = train_sequences
        return {"step": 0}

    monkeypatch.setattr(stages_module, "train", capture)
    for stage, data in (("cpt", corpus), ("sft", tmp_path / "sft")):
        run_stage(
            StageConfig(stage=stage, data=str(data), output=str(tmp_path / stage), init=str(tiny_checkpoint)),
            World(),
        )
    from trajforge.training.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(tiny_checkpoint)
    cpt_text, sft_text = (" ".join(tokenizer.batch_decode(batches[i].input_ids)) for i in (0, 1))
    assert all(m in cpt_text for m in markers_of(cpt_only))  # the check can fail: what CPT may read is there
    assert not any(m in cpt_text for m in markers_of(held | by_split["sft_rl"]))
    assert not any(m in sft_text for m in markers_of(held | cpt_only))

    prompts = []
    real_rollout = rl_module.rollout

    def recording_rollout(model, tokenizer, chat, row, config, seed, window):
        prompts.append(row["task"])
        return real_rollout(model, tokenizer, chat, row, config, seed, window)

    monkeypatch.setattr(rl_module, "rollout", recording_rollout)
    rl_config = RLConfig(
        data=str(tmp_path / "rl"), output=str(tmp_path / "rl-run"), init=str(tiny_checkpoint), max_steps=2
    )
    run_rl(dataclasses.replace(rl_config, gspo=GSPOConfig(group_size=2, max_new_tokens=4), prompts_per_step=3))
    assert prompts and set(prompts) <= by_split["sft_rl"]

    # eval reads the test part's tasks and nothing else.
    assert {r["task"] for r in held_out_rows(load_cpt(corpus))} == by_split["held_out"]


def test_rl_on_held_out_rows_only_stops_with_a_clear_error(pools, tmp_path, tiny_checkpoint):
    root, _, _, _ = pools
    prepare_rl(root / "corpus", tmp_path / "rl", workers=1)
    folder = tmp_path / "rl" / "rl"
    table = pa.concat_tables([read_shard_table(p) for p in sorted(folder.glob("*.arrow"))])
    for path in folder.glob("*.arrow"):
        path.unlink()
    held = table.set_column(table.schema.get_field_index("split"), "split", pa.array(["held_out"] * table.num_rows))
    write_shard(held, folder, "rl")
    result = CliRunner().invoke(
        app,
        ["train", "rl", "--data", str(tmp_path / "rl"), "-o", str(tmp_path / "run")]
        + ["--init", str(tiny_checkpoint), "--max-steps", "1"],
    )
    assert result.exit_code == 2, result.output
    assert "no rl training rows" in result.output and "held_out" in result.output
    assert not (tmp_path / "run").exists()
