"""Before agent RL in a world model: its single-step figures on held-out corpus turns, printed with a warning for
each below its threshold; and the control distribution an RL run in simulation hands its episodes. The world model
is a loopback endpoint (the HTTP client, the corpus, the baselines and the embedded judge are real)."""

import json
from dataclasses import replace

import pytest

from tests.builders import agent_rl_of, simulation_of
from tests.chat_server import chat_server
from trajforge.agents import rl
from trajforge.agents.config import AgentRLConfig, agent_rl_config
from trajforge.agents.sim_check import Thresholds
from trajforge.agents.sim_preflight import world_model_figures
from trajforge.collectors.tasks import load_suite
from trajforge.sandboxes.control import ControlError


def silent_world_model():
    """Answers every action with nothing: it never predicts a real observation that has text."""
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "<predicted_observation>"
                                                "</predicted_observation>"}}]}).encode()  # fmt: skip
    return chat_server(lambda request: (200, body))


def test_the_figures_are_printed_and_those_below_the_thresholds_warned(tmp_path, corpus_dir):
    logged, warned = [], []
    with silent_world_model() as (url, requests):
        result = world_model_figures(simulation_of(f"{url}=wm"), str(corpus_dir), Thresholds(), logged.append,
                                     warned.append, limit=4, report=tmp_path / "check.json")  # fmt: skip
    step = result["single_step"]["all"]
    assert set(step) == {"wm", "copy previous (model-free)", "retrieval (model-free)"} and requests
    assert step["wm"]["exact_match"] < 0.8
    assert logged[0].startswith("world model wm: exact match ") and len(logged) == 3  # the model, then 2 baselines
    assert any(w.startswith("warning: the world model's single-step exact match") for w in warned)
    assert result["below_thresholds"] and json.loads((tmp_path / "check.json").read_text()) == result
    with silent_world_model() as (url, _):
        lenient = world_model_figures(simulation_of(f"{url}=wm"), str(corpus_dir), Thresholds(exact_match=0.0), print,
                                      print, limit=4)  # fmt: skip
    assert not any(line.startswith("single-step exact match") for line in lenient["below_thresholds"])
    # below the baselines on the same turns it is said whatever the thresholds, with the paired difference
    assert any(line.startswith("exact match is not above the baseline") for line in lenient["below_thresholds"])


def test_without_a_corpus_nothing_is_measured_and_a_note_says_so():
    logged = []
    simulation = simulation_of("http://127.0.0.1:1/v1=wm")
    unmeasured = world_model_figures(simulation, None, Thresholds(), logged.append, print)
    assert unmeasured is None
    assert "no --sim-check-corpus given" in logged[0]


def _suite(tmp_path) -> str:
    path = tmp_path / "toy.yaml"
    path.write_text("suite: toy\ndomain: terminal\ntasks:\n  - id: t0\n    instruction: Write 1.\n"
                    "    check: test -f answer.txt\n")  # fmt: skip
    return str(path)


def test_agent_rl_in_a_world_model_carries_the_control_distribution_to_every_suite(tmp_path):
    suites = [load_suite(_suite(tmp_path))]
    config = agent_rl_of(simulation=simulation_of("http://127.0.0.1:1/v1=wm", control="errors"),
                            output=str(tmp_path / "run"))  # fmt: skip
    simulated = rl.simulated_suites(suites, config, "test", print)
    assert simulated[0].environment.kind == "simulated"
    assert "intermittent_error" in simulated[0].control["faults"]
    spec = rl.plan_groups([(simulated[0], simulated[0].tasks[0])], 2, 0, tag="s")[0][0]
    assert spec.control == simulated[0].control  # what each episode samples its spec from


def test_bad_control_is_refused_before_anything_runs(tmp_path):
    suites = [load_suite(_suite(tmp_path))]
    with pytest.raises(ValueError, match="--control: steers a world model; give --world-model"):
        agent_rl_config(control="errors")
    bad = tmp_path / "control.yaml"
    bad.write_text("faults:\n  teleport: {rate: 0.5}\n")
    config = agent_rl_of(simulation=simulation_of("http://127.0.0.1:1/v1=wm", control=str(bad)))
    with pytest.raises(ControlError, match=r"control.yaml: faults.teleport: unknown fault kind"):
        rl.simulated_suites(suites, config, "test", print)


@pytest.mark.slow
def test_an_rl_run_in_a_checkpoint_world_model_prints_its_figures_before_it_trains(
    tmp_path, tiny_agent, tiny_checkpoint, corpus_dir, scripted_actor, monkeypatch
):
    from types import SimpleNamespace

    from trajforge.schemas.splits import SplitConfig

    actor = scripted_actor(["```bash\ntouch answer.txt\n```", "Done."])
    monkeypatch.setattr(rl, "Actor", SimpleNamespace(load=lambda folder, **settings: actor))
    config = agent_rl_of(
        suites=(_suite(tmp_path),), output=str(tmp_path / "run"), init=str(tiny_agent),
        gspo=replace(AgentRLConfig.gspo, group_size=2, max_new_tokens=16), tasks_per_step=1, max_turns=2,
        max_steps=1, save_every=1, split=SplitConfig(held_out=0.0, validation=0.0),
        simulation=simulation_of(str(tiny_checkpoint), prompt="plain", control="errors", max_tokens=8),
        sim_check_corpus=str(corpus_dir),
        min_exact_match=1.0,
    )  # fmt: skip
    logged, warned = [], []
    last = rl.run_agent_rl(config, log=logged.append, warn=warned.append)
    assert last["episodes"] == 2
    assert any(line.startswith("world model ") and "exact match" in line for line in logged)
    assert any("single-step exact match" in line and "below 100%" in line for line in warned)
    check = json.loads((tmp_path / "run" / "world-model-check.json").read_text())
    assert check["thresholds"]["exact_match"] == 1.0 and check["below_thresholds"]
    assert check["sampling"]["single_step"]["max_tokens"] == 8  # asked as the simulator asks: --simulate-max-tokens
