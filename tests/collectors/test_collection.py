"""Planning a collection run from its typed config: simulated suites keep their kind's action space, policies
come from their registry, the manifest's config and the run id are derived as before."""

import pytest

from tests.builders import simulation_of
from trajforge.collectors.collection import CollectConfig, collect, default_run_id, plan_suites, run_config
from trajforge.collectors.environments.simulated import SimulatedSpec
from trajforge.collectors.policies import POLICIES
from trajforge.collectors.simulation import simulation
from trajforge.collectors.tasks import SuiteError

SIMULATE = "http://127.0.0.1:9/v1=world-model"


def test_a_simulated_suite_offers_the_action_space_of_the_kind_it_stands_for():
    config = CollectConfig(suites=("terminal", "mcp-kvstore", "web-shop"), simulation=simulation_of(SIMULATE))
    spaces = {}
    for suite in plan_suites(config):
        assert isinstance(suite.environment, SimulatedSpec) and suite.environment.model == "world-model"
        spaces[suite.environment.stands_for] = [tool["name"] for tool in suite.environment.action_space]
    assert spaces["terminal"] == ["shell", "keystrokes"]  # the real terminal's, as its trajectories record it
    assert spaces["mcp"] == []  # its tools are whatever the server lists: no shell tool forced on it
    assert {"click", "fill", "goto"} <= set(spaces["browser"]) and "shell" not in spaces["browser"]
    with pytest.raises(ValueError, match="URL=MODEL"):
        simulation_of("http://no-model")


def test_tasks_are_chosen_by_id_and_unknown_ones_refused():
    (suite,) = plan_suites(CollectConfig(suites=("terminal",), tasks=("count-lines",)))
    assert [t.id for t in suite.tasks] == ["count-lines"]
    with pytest.raises(ValueError, match="unknown task ids: nope"):
        plan_suites(CollectConfig(suites=("terminal",), tasks=("nope",)))
    terminal, swe = plan_suites(
        CollectConfig(suites=("terminal", "swe"), tasks=("swe/calc-add", "terminal/largest-file"))
    )
    assert [t.id for t in terminal.tasks] == ["largest-file"] and [t.id for t in swe.tasks] == ["calc-add"]
    with pytest.raises(ValueError, match="unknown task ids: swe/largest-file"):
        plan_suites(CollectConfig(suites=("terminal", "swe"), tasks=("swe/largest-file",)))
    with pytest.raises(SuiteError, match="unknown suite 'moon'"):
        plan_suites(CollectConfig(suites=("moon",)))


def test_policies_come_from_their_registry_with_their_arguments():
    assert {"scripted", "explorer", "llm", "checkpoint"} <= set(POLICIES)  # checkpoint: imported from agents/
    assert POLICIES.get("explorer").arguments(CollectConfig(explorer_steps=3)) == {"steps": 3}
    with pytest.raises(ValueError) as unknown:
        collect(CollectConfig(policy="oracle", suites=("terminal",)), print, print)
    assert str(unknown.value) == f"unknown policy 'oracle'; known: {', '.join(POLICIES)}"
    with pytest.raises(ValueError, match="--policy llm needs --agent URL=MODEL"):
        collect(CollectConfig(policy="llm", suites=("mcp-kvstore",)), print, print)


def test_the_run_id_is_a_hash_of_what_the_manifest_records():
    config = CollectConfig(suites=("mcp-kvstore",), shard="1/2")
    warnings = []
    recorded = run_config(config, plan_suites(config), {}, warnings.append)
    assert recorded["mcp"] == {"mcp-kvstore": {"transport": "stdio", "isolation": "container", "network": "none"}}
    assert warnings == []
    run_id = default_run_id(config, recorded)
    assert run_id.startswith("mcp-kvstore-scripted-") and run_id.endswith("-shard1of2")
    assert run_id == default_run_id(config, run_config(config, plan_suites(config), {}, warnings.append))


def test_control_is_sampled_per_episode_told_to_the_world_model_and_recorded(tmp_path):
    import json

    from tests.chat_server import chat_server
    from trajforge.sandboxes.control import load_control, recorded_control
    from trajforge.schemas.sources import read_records

    reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()
    with chat_server(lambda request: (200, reply)) as (url, requests):
        config = CollectConfig(
            suites=("terminal",), tasks=("count-lines", "largest-file"),
            simulation=simulation_of(f"{url}=wm", control="errors"),
            repeats=3, output=str(tmp_path), concurrency=1,
        )  # fmt: skip
        collected = collect(config, log=lambda text: None, warn=lambda text: None)
    records = [r.record for r in read_records([collected.run_dir])]
    assert len(records) == 6 and all(r.source.kind == "simulated" for r in records)
    specs = [recorded_control(r.metadata) for r in records]
    assert len({s.render() for s in specs}) > 1  # sampled per episode, not one for the run
    dist = load_control("errors")
    for record, spec in zip(records, specs, strict=True):
        meta = json.loads(record.metadata)
        assert spec == dist.sample(meta["seed"], meta["task_id"])
        assert record.simulation_instruction == spec.before(len(record.turns)).render()  # what it was given
    # each action is asked under the faults planned up to it, never under one planned past it
    systems = {r["body"]["messages"][0]["content"] for r in requests}
    told = {spec.before(n).render() for spec, r in zip(specs, records, strict=True) for n in range(1, len(r.turns) + 1)}
    assert told - {""} and all(any(t in system for system in systems) for t in told - {""})
    assert not any(spec.render() in system for spec in specs for system in systems if spec.render() not in told)
    with pytest.raises(ValueError, match="--control: steers a world model; give --world-model too"):
        simulation(None, control="errors")
