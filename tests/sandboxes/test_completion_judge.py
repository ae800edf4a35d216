"""An endpoint judge of completion decides a simulated episode of a task without a check: it reads the task, the
reference solution and the episode, and its last YES or NO is the verdict (a real HTTP server on loopback)."""

import json

from tests.builders import ScriptedWorldModel, tagged
from tests.chat_server import chat_server
from trajforge.collectors.environments import Settings
from trajforge.collectors.environments.simulated import SimulatedSpec
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.endpoints import Endpoint
from trajforge.sandboxes.base import ShellCheck, Task
from trajforge.sandboxes.completion_judge import CompletionJudge
from trajforge.sandboxes.simulated import SimulatedEnvironment
from trajforge.schemas.records import Action

TASK = Task(
    id="read-config",
    instruction="Read the database host.",
    domain="mcp",
    actions=(Action(kind="tool_call", name="get", content='{"key": "db/host"}'),),
)


def judged(verdict: str, task: Task = TASK):
    reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": verdict}}]}).encode()
    with chat_server(lambda request: (200, reply)) as (url, requests):
        env = SimulatedEnvironment(
            ScriptedWorldModel(tagged('{"value": "127.0.0.1"}')), judge=CompletionJudge(Endpoint(url, "judge"))
        )
        trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    return trajectory, requests


def test_the_judges_last_verdict_decides_and_is_recorded():
    trajectory, (request,) = judged("The agent read db/host, not NO data.\nYES")
    assert trajectory.outcome.status == "success"
    details = json.loads(trajectory.outcome.verifier)
    assert details["verdict"] == "YES" and details["decided_by"] == "an endpoint judge of task completion (judge)"
    asked = request["body"]["messages"][1]["content"]
    assert "# Task\nRead the database host." in asked and '# Reference solution\nget {"key": "db/host"}' in asked
    assert 'Action:\nget {"key": "db/host"}\nObservation:\n{"value": "127.0.0.1"}' in asked
    assert judged("NO")[0].outcome.status == "failure"


def test_an_episode_with_no_action_completed_nothing_and_the_judge_is_not_asked():
    trajectory, requests = judged("YES", Task(id="idle", instruction="Read the database host.", domain="mcp"))
    assert trajectory.outcome.status == "failure" and requests == []
    assert json.loads(trajectory.outcome.verifier)["decided_by"].startswith("no action: the agent took none")


def test_an_answer_without_a_verdict_is_no_success_and_says_so():
    trajectory, _ = judged("I cannot tell.")
    assert trajectory.outcome.status == "failure"
    assert json.loads(trajectory.outcome.verifier)["verdict"].startswith("none: the answer said neither")


def test_a_simulated_spec_builds_its_judge_and_a_checked_task_ignores_it():
    spec = SimulatedSpec(url="http://127.0.0.1:9/v1", model="wm", judge_url="http://127.0.0.1:9/v1", judge_model="j")
    assert SimulatedSpec(url="http://x/v1", model="wm").build(Settings()).judge is None
    env = spec.build(Settings())
    assert env.judge.model == "j"
    env.world_model = ScriptedWorldModel(tagged("exit code: 0"))  # the judge's port 9 would refuse: never asked
    task = Task(id="t", instruction="x", check=ShellCheck(command="true"))
    trajectory = run_episode(env, ScriptedPolicy(), task, "k", "run", seed=0)
    assert "simulated shell check" in json.loads(trajectory.outcome.verifier)["decided_by"]
