"""Every command that takes a model takes the same forms (a folder, smollm2, URL=MODEL) by the same parser, and
refuses anything else before it starts, with a line that says which forms it takes."""

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app

runner = CliRunner()
# (command, its model flag): each command then gets the path it would write (-o, or eval's --report) last
MODEL_FLAGS = [
    (["collect", "--suite", "terminal"], "--agent"),
    (["collect", "--suite", "terminal"], "--world-model"),
    (["agent-eval", "--suite", "terminal"], "--agent"),
    (["sim-check", "--no-episodes", "--report"], "--world-model"),
    (["sim-check", "--world-model", "http://127.0.0.1:9/v1=wm"], "--agent"),
    (["eval", "--report"], "--world-model"),
]
NOT_A_MODEL = ["http://127.0.0.1:9/v1", "127.0.0.1:9=wm"]


@pytest.mark.parametrize("command, flag", MODEL_FLAGS, ids=[f"{c[0]} {f}" for c, f in MODEL_FLAGS])
@pytest.mark.parametrize("text", NOT_A_MODEL)
def test_a_model_in_no_form_is_refused_naming_the_forms(command, flag, text, tmp_path):
    output = [] if command[-1] == "--report" else ["-o"]
    result = runner.invoke(app, [*command, *output, str(tmp_path / "out"), flag, text])
    assert result.exit_code == 2, result.output
    assert f"{flag} {text}" in result.output and "URL=MODEL" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("stage", ["cpt", "sft", "rl", "agent-sft", "agent-rl"])
def test_training_takes_weights_and_refuses_an_endpoint_as_its_start(stage, tmp_path):
    result = runner.invoke(app, ["train", stage, "--init", "http://127.0.0.1:9/v1=wm", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert "--init http://127.0.0.1:9/v1=wm: an endpoint cannot be trained" in result.output
    assert "smollm2" in result.output and not (tmp_path / "run").exists()


def test_agent_rl_takes_its_world_model_in_every_form_by_the_same_parser(tmp_path):
    result = runner.invoke(app, ["train", "agent-rl", "--init", "x", "--world-model", "http://127.0.0.1:9/v1",
                                 "-o", str(tmp_path / "run")])  # fmt: skip
    assert result.exit_code == 2 and "--world-model http://127.0.0.1:9/v1" in result.output
    assert "URL=MODEL" in result.output and not (tmp_path / "run").exists()
