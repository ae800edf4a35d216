import json

import pytest
from pydantic import ValidationError

from trajforge.sandboxes.base import Sandbox, Task
from trajforge.sandboxes.bundled_servers import bundled_server
from trajforge.sandboxes.faults import FaultInjector
from trajforge.sandboxes.mcp_env import MCPEnvironment
from trajforge.schemas.records import Action, Observation

TASK = Task(id="t", instruction="x")


class ListServer(Sandbox):
    """Answers every call like an MCP server returning a list of ten items; counts the calls it really got."""

    name = "list-server"

    def __init__(self):
        self.calls = 0

    def reset(self, task):
        return Observation(content="ready")

    def step(self, action):
        self.calls += 1
        data = {"results": [{"id": f"item_{i}"} for i in range(10)], "total": 10}
        payload = {"content": [{"type": "text", "text": json.dumps(data)}], "isError": False}
        return Observation(content=json.dumps(payload), format="json")

    def action_space(self):
        return [{"name": "list"}]

    def close(self):
        pass


def call(env, **arguments):
    return env.step(Action(kind="tool_call", name="list", content=json.dumps(arguments)))


def items(observation: Observation) -> dict:
    return json.loads(json.loads(observation.content)["content"][0]["text"])


def labels(observation: Observation) -> str | None:
    return json.loads(observation.metadata or "{}").get("fault")


def test_pagination_needs_follow_up_calls():
    inner = ListServer()
    env = FaultInjector(inner, {"pagination": {"page_size": 4}}, seed=1)
    env.reset(TASK)
    first = call(env)
    page = items(first)
    assert [i["id"] for i in page["results"]] == ["item_0", "item_1", "item_2", "item_3"] and page["total"] == 10
    assert labels(first) == "pagination"
    seen = page["results"]
    while "next_page_token" in page:
        page = items(call(env, page_token=page["next_page_token"]))
        seen += page["results"]
    assert [i["id"] for i in seen] == [f"item_{i}" for i in range(10)]
    assert inner.calls == 1  # follow-ups were answered from the held pages


def test_intermittent_errors_do_not_reach_the_environment():
    inner = ListServer()
    env = FaultInjector(inner, {"intermittent_error": 1.0}, seed=0)
    env.reset(TASK)
    observation = call(env)
    assert observation.is_error and "503 Service Unavailable" in json.loads(observation.content)["content"][0]["text"]
    assert labels(observation) == "intermittent_error" and inner.calls == 0
    shell = env.step(Action(kind="shell", content="ls -la"))
    assert shell.exit_code == 75 and shell.content.startswith("ls: temporary failure")


def test_incomplete_partial_and_truncated():
    env = FaultInjector(ListServer(), {"incomplete": 1.0}, seed=0)
    env.reset(TASK)
    observation = call(env)
    assert items(observation)["incomplete"] is True and len(items(observation)["results"]) == 5
    env = FaultInjector(ListServer(), {"partial_failure": 1.0}, seed=0)
    env.reset(TASK)
    failed = [i for i in items(call(env))["results"] if i.get("status") == "failed"]
    assert len(failed) == 1 and failed[0]["id"].startswith("item_")
    env = FaultInjector(ListServer(), {"truncation": {"rate": 1.0, "max_chars": 50}}, seed=0)
    env.reset(TASK)
    cut = call(env)
    assert cut.truncated and labels(cut) == "truncated"
    assert cut.content == ListServer().step(None).content[:50] + "\n[output truncated]"  # visible, as in real tools


def test_seeded_and_reproducible():
    def run(seed):
        env = FaultInjector(ListServer(), {"intermittent_error": 0.5, "latency": {"rate": 0.5, "seconds": 0}}, seed)
        env.reset(TASK)
        return [labels(call(env)) for _ in range(20)]

    assert run(3) == run(3) and run(3) != run(4)
    assert "intermittent_error" in run(3) and None in run(3)


def test_the_instruction_says_what_was_injected_where():
    env = FaultInjector(ListServer(), {"intermittent_error": 0.5, "pagination": {"page_size": 3}}, seed=0)
    env.reset(TASK)
    assert env.simulation_instruction() == ""  # nothing injected yet: nothing to say
    got = [labels(call(env)) for _ in range(6)]
    injected = env.injected()
    assert [(i.turn, i.kind) for i in injected.injections] == [(n, k) for n, k in enumerate(got) if k]
    text = env.simulation_instruction()
    first_error = got.index("intermittent_error")
    assert f"action {first_error + 1} (if it calls list) fails with a temporary error (503" in text
    first_page = got.index("pagination")
    assert f"action {first_page + 1} (if it calls list) returns a list paginated at 3 items" in text
    assert env.episode_metadata()["control"] == injected.record()
    env.reset(TASK)
    assert env.injected().injections == ()  # a new episode starts clean


def test_bad_config_is_rejected():
    with pytest.raises(ValidationError):
        FaultInjector(ListServer(), {"intermittent_error": 2})
    with pytest.raises(ValidationError):
        FaultInjector(ListServer(), {"teleport": 0.1})


def test_real_server_behind_faults(mcp_isolation):
    server = MCPEnvironment(bundled_server("workspace"), isolation=mcp_isolation)
    env = FaultInjector(server, {"pagination": {"page_size": 2}}, seed=5)
    with env:
        env.reset(TASK)
        first = env.step(Action(kind="tool_call", name="search", content="{}"))
        page = items(first)
        assert len(page["results"]) == 2 and page["next_page_token"]
        follow = env.step(
            Action(kind="tool_call", name="search", content=json.dumps({"page_token": page["next_page_token"]}))
        )
        assert [r["id"] for r in items(follow)["results"]] == ["page_0003", "db_0001"]
