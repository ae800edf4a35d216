"""Simulated tasks start from their real starting state: a terminal task's files without any sandbox, a task with
setup commands (and an MCP task's seed data) recorded once from the real environment and cached; a real collected
episode's initial_state is the same text, so the world model is trained on the prompt it simulates from."""

import dataclasses
import json

import pytest

from tests.builders import ScriptedWorldModel, simulation_of, tagged
from trajforge.collectors.collection import plan_suites
from trajforge.collectors.config import CollectConfig
from trajforge.collectors.environments import Settings
from trajforge.collectors.episode import run_episode
from trajforge.collectors.grounding import cache_folder, ground_suites
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.sandboxes.simulated import SimulatedEnvironment
from trajforge.schemas.check_turn import exit_code_command, recorded_check_turns

SIMULATE = "http://127.0.0.1:9/v1=world-model"


def echo_world_model() -> ScriptedWorldModel:
    return ScriptedWorldModel(tagged("exit code: 0"))


def no_sandbox() -> Settings:
    raise AssertionError("no real environment should be needed")


def grounded(suite: str, task: str, make_settings=no_sandbox, log=print):
    (planned,) = plan_suites(CollectConfig(suites=(suite,), tasks=(task,), simulation=simulation_of(SIMULATE)))
    (suite,) = ground_suites([planned], make_settings, log)
    return suite


def test_a_simulated_count_lines_tells_the_world_model_that_notes_txt_exists_and_what_it_holds():
    suite = grounded("terminal", "count-lines")
    (task,) = suite.tasks
    world_model = echo_world_model()
    trajectory = run_episode(SimulatedEnvironment(world_model), ScriptedPolicy(), task, "k", "run", seed=0)
    system = world_model.asked[0][0]["content"]
    assert "--- notes.txt (30 bytes)\nmilk\neggs\nbread\ncoffee\napples\n" in system
    assert world_model.asked[0][-1]["content"] == "wc -l notes.txt"
    assert trajectory.initial_state.startswith("The working directory /work holds these files:\n--- notes.txt")


@pytest.fixture
def state_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJFORGE_CACHE", str(tmp_path))
    return cache_folder()


def test_what_setup_leaves_is_recorded_once_from_a_real_sandbox_and_matches_a_real_episode(
    state_cache, docker_client, sandbox_image, terminal
):
    settings = Settings(run_id="pytest", image=sandbox_image, command_timeout=5, docker_client=docker_client)
    logged = []
    suite = grounded("terminal", "largest-file", lambda: settings, logged.append)
    (task,) = suite.tasks
    rendered = SimulatedEnvironment(echo_world_model()).reset(task).content
    assert "--- a.bin (10 bytes of binary data)" in rendered and "--- b.bin (100 bytes of binary data)" in rendered
    assert (
        len(list(state_cache.glob("*.json"))) == 1
        and "terminal: recording the starting state of 1 task(s)" in logged[0]
    )
    # Cached: the second time needs no sandbox.
    assert grounded("terminal", "largest-file").tasks[0].config["starting_state"] == task.config["starting_state"]
    # The real episode of the same task records the same initial_state: training and simulation share the prompt.
    real_task = dataclasses.replace(task, config={})
    real = run_episode(terminal, ScriptedPolicy(), real_task, "k", "run", seed=0)
    assert real.initial_state == rendered and real.outcome.status == "success"
    env = suite.environment.build(Settings())  # as collect builds it, its endpoint's answers stood in for
    env.world_model = echo_world_model()
    simulated = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    assert simulated.action_space == real.action_space and simulated.initial_state == real.initial_state
    assert "real environment" in real.outcome.verifier
    # The check that decided it is recorded as the turn the simulator asks (schemas/check_turn.py).
    (action, observation), *_ = recorded_check_turns(real.model_dump())
    assert action == {"kind": "shell", "content": exit_code_command(task.check.command)}
    assert observation.endswith("exit code: 0\n")


def test_an_mcp_tasks_tools_and_seed_data_are_recorded_from_its_real_server(state_cache, mcp_isolation, monkeypatch):
    from trajforge.collectors.environments import mcp

    monkeypatch.setattr(mcp, "isolation_of", lambda settings: mcp_isolation)
    settings = Settings(run_id="pytest", command_timeout=10)
    (task,) = grounded("mcp-kvstore-gen", "kvstore-a24993c1403c", lambda: settings).tasks
    server = mcp.MCPSpec(server="kvstore").build(settings)
    try:
        real = run_episode(server, ScriptedPolicy(), task, "k", "run", seed=0)
    finally:
        server.close()
    [(action, observation)] = recorded_check_turns(real.model_dump())  # the check's tool call and the server's answer
    assert real.outcome.status == "success" and action["name"] == task.check.tool
    assert json.loads(action["content"]) == task.check.arguments
    assert task.check.contains in json.loads(observation)["content"][0]["text"]  # the result as a step records one
    env = SimulatedEnvironment(echo_world_model())
    initial = env.reset(task).content
    assert initial == real.initial_state  # the seed data a real episode records, the same words
    assert initial.startswith("Connected to MCP server kvstore") and {"get", "set"} <= {t["name"] for t in env.tools}
    setup = initial.split("Before the first turn, the task's setup made these calls:\n", 1)[1]
    assert setup.startswith("set ") and "rust-oyster/tier" in setup.split("\n")[0]
    assert setup.split("\n")[1].startswith('-> {"content": ')  # each call with the result the server gave
    # The simulated check is the task's tool call, asked after the episode, with the server's tools offered.
    trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    assert trajectory.outcome.status == "failure"  # the echo's answer is no tool result holding '"deleted": true'
    assert json.loads(trajectory.outcome.verifier)["decided_by"].endswith("a simulated tool call: its predicted result")
    assert json.loads(trajectory.action_space) == env.tools


def test_a_web_tasks_start_page_is_recorded_from_a_real_browser(state_cache):
    (task,) = grounded("web-shop", "buy-mug", lambda: Settings(command_timeout=10)).tasks
    page = SimulatedEnvironment(echo_world_model()).reset(task).content
    assert page.startswith("URL: http://shop.local/") and "[ref=e20]" in page  # the ref its first action clicks


def test_a_long_recording_says_how_far_it_is(state_cache, monkeypatch):
    from trajforge.collectors import grounding
    from trajforge.sandboxes.starting_state import StartingState

    monkeypatch.setattr(grounding, "PROGRESS_EVERY", 2)
    monkeypatch.setattr(grounding, "record_starting_state", lambda task, real, settings: StartingState(observation="x"))
    (planned,) = plan_suites(CollectConfig(suites=("terminal",), simulation=simulation_of(SIMULATE)))
    tasks = list(planned.tasks[:7])
    logged = []
    grounding._record(
        "terminal", tasks, grounding.parse_environment({"kind": "terminal"}), Settings(), logged.append, 2
    )
    assert [line.split(" starting")[0] for line in logged[1:]] == ["terminal: 2/7", "terminal: 4/7", "terminal: 6/7"]
    assert all("/s, ~" in line and line.endswith("s left)") for line in logged[1:])
    assert len(list(state_cache.glob("*.json"))) == 7  # every state recorded, none lost to the reporting
