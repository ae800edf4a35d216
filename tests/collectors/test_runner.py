import json

import pytest

from tests.collectors.fakes import FakeEnvironment
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import parse_shard, plan_episodes, run_collection
from trajforge.collectors.tasks import Suite
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.schemas.records import Action
from trajforge.schemas.sources import read_records


def shell(*commands):
    return tuple(Action(kind="shell", content=c) for c in commands)


SUITE = Suite(
    "fake",
    "terminal",
    None,
    tuple(
        Task(id=f"t{i}", instruction=f"task {i}", actions=shell("ls", f"touch f{i}"), check=ShellCheck(command=f"f{i}"))
        for i in range(6)
    ),
)


def test_episode_records_turns_and_outcome():
    env = FakeEnvironment()
    trajectory = run_episode(env, ScriptedPolicy(), SUITE.tasks[0], "fake/t0#0", "run", seed=1)
    assert [t.action.content for t in trajectory.turns] == ["ls", "touch f0"]
    assert trajectory.outcome.status == "success" and trajectory.outcome.reward == 1.0
    assert trajectory.source.origin == "fake/t0#0" and trajectory.environment.name == "fake"


class _Finishing(ScriptedPolicy):
    finished = 0

    def finish(self) -> None:
        self.finished += 1


@pytest.mark.parametrize(
    ("env", "max_turns", "status"),
    [
        (FakeEnvironment(), 30, "success"),
        (FakeEnvironment(crash_on="ls"), 30, "infra_error"),
        (FakeEnvironment(), 1, "timeout"),
    ],
)
def test_the_policy_is_told_once_that_the_episode_is_over_however_it_ended(env, max_turns, status):
    policy = _Finishing()
    trajectory = run_episode(env, policy, SUITE.tasks[0], "fake/t0#0", "run", seed=1, max_turns=max_turns)
    assert trajectory.outcome.status == status and policy.finished == 1


def test_resource_limit_ends_with_a_labelled_error_and_keeps_the_turn():
    task = Task(id="hog", instruction="x", actions=shell("ls", "hog", "never"))
    trajectory = run_episode(FakeEnvironment(limit_on="hog"), ScriptedPolicy(), task, "k", "run", seed=1)
    assert trajectory.outcome.status == "agent_error"
    assert trajectory.outcome.error.startswith("resource limit: memory")
    assert [t.observation.exit_code for t in trajectory.turns] == [0, 137]


def test_max_turns_is_a_timeout():
    task = Task(id="long", instruction="x", actions=shell(*["ls"] * 5))
    trajectory = run_episode(FakeEnvironment(), ScriptedPolicy(), task, "k", "run", seed=1, max_turns=3)
    assert trajectory.outcome.status == "timeout" and len(trajectory.turns) == 3


def test_shards_partition_the_plan():
    everything = {e.key for e in plan_episodes([SUITE], repeats=3)}
    parts = [{e.key for e in plan_episodes([SUITE], 3, (i, 3))} for i in range(3)]
    assert set.union(*parts) == everything and sum(map(len, parts)) == len(everything) == 18
    with pytest.raises(ValueError):
        parse_shard("3/3")


def test_infra_failures_are_retried_agent_failures_are_not(tmp_path):
    envs = iter(
        [FakeEnvironment(fail_resets=1), FakeEnvironment()] + [FakeEnvironment(crash_on="ls") for _ in range(3)]
    )
    writer = RunWriter(tmp_path, flush_every=100)
    episodes = plan_episodes([SUITE], 1)[:2]
    result = run_collection(episodes, writer, lambda spec: next(envs), ScriptedPolicy, "run", concurrency=1, retries=2)
    statuses = sorted(r.record.outcome.status for r in read_records([tmp_path]))
    assert statuses == ["infra_error", "success"]
    assert result.retries == 3 and result.infra_errors == 1


def test_a_task_whose_setup_fails_is_a_task_error_and_never_retried(tmp_path):
    made = []

    def make_env(spec):
        made.append(FakeEnvironment(broken_setup=True))
        return made[-1]

    result = run_collection(plan_episodes([SUITE], 1)[:1], RunWriter(tmp_path), make_env, ScriptedPolicy, "run")
    (record,) = [r.record for r in read_records([tmp_path])]
    assert record.outcome.status == "task_error" and "make fixtures" in record.outcome.error
    assert len(made) == 1 and result.retries == 0 and (result.task_errors, result.infra_errors) == (1, 0)


def test_resume_skips_what_is_finished(tmp_path):
    episodes = plan_episodes([SUITE], 2)
    writer = RunWriter(tmp_path, flush_every=1)
    run_collection(episodes[:5], writer, lambda spec: FakeEnvironment(), ScriptedPolicy, "run")
    resumed = RunWriter(tmp_path)
    result = run_collection(episodes, resumed, lambda spec: FakeEnvironment(), ScriptedPolicy, "run")
    assert (result.skipped, result.ran) == (5, 7)
    origins = [r.record.source.origin for r in read_records([tmp_path])]
    assert sorted(origins) == sorted(e.key for e in episodes)
    manifest = resumed.write_manifest({}, len(episodes), {})
    assert manifest.counts["written"] == 12 and manifest.reconciles()


def test_faults_label_turns_and_describe_themselves():
    from trajforge.sandboxes.faults import FaultInjector

    env = FaultInjector(FakeEnvironment(), {"intermittent_error": 1.0}, seed=0)
    trajectory = run_episode(env, ScriptedPolicy(), SUITE.tasks[0], "fake/t0#0", "run", seed=0)
    assert [t.fault for t in trajectory.turns] == ["intermittent_error", "intermittent_error"]
    assert trajectory.outcome.status == "failure"  # the file was never created: the faults were real
    # The instruction says what was injected where, and the metadata records it as a control spec.
    assert trajectory.simulation_instruction.startswith("Inject these faults: action 1 fails with a temporary error")
    assert "action 2 fails with a temporary error" in trajectory.simulation_instruction
    control = json.loads(trajectory.metadata)["control"]
    assert [(i["kind"], i["turn"]) for i in control["injections"]] == [("intermittent_error", n) for n in (0, 1)]
