"""Control specs: sampled per episode from a distribution, rendered into the instruction, recorded in the
trajectory, in the same words a real fault-injected episode records what it injected."""

import json

import pytest

from tests.collectors.fakes import FakeEnvironment
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.sandboxes.base import Sandbox, Task
from trajforge.sandboxes.control import (
    CONTROL_PRESETS,
    ControlDistribution,
    ControlError,
    ControlledSimulation,
    ControlSpec,
    Injection,
    action_kinds,
    load_control,
    recorded_control,
)
from trajforge.sandboxes.faults import FaultInjector
from trajforge.schemas.records import Action, Observation

TASK = Task(id="t", instruction="Do it.", actions=(Action(kind="shell", content="ls"),) * 3)


class Recorder(Sandbox):
    """A stand-in simulator: remembers the task it was reset with and the instruction its check was asked under,
    answers every action with 'ok'."""

    name, source_kind = "simulated:fake", "simulated"

    def __init__(self, tools: list[dict] = ()):
        self.tools, self.checked_under = list(tools), None

    def reset(self, task):
        self.task, self.instruction = task, task.config.get("simulation_instruction", "")
        return Observation(content="start")

    def step(self, action):
        self.stepped_under = [*getattr(self, "stepped_under", []), self.instruction]
        return Observation(content="ok")

    def instruct(self, instruction):
        self.instruction = instruction

    def check(self, task):
        self.checked_under = self.instruction
        return True

    def simulation_instruction(self):
        return self.instruction

    def action_space(self):
        return self.tools

    def close(self):
        pass


def test_sampling_is_per_episode_and_reproducible():
    dist = ControlDistribution(horizon=20, faults={"intermittent_error": {"rate": 0.3}, "pagination": {"rate": 0.2}})
    a, b = dist.sample(1, "t"), dist.sample(1, "t")
    assert a == b and a != dist.sample(2, "t") and a != dist.sample(1, "u")
    kinds = {i.kind for s in (dist.sample(n, "t") for n in range(20)) for i in s.injections}
    assert kinds == {"intermittent_error", "pagination"}
    assert all(0 <= i.turn < 20 for i in a.injections)
    assert ControlDistribution(clean=1.0, faults={"intermittent_error": {"rate": 1.0}}).sample(0).injections == ()


def test_where_a_fault_may_hit_is_honoured():
    dist = ControlDistribution(
        horizon=10, faults={"intermittent_error": {"rate": 1.0, "turns": (3, 4), "tools": ["list"]}}
    )
    spec = dist.sample(0)
    assert [i.turn for i in spec.injections] == [2, 3]
    call = Action(kind="tool_call", name="list", content="{}")
    other = Action(kind="tool_call", name="get", content="{}")
    assert spec.at(2, call) and not spec.at(2, other) and not spec.at(1, call)


def test_a_fault_is_planned_only_where_it_can_hit():
    dist = ControlDistribution(horizon=12, faults={"intermittent_error": {"rate": 0.3}, "pagination": {"rate": 0.5}})
    shell = [dist.sample(n, "t", frozenset({"shell", "keystrokes"})) for n in range(10)]
    tools = [dist.sample(n, "t", frozenset({"tool_call"})) for n in range(10)]
    assert {i.kind for s in shell for i in s.injections} == {"intermittent_error"}
    assert {i.kind for s in tools for i in s.injections} == {"intermittent_error", "pagination"}
    # the same draws: a terminal episode's errors fall where a tool-calling one's do
    for a, b in zip(shell, tools, strict=True):
        assert a.injections == tuple(i for i in b.injections if i.kind == "intermittent_error")
    # and a recorded pagination of a shell command (an older spec) is not one for that action
    spec = ControlSpec(injections=(Injection(kind="pagination", turn=0), Injection(kind="intermittent_error", turn=0)))
    assert [i.kind for i in spec.at(0, Action(kind="shell", content="ls"))] == ["intermittent_error"]
    assert len(spec.at(0, Action(kind="tool_call", name="list", content="{}"))) == 2


def test_the_action_kinds_of_an_action_space():
    from trajforge.sandboxes import browser
    from trajforge.sandboxes.terminal import action_space as terminal_space

    assert action_kinds(terminal_space()) == {"shell", "keystrokes"}
    assert action_kinds(terminal_space(("shell",))) == {"shell"}
    assert action_kinds([{"name": "get"}, {"name": "list_keys"}]) == {"tool_call"}
    assert action_kinds(browser.action_space()) == {"browser"}
    assert action_kinds([]) is None


