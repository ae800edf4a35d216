"""The reward other trainers call equals our GSPO reward: verl's compute_score on the verl rows, the TRL wrapper on the
grpo rows, and `row_reward` as `train rl` calls it on the RL shard rows, on the same answers. Malformed samples
score 0 with a reason; the judge comes from the environment or a config file."""

import json
import logging

import datasets
import pandas as pd
import pytest
from typer.testing import CliRunner

from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.factory import JudgeSpec
from trajforge.pipelines.cli import app
from trajforge.schemas.dataset import load_shards, stage_rows
from trajforge.schemas.names import RL_DIR
from trajforge.training import rl
from trajforge.training.configs import RLConfig
from trajforge.training.prompts import candidate
from trajforge.training.reward_functions import (
    CONFIG_ENV,
    compute_score,
    current_judge,
    judge_spec_from_env,
    score_sample,
    trl_reward,
)

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_judge_settings(monkeypatch):
    for var in ("TRAJFORGE_JUDGE", "TRAJFORGE_JUDGE_URL", "TRAJFORGE_JUDGE_MODEL", CONFIG_ENV):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def exports(tmp_path_factory, rl_dir):
    out = tmp_path_factory.mktemp("reward-exports")
    for fmt in ("verl", "trl"):
        assert runner.invoke(app, ["export", str(rl_dir), "--format", fmt, "-o", str(out / fmt)]).exit_code == 0
    verl = pd.read_parquet(out / "verl" / "train.parquet").to_dict("records")
    grpo = datasets.load_dataset("parquet", data_files=str(out / "trl" / "grpo" / "train.parquet"))["train"]
    return verl, grpo


