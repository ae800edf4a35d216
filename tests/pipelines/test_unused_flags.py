"""A flag that the stage or mode being run does not use is an error naming it (exit 2), before anything runs: every
train stage refuses another stage's flags (tests/pipelines/commands/test_train.py), and each command refuses the
flags its mode leaves unused: a model-free policy's temperature, the explorer's steps for another policy, a key
variable for a model that is no endpoint, the episodes' flags of a check without episodes, a corpus's flags with
benchmark lines, the tiny model's size with a real --init."""

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app

runner = CliRunner()
WM = "http://127.0.0.1:9/v1=wm"
UNUSED = [  # (the command as run, the flag it does not use there, and its value)
    (["collect", "--suite", "terminal"], "--temperature", "0.5"),
    (["collect", "--suite", "terminal", "--policy", "scripted"], "--explorer-steps", "3"),
    (["collect", "--suite", "terminal", "--agent", "runs/agent"], "--agent-key-env", "K"),
    (["collect", "--suite", "terminal", "--world-model", "runs/wm"], "--world-model-key-env", "K"),
    (["collect", "--suite", "terminal"], "--simulate-judge-key-env", "K"),
    (["collect", "--suite", "terminal"], "--simulate-max-tokens", "64"),
    (["collect", "--suite", "terminal"], "--control", "errors"),
    (["agent-eval", "--policy", "scripted"], "--temperature", "0.5"),
    (["agent-eval", "--policy", "scripted"], "--explorer-steps", "3"),
    (["agent-eval", "--agent", "runs/agent"], "--agent-key-env", "K"),
    (["sim-check", "--world-model", WM, "--no-episodes"], "--suite", "terminal"),
    (["sim-check", "--world-model", WM, "--no-episodes"], "--control", "errors"),
    (["sim-check", "--world-model", WM, "--agent", "runs/agent"], "--policy", "explorer"),
    (["sim-check", "--world-model", "runs/wm"], "--world-model-key-env", "K"),
    (["eval", "--world-model", WM, "--agentworldbench", "bench.jsonl"], "--export", "out"),
    (["eval", "--world-model", WM, "--agentworldbench", "bench.jsonl"], "--corpus", "data/corpus"),
    (["eval", "--world-model", WM], "--untrained", None),
    (["train", "cpt", "--init", "smollm2"], "--hidden-size", "64"),
    (["train", "agent-rl", "--init", "runs/agent"], "--min-exact-match", "0.5"),
    (["train", "agent-rl", "--init", "runs/agent", "--world-model", "runs/wm"], "--world-model-key-env", "K"),
    (["train", "agent-rl", "--init", "runs/agent"], "--audit-every", "2"),
]


@pytest.mark.parametrize("command, flag, value", UNUSED, ids=[f"{' '.join(c[:2])} {f}" for c, f, _ in UNUSED])
def test_a_flag_the_mode_does_not_use_is_refused_naming_it(command, flag, value, tmp_path):
    output = ["--report", str(tmp_path / "out.json")] if command[0] == "eval" else ["-o", str(tmp_path / "out")]
    result = runner.invoke(app, [*command, *output, flag, *([value] if value is not None else [])])
    assert result.exit_code == 2, result.output
    assert flag in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.json").exists()
