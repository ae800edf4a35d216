"""MCP environments against real servers over stdio: the bundled ones, a misbehaving one, a third-party one."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from trajforge.collectors.environments import Settings
from trajforge.collectors.environments.mcp import MCPSpec
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import EpisodeSpec, run_collection
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import InfraError, Task
from trajforge.sandboxes.bundled_servers import bundled_server
from trajforge.sandboxes.mcp_env import MCPEnvironment, MCPServerConfig
from trajforge.schemas.records import Action
from trajforge.schemas.sources import read_records

MISBEHAVING = str(Path(__file__).parent / "servers" / "misbehaving.py")
TASK = Task(id="t", instruction="x", domain="mcp")


def call(env, tool, **arguments):
    observation = env.step(Action(kind="tool_call", name=tool, content=json.dumps(arguments)))
    return observation, json.loads(observation.content)


def text(result: dict) -> str:
    return result["content"][0]["text"]


def test_workspace_keeps_relations_straight(mcp_isolation):
    with MCPEnvironment(bundled_server("workspace"), isolation=mcp_isolation) as env:
        first = env.reset(TASK)
        assert "query_database" in first.content
        tools = {t["name"]: t for t in env.action_space()}
        assert tools["add_row"]["input_schema"]["required"] == ["database_id", "properties"]
        observation, result = call(
            env, "add_row", database_id="db_0002", properties={"Name": "x", "Project": ["row_0099"]}
        )
        assert observation.is_error and "row row_0099 not found in database db_0001" in text(result)
        observation, result = call(env, "delete_row", row_id="row_0001")
        assert observation.is_error and "is referenced by" in text(result)
        _, page1 = call(env, "query_database", database_id="db_0002", page_size=3)
        page1 = json.loads(text(page1))
        assert page1["has_more"] and page1["next_cursor"] == "cur_3"
        _, page3 = call(env, "query_database", database_id="db_0002", page_size=3, cursor="cur_6")
        assert json.loads(text(page3))["has_more"] is False
        assert observation.format == "json"
        assert env.describe() == {
            "name": "mcp:workspace",
            "version": "1.0",
            "backend": "mcp-stdio",
            "image_digest": env._container.image_digest(),
        }


def test_each_episode_starts_from_the_seed_state(mcp_isolation):
    with MCPEnvironment(bundled_server("kvstore"), isolation=mcp_isolation) as env:
        env.reset(TASK)
        call(env, "set", key="app/name", value="changed")
        env.reset(TASK)
        _, result = call(env, "get", key="app/name")
        assert json.loads(text(result))["value"] == "trajforge"


def test_search_ranks_and_extracts(mcp_isolation):
    with MCPEnvironment(bundled_server("search"), isolation=mcp_isolation) as env:
        env.reset(TASK)
        _, result = call(env, "web_search", query="deepest lake in the world", top_k=3)
        hits = json.loads(text(result))["results"]
        assert hits[0]["url"].endswith("/lake-baikal") and set(hits[0]) == {"url", "title", "snippet", "date"}
        observation, result = call(env, "web_extractor", url="https://encyclopedia.local/wiki/nope")
        assert observation.is_error and "404" in text(result)


def test_bad_arguments_are_observations_not_crashes(mcp_isolation):
    with MCPEnvironment(bundled_server("issues"), isolation=mcp_isolation) as env:
        env.reset(TASK)
        wrong_type, result = call(env, "get_issue", number="three")
        assert wrong_type.is_error and "number" in text(result)
        unknown, _ = call(env, "no_such_tool")
        assert unknown.is_error
        not_json = env.step(Action(kind="tool_call", name="get_issue", content="[1]"))
        assert not_json.is_error and "JSON object" in not_json.content


@pytest.mark.parametrize("mode", ["crash", "hang", "garbage"])
def test_misbehaving_server_is_an_infra_error(mode, mcp_isolation):
    server = MCPServerConfig(name=mode, command=sys.executable, args=(MISBEHAVING, mode))
    with MCPEnvironment(server, call_timeout=3, isolation=mcp_isolation) as env:
        env.reset(TASK)
        assert text(call(env, "poke")[1]) == "ok"
        with pytest.raises(InfraError, match=f"MCP server {mode} failed during tools/call poke"):
            call(env, "poke")


def test_runner_records_what_came_before_and_carries_on(tmp_path, docker_client, sandbox_image):
    task = Task(
        id="poke",
        instruction="poke twice",
        domain="mcp",
        actions=(Action(kind="tool_call", name="poke", content="{}"),) * 2,
    )
    specs = [
        EpisodeSpec(f"s/{mode}#0", task, 0, MCPSpec(command=sys.executable, args=[MISBEHAVING, mode]))
        for mode in ("crash", "garbage")
    ] + [
        EpisodeSpec(
            "s/kv#0",
            Task(
                id="kv",
                instruction="x",
                domain="mcp",
                actions=(Action(kind="tool_call", name="get", content='{"key": "db/host"}'),),
            ),
            0,
            MCPSpec(server="kvstore"),
        )
    ]
    from trajforge.collectors.environments import build_environment

    settings = Settings(image=sandbox_image, command_timeout=3, docker_client=docker_client)
    result = run_collection(
        specs,
        RunWriter(tmp_path),
        lambda s: build_environment(s.environment, settings),
        ScriptedPolicy,
        "run",
        retries=1,
    )
    records = {r.record.source.origin: r.record for r in read_records([tmp_path])}
    assert result.ran == 3 and result.infra_errors == 2
    for mode in ("crash", "garbage"):
        record = records[f"s/{mode}#0"]
        assert record.outcome.status == "infra_error" and "failed during tools/call poke" in record.outcome.error
        assert [t.observation.content for t in record.turns] == [
            '{"content": [{"type": "text", "text": "ok"}], "isError": false}'
        ]
    assert (
        records["s/kv#0"].outcome.status == "unknown" and "127.0.0.1" in records["s/kv#0"].turns[0].observation.content
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs node and npx")
def test_third_party_filesystem_server_on_the_host_when_opted_out():
    server = MCPServerConfig(
        name="filesystem",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "{workdir}"),
        isolation="host",
    )
    with MCPEnvironment(server, call_timeout=120) as env:
        env.reset(TASK)
        assert {"read_text_file", "write_file", "list_directory"} <= {t["name"] for t in env.action_space()}
        call(env, "write_file", path="note.txt", content="remember the milk\n")
        _, result = call(env, "read_text_file", path="note.txt")
        assert text(result) == "remember the milk\n"
        denied, result = call(env, "read_text_file", path="/etc/passwd")
        assert denied.is_error and "outside allowed directories" in text(result)
