"""A world model as the environment: a real served checkpoint answers the actions of a scripted episode."""

import json

from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.endpoints import Endpoint
from trajforge.sandboxes.base import Task
from trajforge.sandboxes.faults import FaultInjector
from trajforge.sandboxes.simulated import SimulatedEnvironment
from trajforge.schemas.records import Action


def test_episode_in_simulation_is_a_normal_raw_trajectory(served_model):
    url, model = served_model
    env = SimulatedEnvironment(Endpoint(url, model), instruction="Paginate every list after two items.", max_tokens=12)
    task = Task(
        id="sim",
        instruction="List the files.",
        actions=(Action(kind="shell", content="ls"), Action(kind="shell", content="cat a.txt")),
        config={"initial_state": "/work holds a.txt"},
    )
    trajectory = run_episode(env, ScriptedPolicy(), task, "sim/sim#0", "run", seed=0)
    assert trajectory.source.kind == "simulated" and trajectory.environment.name == f"simulated:{model}"
    assert trajectory.simulation_instruction == "Paginate every list after two items."
    assert trajectory.initial_state == "/work holds a.txt" and len(trajectory.turns) == 2
    assert all(json.loads(t.observation.metadata)["simulated"] for t in trajectory.turns)
    # The world model sees the whole history with each action.
    assert [m["role"] for m in env.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert env.messages[3]["content"] == "cat a.txt" and "List the files." in env.messages[0]["content"]


def test_faults_wrap_a_simulated_environment_too(served_model):
    url, model = served_model
    env = FaultInjector(SimulatedEnvironment(Endpoint(url, model), max_tokens=4), {"intermittent_error": 1.0})
    task = Task(id="sim", instruction="x", actions=(Action(kind="shell", content="ls"),))
    trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    assert trajectory.source.kind == "simulated" and trajectory.turns[0].fault == "intermittent_error"
