import os

os.environ.setdefault("COLUMNS", "200")  # rich wraps at 80 columns without a terminal

import json
from pathlib import Path

import pytest

from schemas.records import Trajectory, new_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "schemas" / "examples"


def make_trajectory(n_turns: int = 3, domain: str = "terminal", **overrides) -> Trajectory:
    turns = [
        {
            "index": i,
            "action": {"kind": "shell", "content": f"echo step {i}"},
            "observation": {"content": f"step {i}\n", "exit_code": 0, "metadata": json.dumps({"cwd": "/work"})},
            "latency_ms": 3.5,
        }
        for i in range(n_turns)
    ]
    fields = {
        "domain": domain,
        "source": {"kind": "collected", "by": "scripted", "run_id": "run-1"},
        "environment": {"name": "terminal", "image_digest": "sha256:abc", "backend": "docker"},
        "task_description": "Print the steps.",
        "action_space": json.dumps([{"name": "shell", "input_schema": {"type": "string"}}]),
        "agent": {"name": "scripted"},
        "turns": turns,
        "outcome": {"status": "success", "reward": 1.0},
        "started_at": "2026-11-30T02:00:00Z",
    }
    fields.update(overrides)
    return new_trajectory(**fields)


def report_turns(tail: str, n: int = 16) -> list[dict]:
    """Turns of a long, repetitive trajectory; two that differ only in `tail` are near-duplicates."""
    turns = [
        {
            "index": j,
            "action": {"kind": "shell", "content": f"grep -n total report{j}.csv"},
            "observation": {"content": f"{j}: total revenue for region {j} was recorded in the ledger"},
        }
        for j in range(n)
    ]
    turns[-1]["observation"]["content"] = tail
    return turns


@pytest.fixture
def trajectory() -> Trajectory:
    return make_trajectory()


def record_dict(record: Trajectory) -> dict:
    """The record as it appears in a raw segment."""
    return json.loads(record.model_dump_json(exclude_none=True))


@pytest.fixture(scope="session")
def docker_client():
    """The real Docker daemon. Skipped on a machine without one, but never in CI, where .ci/run starts it."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "no daemon here"
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide a Docker daemon: {exc}")
        pytest.skip(f"no Docker daemon: {exc}")
    return client


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    from sandboxes.image import ensure_base_image

    return ensure_base_image(docker_client, log=lambda message: None)


@pytest.fixture
def mcp_isolation(docker_client, sandbox_image):
    """How an isolated stdio MCP server runs in tests: the real sandbox image on the real daemon."""
    from sandboxes.mcp_container import Isolation

    return Isolation(image=sandbox_image, run_id="pytest", client=docker_client)


@pytest.fixture
def terminal(docker_client, sandbox_image):
    from sandboxes.terminal import DockerTerminal

    env = DockerTerminal(
        image=sandbox_image, run_id="pytest", owner=os.getpid(), command_timeout=5, client=docker_client
    )
    yield env
    env.close()


from tests.corpus_fixtures import (  # noqa: E402,F401 - fixtures for every test folder
    corpus,
    corpus_dir,
    served_model,
    tiny_checkpoint,
    tokenizer,
)
