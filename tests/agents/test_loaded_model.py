"""One checkpoint, several roles, one copy in the process: sim-check asks the same folder for single turns (its chat
model) and for the episodes it simulates (the in-process world model), and an agent of that folder acts on the
same weights; only a role that trains them (agent RL) holds its own."""

from trajforge.agents import checkpoint_policy, world_model
from trajforge.agents.checkpoint_policy import Actor, shared_actor
from trajforge.agents.sim_check import world_model_of
from trajforge.agents.world_model import world_model_actor
from trajforge.endpoints.model_ref import parse_model
from trajforge.training import loaded_model


def test_a_checkpoint_in_three_roles_is_loaded_once_and_a_trained_one_apart(tiny_checkpoint, monkeypatch):
    loads = []
    real_load = loaded_model.load
    monkeypatch.setattr(loaded_model, "load", lambda folder: loads.append(folder) or real_load(folder))
    for module, cache in ((loaded_model, "_SHARED"), (world_model, "_LOADED"), (checkpoint_policy, "_ACTORS")):
        monkeypatch.setattr(module, cache, {})  # nothing loaded by an earlier test
    folder = str(tiny_checkpoint)
    with world_model_of(parse_model(folder, "--world-model")) as world:  # sim-check's single turns
        episodes = world_model_actor(folder, 0.0)  # the episodes it simulates
        agent = shared_actor(folder, 0.7)  # an agent of the same folder
        assert world.chat.local.model is episodes.model is agent.model
    assert len(loads) == 1
    trained = Actor.load(folder, trained=True)
    assert trained.model is not agent.model and len(loads) == 2
