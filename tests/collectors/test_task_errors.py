"""A task whose setup fails is a task error, never retried, the same in real environments of every kind."""

import pytest

from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.environments.mcp import MCPSpec
from trajforge.collectors.environments.terminal import TerminalSpec
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import EpisodeSpec, run_collection
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import Task
from trajforge.schemas.records import Action
from trajforge.schemas.sources import read_records

BROKEN_SETUP = {
    "terminal": (TerminalSpec(), "test -d /work/fixtures", "setup command failed (1)"),
    "mcp": (
        MCPSpec(server="kvstore", isolation="host"),
        Action(kind="tool_call", name="get", content='{"key": "no/such/key"}'),
        "task setup call get failed",
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_SETUP))
def test_a_broken_setup_is_one_task_error_in_every_kind(kind, request, tmp_path):
    environment, setup, message = BROKEN_SETUP[kind]
    settings = Settings(run_id="pytest")
    if kind == "terminal":  # the real Docker sandbox
        client = request.getfixturevalue("docker_client")
        settings = Settings(run_id="pytest", image=request.getfixturevalue("sandbox_image"), docker_client=client)
    ls = Action(kind="shell", content="ls")
    task = Task(id="broken", instruction="x", domain=kind, setup=(setup,), actions=(ls,))
    made = []

    def make_env(spec):
        made.append(build_environment(spec.environment, settings))
        return made[-1]

    spec = EpisodeSpec(f"s/{kind}#0", task, 0, environment)
    result = run_collection([spec], RunWriter(tmp_path), make_env, ScriptedPolicy, "pytest", retries=2)
    (record,) = [r.record for r in read_records([tmp_path])]
    assert record.outcome.status == "task_error" and message in record.outcome.error
    assert record.turns == [] and len(made) == 1 and result.retries == 0
    assert (result.task_errors, result.infra_errors) == (1, 0)
