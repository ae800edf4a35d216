"""`trajforge env-serve` as a user starts it (a process on a free port), driven by OpenEnv's own PyPI client
(openenv-core's GenericEnvClient): sessions each in a sandbox of their own, one of them killed mid-episode without
another losing anything; the same suite in a world model; a session that outlives its sandbox is told so."""

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

openenv = pytest.importorskip("openenv", reason="the `envs` extra (openenv-core) is not installed")

from trajforge.sandboxes.containers import OWNER_LABEL  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SOLVE = "```bash\nwc -l < notes.txt > answer.txt\n```"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def env_serve(*args: str):
    """`trajforge env-serve ARGS` on a free port: (its base URL, its process); stopped (SIGTERM) at the end."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "trajforge", "env-serve", *args, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    assert process.poll() is None, process.communicate()[0][-3000:]
    try:
        yield url, process
    finally:
        process.terminate()
        process.wait(timeout=60)


def client(url: str):
    return openenv.GenericEnvClient(base_url=url).sync()


def owned(docker_client, process) -> set[str]:
    """The ids of the containers the server process started."""
    return {c.id for c in docker_client.containers.list(filters={"label": f"{OWNER_LABEL}={process.pid}"})}


@pytest.mark.slow
def test_sessions_each_in_a_sandbox_and_one_killed_mid_episode_takes_nothing_from_the_others(docker_client):
    with env_serve("terminal", "--task", "count-lines", "--max-sessions", "3") as (url, server):
        a, b, c = client(url), client(url), client(url)
        with pytest.raises(RuntimeError, match="no episode yet: send reset first"):
            a.step({"text": SOLVE})
        with pytest.raises(RuntimeError, match="has no task 'nope' \\(its tasks: count-lines\\)"):
            a.reset(task_id="nope")
        first = a.reset(task_id="count-lines")
        assert "notes.txt" in first.observation["text"] and first.done is False
        assert first.observation["instruction"].startswith("Count the lines")
        assert {t["name"] for t in first.observation["tools"]} == {"shell", "keystrokes"}
        system, user = first.observation["prompt"]  # as trajforge's agents act: the actions, the start and the task
        assert "# Actions" in system["content"] and user["content"].endswith(
            "# Task\n" + first.observation["instruction"]
        )
        (a_container,) = owned(docker_client, server)
        b.reset(task_id="count-lines")
        c.reset(seed=0)
        assert len(owned(docker_client, server)) == 3  # a sandbox per session
        with ThreadPoolExecutor(2) as pool:  # two sessions stepping at once, each in its own sandbox
            list(pool.map(lambda s, m: s.step({"text": f"```bash\nsleep 1; echo {m} > {m}.txt\n```"}),
                          (b, c), ("kept", "other")))  # fmt: skip
        assert "other.txt" not in b.step({"tool": "shell", "arguments": {"command": "ls"}}).observation["text"]
        assert "kept.txt" not in c.step({"tool": "shell", "arguments": {"command": "ls"}}).observation["text"]

        docker_client.containers.get(a_container).kill()  # A's episode, killed on the server side
        killed = a.step({"text": SOLVE})
        assert killed.done and killed.observation["status"] == "infra_error" and killed.reward == 0.0
        assert "container" in killed.observation["error"]
        with pytest.raises(RuntimeError, match="has ended .*infra_error.*send reset"):
            a.step({"text": SOLVE})

        assert b.step({"text": "```bash\ncat kept.txt\n```"}).observation["text"].strip() == "kept"
        assert b.state()["step_count"] == 3 and c.state()["step_count"] == 2
        for session in (b, c):
            assert session.step({"text": SOLVE}).done is False
            ended = session.step({"text": "The count is in answer.txt."})
            assert ended.done and ended.reward == 1.0 and ended.observation["status"] == "success"
            assert "real environment" in ended.observation["check"]["decided_by"]

        again = a.reset(task_id="count-lines")  # a new episode, in a new sandbox
        assert again.done is False and a.step({"text": SOLVE}).done is False
        for session in (a, b, c):
            session.close()
    assert not owned(docker_client, server)  # the server's sandboxes went with it


@pytest.mark.slow
def test_a_world_model_serves_the_suite_and_an_idle_session_is_told_its_sandbox_is_gone(docker_client, tiny_checkpoint):
    args = ("terminal", "--task", "count-lines", "--world-model", str(tiny_checkpoint), "--simulate-prompt", "plain",
            "--simulate-max-tokens", "8", "--idle-timeout", "2")  # fmt: skip
    with env_serve(*args) as (url, _):
        session = client(url)
        first = session.reset(task_id="count-lines")
        assert "--- notes.txt (30 bytes)\nmilk" in first.observation["text"]  # the real starting state, rendered
        assert session.step({"text": SOLVE}).done is False  # the world model answered
        ended = session.step({"text": "Done."})
        assert ended.done and ended.reward == (1.0 if ended.observation["status"] == "success" else 0.0)
        assert "world model" in ended.observation["check"]["decided_by"]
        session.reset(task_id="count-lines")
        time.sleep(8)  # past --idle-timeout: OpenEnv's reaper closes the session's sandbox
        with pytest.raises(RuntimeError, match="sandbox was closed by the server .*idle past --idle-timeout 2s"):
            session.step({"text": SOLVE})
        session.close()


def test_env_serve_refuses_settings_of_a_world_model_without_one():
    from typer.testing import CliRunner

    from trajforge.pipelines.cli import app

    result = CliRunner().invoke(app, ["env-serve", "terminal", "--simulate-prompt", "plain"])
    assert result.exit_code == 2 and "give --world-model too" in result.output


def test_the_cli_and_the_trl_adapter_import_no_library_of_the_envs_extra():
    probe = (
        "import sys, trajforge.pipelines.cli, trajforge.agents.trl_env\n"
        "print(sorted(m for m in ('openenv', 'verifiers', 'trl') if m in sys.modules))"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert ran.stdout.strip() == "[]"