def test_each_action_and_the_check_are_asked_under_the_faults_of_the_actions_up_to_them():
    dist = ControlDistribution(horizon=6, faults={"intermittent_error": {"rate": 1.0, "turns": (2, 5)}})
    simulator = Recorder(tools=[{"name": "shell"}])
    trajectory = run_episode(ControlledSimulation(simulator, dist), ScriptedPolicy(), TASK, "k", "run", seed=0)
    planned = dist.sample(0, "t")
    assert [i.turn for i in planned.injections] == [1, 2, 3, 4]
    # the episode took 3 actions: its check (the 4th action) is not told to fail, the first 3 were told as planned
    assert simulator.checked_under == planned.before(3).render() == trajectory.simulation_instruction
    assert "action 3 fails" in simulator.checked_under and "action 4" not in simulator.checked_under
    assert recorded_control(trajectory.metadata) == planned  # the record keeps the whole plan
    # each action was simulated under the faults up to it: never one planned past it
    assert simulator.stepped_under == [planned.before(n).render() for n in (1, 2, 3)]
    assert simulator.stepped_under[0] == "" and "action 3" not in simulator.stepped_under[1]


def test_rendering_says_what_where():
    spec = ControlSpec(
        injections=(
            Injection(kind="pagination", turn=3, tools=("list",), params={"page_size": 2}),
            Injection(kind="intermittent_error", turn=0),
        )
    )
    text = spec.render()
    assert text.startswith("Inject these faults: action 1 fails with a temporary error (503 Service Unavailable)")
    assert "action 4 (if it calls list) returns a list paginated at 2 items with a next_page_token" in text
    assert ControlSpec().render() == ""
    assert ControlSpec.from_record(json.loads(json.dumps(spec.record()))) == spec


def test_a_real_injection_and_a_sampled_control_speak_the_same_language():
    real = FaultInjector(FakeEnvironment(), {"intermittent_error": 1.0}, seed=0)
    run_episode(real, ScriptedPolicy(), Task(id="t", instruction="x", actions=(TASK.actions[0],)), "k", "run", 0)
    sampled = ControlDistribution(horizon=1, faults={"intermittent_error": {"rate": 1.0}}).sample(0)
    assert real.simulation_instruction() == sampled.render() and real.injected() == sampled


def test_a_controlled_simulation_renders_and_records_its_spec():
    dist = ControlDistribution(horizon=3, faults={"intermittent_error": {"rate": 1.0, "turns": (2, 2)}})
    env = ControlledSimulation(Recorder(), dist, seed=7)
    trajectory = run_episode(env, ScriptedPolicy(), TASK, "k", "run", seed=7)
    expected = dist.sample(7, "t")
    assert trajectory.simulation_instruction == expected.render() and "action 2 fails" in expected.render()
    assert recorded_control(trajectory.metadata) == expected
    assert trajectory.source.kind == "simulated"


def test_latency_is_applied_by_the_wrapper(monkeypatch):
    slept = []
    monkeypatch.setattr("trajforge.sandboxes.control.time.sleep", slept.append)
    dist = ControlDistribution(horizon=2, faults={"latency": {"rate": 1.0, "seconds": 0.25}})
    run_episode(ControlledSimulation(Recorder(), dist), ScriptedPolicy(), TASK, "k", "run", seed=0)
    assert slept == [0.25, 0.25]  # actions 1 and 2; the third is past the horizon


def test_presets_and_files(tmp_path):
    assert {"unreliable", "errors", "lists"} <= set(CONTROL_PRESETS)
    assert "intermittent_error" in load_control("unreliable").faults
    with pytest.raises(ControlError, match="unknown control preset 'flaky'; known: unreliable"):
        load_control("flaky")
    path = tmp_path / "c.yaml"
    path.write_text("horizon: 4\nfaults:\n  pagination: {rate: 0.5, page_size: 2}\n")
    assert load_control(str(path)).faults["pagination"].page_size == 2


def test_an_unknown_fault_kind_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "control.yaml"
    path.write_text("faults:\n  intermittent_error: {rate: 0.1}\n  teleport: {rate: 0.5}\n")
    with pytest.raises(ControlError) as caught:
        load_control(str(path))
    assert str(caught.value).startswith(f"{path}: faults.teleport: unknown fault kind 'teleport'; known: ")
    path.write_text("faults:\n  pagination: {rate: 2}\n")
    with pytest.raises(ControlError, match=r"control.yaml: faults\.pagination\.rate: "):
        load_control(str(path))
    with pytest.raises(ControlError, match="no such control file"):
        load_control(str(tmp_path / "missing.yaml"))