def answers(reference: str) -> list[str]:
    """Right, half right, wrong, untagged, and right with reasoning that must not count."""
    lines = reference.splitlines(keepends=True)
    return [
        candidate("It lists the folder.", reference),
        candidate("Some of it.", "".join(lines[: len(lines) // 2]) or "x"),
        candidate("A guess.", "command not found"),
        reference,  # no <predicted_observation> block: the format gate pays nothing
        f"<think>{reference}</think>\n<predicted_observation>\nok\n</predicted_observation>",
    ]


def test_compute_score_and_the_trl_wrapper_equal_the_gspo_reward(rl_dir, exports):
    verl, grpo = exports
    rows = stage_rows(load_shards(rl_dir, RL_DIR), "rl")
    judge = RLConfig().judge.build()  # what `train rl` scores with by default
    seen = set()
    for row, verl_row, trl_row in zip(rows, verl, grpo, strict=True):
        texts = answers(row["reference"])
        ours = [rl.row_reward(judge, row, t).total for t in texts]  # the call rl.collect_rollouts makes
        from_verl = [
            compute_score(verl_row["data_source"], t, verl_row["reward_model"]["ground_truth"], verl_row["extra_info"])
            for t in texts
        ]
        columns = {k: [trl_row[k]] * len(texts) for k in ("reference", "verifier", "domain", "trajectory_id")}
        conversational = [[{"role": "assistant", "content": t}] for t in texts]
        from_trl = trl_reward(conversational, prompts=[trl_row["prompt"]] * len(texts), **columns)
        assert from_verl == ours and from_trl == ours
        assert trl_reward(texts, prompts=[trl_row["prompt"]] * len(texts), **columns) == ours  # standard format
        seen.update(ours)
    assert 25.0 in seen and 0.0 in seen and any(0 < r < 25 for r in seen)  # the samples tell rewards apart


MESSAGES = [{"role": "system", "content": "S"}, {"role": "user", "content": "ls"}]
GOOD = candidate("r", "a.txt\n")


@pytest.mark.parametrize(
    "sample, reason",
    [
        ({"answer": None}, "answer: expected text"),
        ({"messages": "ls"}, "messages: expected a list of chat messages"),
        ({"messages": [{"role": "user"}]}, "messages[0]: expected"),
        ({"messages": [*MESSAGES, {"role": "assistant", "content": "x"}]}, "ending"),
        ({"messages": []}, "messages: expected [system,] user"),
        ({"verifier": "{not json"}, "verifier: not JSON"),
        ({"verifier": 3}, "verifier: expected a JSON string or null"),
        ({"verifier": json.dumps({"kind": "aria"})}, "could not score: KeyError('anchors')"),
        ({"reference": None}, "reference: expected text"),
    ],
)
def test_a_malformed_sample_scores_zero_with_a_reason(sample, reason, caplog):
    values = {"domain": "terminal", "messages": MESSAGES, "reference": "a.txt\n", "verifier": None, "answer": GOOD}
    assert score_sample(**values, judge=EmbeddedJudge()).score > 0  # the well-formed sample earns something
    values.update(sample)
    with caplog.at_level(logging.WARNING, logger="trajforge.reward"):
        scored = score_sample(**values, judge=EmbeddedJudge())
    reason = reason if reason != "ending" else "(the action to answer)"
    assert scored.score == 0.0 and scored.reward is None and reason in scored.reason
    assert reason in caplog.text


def test_the_trainer_entry_points_never_raise_on_malformed_input(caplog):
    with caplog.at_level(logging.WARNING, logger="trajforge.reward"):
        assert compute_score("trajforge/terminal", GOOD, "a.txt\n", None) == 0.0
        assert compute_score("trajforge/terminal", GOOD, "a.txt\n", {"domain": "terminal"}) == 0.0
        assert trl_reward([GOOD, GOOD], prompts=[MESSAGES, MESSAGES], reference=["a.txt\n"]) == [0.0, 0.0]
        assert trl_reward([[{"role": "assistant", "content": 7}]], prompts=[MESSAGES], reference=["a"],
                          verifier=[None], domain=["terminal"]) == [0.0]  # fmt: skip
    assert "extra_info: expected a mapping" in caplog.text and "answer: expected text" in caplog.text
    assert "columns ['reference', 'verifier', 'domain'] missing" in caplog.text


def test_the_judge_comes_from_the_environment_or_a_config_file(tmp_path, monkeypatch):
    assert judge_spec_from_env({}).kind == "embedded"  # as train's default
    spec = judge_spec_from_env(
        {"TRAJFORGE_JUDGE": "endpoint", "TRAJFORGE_JUDGE_URL": "http://127.0.0.1:9/v1",
         "TRAJFORGE_JUDGE_MODEL": "judge", "TRAJFORGE_JUDGE_TIMEOUT": "7"}
    )  # fmt: skip
    assert (spec.kind, spec.url, spec.model, spec.timeout) == ("endpoint", "http://127.0.0.1:9/v1", "judge", 7.0)
    with pytest.raises(ValueError, match="needs --judge-url and --judge-model"):
        judge_spec_from_env({"TRAJFORGE_JUDGE": "endpoint"})
    config = tmp_path / "judge.json"
    config.write_text(json.dumps({"kind": "endpoint", "url": "http://127.0.0.1:9/v1", "model": "m", "retries": 1}))
    assert judge_spec_from_env({CONFIG_ENV: str(config)}).retries == 1
    config.write_text(json.dumps({"judge": "embedded"}))
    with pytest.raises(ValueError, match=f"judge config {config}: unknown keys \\['judge'\\]"):
        judge_spec_from_env({CONFIG_ENV: str(config)})
    with pytest.raises(ValueError, match="not a readable JSON file"):
        judge_spec_from_env({}, config=str(tmp_path / "missing.json"))


def test_an_endpoint_judge_named_by_the_environment_scores_as_train_does(served_model, monkeypatch):
    url, model = served_model  # a real OpenAI-compatible server (the tiny checkpoint) as the LLM judge
    for var, value in (("TRAJFORGE_JUDGE", "endpoint"), ("TRAJFORGE_JUDGE_URL", url), ("TRAJFORGE_JUDGE_MODEL", model)):
        monkeypatch.setenv(var, value)
    # what `train rl --judge endpoint --judge-url URL --judge-model MODEL` builds
    judge = RLConfig(judge=JudgeSpec("endpoint", url, model)).judge.build()
    reference = "a.txt\n"
    row = {"domain": "terminal", "messages": MESSAGES, "reference": reference, "verifier": None}
    answer = candidate("r", reference)
    ours = rl.row_reward(judge, row, answer)
    assert current_judge().name == judge.name and current_judge() is current_judge()  # built once per process
    scored = score_sample("terminal", MESSAGES, reference, None, answer)
    assert scored.score == ours.total
    assert scored.reason == (f"judge failure: {ours.judge_failure}" if ours.judge_failure else None)
    info = {"domain": "terminal", "messages": MESSAGES, "verifier": None}
    assert compute_score("trajforge/terminal", answer, reference, info) == ours.total
