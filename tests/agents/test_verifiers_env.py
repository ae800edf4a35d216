"""verifiers' own rollout code (verifiers 0.4: `vf.load_environment`, `Env.serving`, `Env.run_episode`, its
interception server, its `null` chat program run by uv as a subprocess, its eval client) drives a trajforge suite
through `load_environment`: each reply of the agent is a step of our environment, in a real Docker terminal and in
a world model, and the reward on verifiers' trace is the task's check.

verifiers' eval client only streams (server-sent events). `streamed` is a scripted endpoint that sends each answer
as one event; the served checkpoint's answers reach it through that front too (the test was written before
`trajforge serve` streamed; tests/training/test_serving.py checks serve's own stream with OpenAI's client)."""

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

vf = pytest.importorskip("verifiers.v1", reason="the `envs` extra (verifiers) is not installed")

from tests.serve_process import serving  # noqa: E402
from trajforge.agents.verifiers_env import load_environment  # noqa: E402

SOLVE = "```bash\nwc -l < notes.txt > answer.txt\n```"


@contextmanager
def streamed(answer: Callable[[dict], str]):
    """An OpenAI-compatible chat endpoint on loopback that streams `answer(request body)` as one event; the bodies
    it received are kept."""
    bodies: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server interface
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": int(time.time()), "model": body["model"],
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer(body)},
                                  "finish_reason": "stop"}]}  # fmt: skip
            data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()


@pytest.fixture(autouse=True)
def uv_beside_python(monkeypatch):
    """verifiers runs its chat program with uv (the `envs` extra installs it beside this interpreter)."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TRAJFORGE_TEST_KEY", "unused")


def rollouts(env, url: str, models: list[str], max_tokens: int = 64) -> list:
    """One episode of the taskset's first task per model, through verifiers' own serving and episode code."""

    async def run():
        (task,) = list(env.taskset)
        async with env.serving():
            return [
                await env.run_episode(
                    task,
                    vf.ModelContext(
                        model=model,
                        client=vf.EvalClientConfig(base_url=url, api_key_var="TRAJFORGE_TEST_KEY"),
                        sampling=vf.Sampling(max_tokens=max_tokens, temperature=1.0),
                    ),
                )  # fmt: skip
                for model in models
            ]

    return asyncio.run(run())


def scripted(body: dict) -> str:
    """The agent `solver` runs the command that solves the task, then says it is done; `quitter` is done at once."""
    acted = any(message["role"] == "assistant" for message in body["messages"])
    return SOLVE if body["model"] == "solver" and not acted else "Done."


@pytest.mark.slow
def test_verifiers_rolls_out_in_a_docker_terminal_and_its_reward_is_the_check(docker_client):
    env = load_environment(suite="terminal", tasks=["count-lines"])
    with streamed(scripted) as (url, bodies):
        solved, quit_ = rollouts(env, url, ["solver", "quitter"])
    (solver,), (quitter,) = solved.traces, quit_.traces
    assert solved.ok and quit_.ok, (solved.errors, quit_.errors)
    assert solver.rewards["check"].score == 1.0 and solver.info["trajforge"]["status"] == "success"
    assert "real environment" in solver.info["trajforge"]["check"]["decided_by"]
    assert quitter.rewards["check"].score == 0.0 and quitter.info["trajforge"]["status"] == "failure"
    first, second = [b for b in bodies if b["model"] == "solver"]
    assert "# Actions" in first["messages"][0]["content"] and "```bash" in first["messages"][0]["content"]
    assert (
        "notes.txt" in first["messages"][1]["content"] and "# Task\nCount the lines" in first["messages"][1]["content"]
    )
    assert second["messages"][-2]["content"] == SOLVE  # the reply stepped in the sandbox, its result handed back


@pytest.mark.slow
def test_verifiers_rolls_out_a_served_checkpoint_in_a_world_model(docker_client, tiny_checkpoint):
    env = load_environment(suite="terminal", tasks=["count-lines"], world_model=str(tiny_checkpoint),
                           simulation={"prompt": "plain", "max_tokens": 8}, max_turns=2)  # fmt: skip
    with serving(tiny_checkpoint, "tiny") as served:

        def whole(body: dict) -> str:  # the checkpoint's own answer, from trajforge serve
            asked = {"model": "tiny", "messages": body["messages"], "max_tokens": 24, "temperature": 1.0, "seed": 0}
            return httpx.post(f"{served}/chat/completions", json=asked, timeout=120).json()["choices"][0]["message"][
                "content"
            ]

        with streamed(whole) as (url, bodies):
            (episode,) = rollouts(env, url, ["tiny"])
    (trace,) = episode.traces
    outcome = trace.info["trajforge"]
    assert episode.ok, episode.errors
    assert bodies and "--- notes.txt (30 bytes)\nmilk" in bodies[0]["messages"][1]["content"]  # the real start
    assert outcome["status"] in ("success", "failure", "agent_error", "timeout", "infra_error")
    assert trace.rewards["check"].score == (1.0 if outcome["status"] == "success" else 0.0)
    if "check" in outcome:
        assert "world model" in outcome["check"]["decided_by"]


@pytest.mark.slow
def test_an_agent_run_that_stops_first_leaves_the_episode_unfinished_and_unrewarded(docker_client):
    from trajforge.agents.verifiers_env import TrajforgeEnvConfig, TrajforgeTasksetConfig

    player = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig(), max_turns=1)  # verifiers' limit
    config = TrajforgeEnvConfig(taskset=TrajforgeTasksetConfig(tasks=["count-lines"]), player=player)
    with streamed(scripted) as (url, bodies):
        (episode,) = rollouts(vf.load_environment(config), url, ["solver"])
    (trace,) = episode.traces
    assert len(bodies) == 1  # one reply, stepped; the harness stopped before the next
    assert trace.rewards["check"].score == 0.0 and trace.info["trajforge"]["status"] == "unfinished"
