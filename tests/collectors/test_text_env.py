"""The text environment RL frameworks wrap: reset(task) -> observation, step(text) -> (observation, reward, done,
info), over a simulated environment and a real Docker terminal alike; and the verl-style wrapper that
docs/simulation.md shows, run as the page prints it."""

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import ScriptedWorldModel, simulation_of, tagged
from trajforge.collectors.collection import plan_suites
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.grounding import ground_suites
from trajforge.collectors.text_env import TextEnvironment
from trajforge.sandboxes.simulated import SimulatedEnvironment

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "simulation.md"
WC = "```bash\nwc -l < notes.txt > answer.txt\n```"


def count_lines():
    config = CollectConfig(
        suites=("terminal",), tasks=("count-lines",), simulation=simulation_of("http://127.0.0.1:9/v1=wm")
    )
    (suite,) = ground_suites(plan_suites(config), lambda: None, print)
    return suite.tasks[0]


def test_a_simulated_episode_through_text_rewarded_by_the_check_in_the_world_model():
    world_model = ScriptedWorldModel(tagged(""), tagged("5"))  # the command's output, then `cat answer.txt`
    env = TextEnvironment(SimulatedEnvironment(world_model))
    first = env.reset(count_lines())
    assert "--- notes.txt (30 bytes)\nmilk" in first
    assert env.step(WC)[1:3] == (0.0, False)
    assert world_model.asked[0][-1]["content"] == "wc -l < notes.txt > answer.txt"
    observation, reward, done, info = env.step("The answer is in answer.txt.")
    assert (reward, done, info["status"]) == (1.0, True, "success")
    assert info["check"]["predicted"] == "5" and "world model" in info["check"]["decided_by"]


def test_unreadable_text_and_the_turn_limit_end_the_episode_with_no_reward():
    env = TextEnvironment(SimulatedEnvironment(ScriptedWorldModel(tagged("5"))), max_turns=1)
    env.reset(count_lines())
    _, reward, done, info = env.step("```bash\nwc -l notes.txt")  # a block never closed
    assert (reward, done, info["status"]) == (0.0, True, "agent_error") and "unparseable" in info["error"]
    env.reset(count_lines())
    assert env.step(WC)[2] is False
    assert env.step(WC)[1:3] == (0.0, True) and env.done


def test_a_world_model_that_gives_no_observation_for_the_check_ends_the_episode_as_infra_error():
    env = TextEnvironment(SimulatedEnvironment(ScriptedWorldModel(tagged("5"), "<think>the check")))
    env.reset(count_lines())
    env.step(WC)
    _, reward, done, info = env.step("Done.")
    assert (reward, done, info["status"]) == (0.0, True, "infra_error") and "no parseable observation" in info["error"]


def test_the_same_api_over_a_real_docker_terminal(terminal):
    env = TextEnvironment(terminal)
    task = count_lines()
    assert env.reset(task) == SimulatedEnvironment(ScriptedWorldModel("")).reset(task).content  # the same start
    assert env.step(WC)[:3] == ("", 0.0, False)
    _, reward, done, info = env.step("Done.")
    assert (reward, done, info["status"]) == (1.0, True, "success") and "real environment" in info["check"][
        "decided_by"
    ]


def test_the_wrapper_the_docs_show_runs_an_episode():
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    (code,) = [block for block in blocks if "class TrajforgeInteraction" in block]
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - the page's own example, run as printed
    world_model = ScriptedWorldModel(tagged(""), tagged("exit code: 1"))
    task = count_lines()
    interaction = namespace["TrajforgeInteraction"](
        lambda: TextEnvironment(SimulatedEnvironment(world_model)), {task.id: task}
    )

    async def episode():
        await interaction.start_interaction("sample-0", task.id)
        first = interaction.episodes["sample-0"]["first"]
        done, _, _, _ = await interaction.generate_response("sample-0", [{"role": "assistant", "content": WC}])
        assert not done and "notes.txt" in first
        done, _, reward, info = await interaction.generate_response(
            "sample-0", [{"role": "assistant", "content": "ok"}]
        )
        score = await interaction.calculate_score("sample-0")
        await interaction.finalize_interaction("sample-0")
        return done, reward, score, info

    done, reward, score, info = asyncio.run(episode())
    assert done and reward == score == 0.0 and info["status"] == "failure"  # the predicted exit code was 1
    assert interaction.episodes == {}


# A fresh interpreter that imports collectors only: the checkpoint world model's module (trajforge.agents) is
# imported by CHECKPOINT_WORLD_MODELS when the simulated environment asks for it, not by anything imported first.
OVER_A_CHECKPOINT = """
import json, sys
from trajforge.collectors.text_env import TextEnvironment

imported_before = "trajforge.agents" in sys.modules
env, tasks = TextEnvironment.simulated("terminal", sys.argv[1], prompt="plain", max_tokens=8, log=lambda text: None)
first = env.reset(next(t for t in tasks if t.id == "count-lines"))
observation, reward, done, info = env.step(sys.argv[2])
print(json.dumps({"imported_before": imported_before, "first": first, "done": done, "status": info["status"],
                  "world_model": "trajforge.agents.world_model" in sys.modules}))
"""


@pytest.mark.slow
def test_a_fresh_interpreter_steps_a_text_environment_over_a_checkpoint_world_model(tiny_checkpoint):
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(
        [sys.executable, "-c", OVER_A_CHECKPOINT, str(tiny_checkpoint), WC],
        capture_output=True, text=True, env=environment, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.splitlines()[-1])
    assert not result["imported_before"] and result["world_model"]
    assert "--- notes.txt (30 bytes)" in result["first"]
    assert result["done"] is False and result["status"] == "running"  # the world model answered the step
