"""Stdio MCP servers inside their episode container, against the real Docker daemon and the real sandbox image:
a hostile server driven by the explorer, the npm reference servers with no network, a server that cannot start."""

import dataclasses
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from trajforge.collectors.environments import Settings, build_environment
from trajforge.collectors.environments.mcp import MCPSpec
from trajforge.collectors.episode import run_episode
from trajforge.collectors.policies.explorer import ExplorerPolicy
from trajforge.collectors.policies.scripted import ScriptedPolicy
from trajforge.collectors.runner import EpisodeSpec, run_collection
from trajforge.collectors.writer import RunWriter
from trajforge.sandboxes.base import InfraError, Task
from trajforge.sandboxes.mcp_container import Isolation, container_command, is_host_python, script_mounts
from trajforge.sandboxes.mcp_env import MCPEnvironment, MCPServerConfig
from trajforge.schemas.records import Action
from trajforge.schemas.sources import read_records

SERVERS = Path(__file__).parent / "servers"
HOSTILE = str(SERVERS / "hostile.py")
TASK = Task(id="t", instruction="x", domain="mcp")


def call(env, tool, **arguments):
    observation = env.step(Action(kind="tool_call", name=tool, content=json.dumps(arguments)))
    return observation, json.loads(observation.content)


def test_host_python_means_the_image_python_and_local_scripts_are_mounted(tmp_path):
    script = tmp_path / "server.py"
    script.write_text("")
    assert is_host_python(sys.executable) and is_host_python("python3") and not is_host_python("npx")
    assert script_mounts(sys.executable, [str(script), "-v", "relative.txt", "/no/such/path"]) == [str(tmp_path)]
    assert script_mounts("npx", ["-y", "@modelcontextprotocol/server-filesystem", "{workdir}"]) == []
    assert script_mounts("/usr/bin/node", ["/usr/lib/node_modules/x/index.js"]) == []
    assert container_command("/usr/bin/node") == "node" and container_command(sys.executable) == "python3"


@pytest.fixture
def host_listener():
    """A TCP port on the host's 127.0.0.1 that counts who connects."""
    connections = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connections.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], connections
    stop.set()
    thread.join(timeout=2)
    server.close()


def test_a_hostile_server_driven_by_the_explorer_changes_nothing_on_the_host(mcp_isolation, tmp_path, host_listener):
    port, connections = host_listener
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret 7f3a\n")
    before = secret.stat()
    server = MCPServerConfig(
        name="hostile",
        command=sys.executable,
        args=(HOSTILE,),
        env={"HOSTILE_SECRET": str(secret), "HOSTILE_PORT": str(port)},
    )
    ran: dict[str, str] = {}
    for seed in range(3):
        with MCPEnvironment(server, call_timeout=60, isolation=mcp_isolation) as env:
            trajectory = run_episode(env, ExplorerPolicy(steps=14), TASK, f"hostile#{seed}", "pytest", seed)
        for turn in trajectory.turns:
            arguments = json.loads(turn.action.content)
            if turn.action.name == "run" and set(arguments) == {"cmd"} and not turn.observation.is_error:
                ran[arguments["cmd"]] = json.loads(turn.observation.content)["content"][0]["text"]
    assert set(ran) == {
        "write_root",
        "write_host_file",
        "write_own_folder",
        "read_host_file",
        "reach_host",
        "write_workdir",
    }, f"the explorer tried only {sorted(ran)}"
    assert ran.pop("write_workdir").startswith("exit 0\nfine")  # the work folder is writable
    for name, output in ran.items():  # every escape failed, inside the container
        assert not output.startswith("exit 0") and "WROTE" not in output and "CONNECTED" not in output, name
    assert "Read-only file system" in ran["write_root"] and "Read-only file system" in ran["write_own_folder"]
    assert "nonexistent" in ran["write_host_file"] and "No such file or directory" in ran["read_host_file"]
    assert "7f3a" not in ran["read_host_file"] and "Connection refused" in ran["reach_host"]
    # The host is unchanged: the marker file, the server's own folder, no connection on the host's loopback.
    assert secret.read_text() == "host secret 7f3a\n" and secret.stat().st_mtime_ns == before.st_mtime_ns
    assert not (SERVERS / "pwned.txt").exists() and not Path("/etc/pwned").exists()
    assert connections == []


def test_a_server_that_cannot_start_is_an_infra_error_with_its_stderr_and_the_run_goes_on(
    docker_client, sandbox_image, tmp_path
):
    tmp_path.chmod(0o755)  # the container's user (uid 1000) reads the script from its mounted folder
    broken = tmp_path / "broken.py"
    broken.write_text(
        "import sys\nprint('cannot open the configuration: /etc/broken.toml', file=sys.stderr)\nsys.exit(2)\n"
    )
    kv_task = Task(
        id="kv",
        instruction="x",
        domain="mcp",
        actions=(Action(kind="tool_call", name="get", content='{"key": "db/host"}'),),
    )
    specs = [
        EpisodeSpec("s/broken#0", TASK, 0, MCPSpec(name="broken", command=sys.executable, args=[str(broken)])),
        EpisodeSpec("s/kv#0", kv_task, 0, MCPSpec(server="kvstore")),
    ]
    settings = Settings(run_id="pytest", image=sandbox_image, command_timeout=30, docker_client=docker_client)
    result = run_collection(
        specs,
        RunWriter(tmp_path / "run"),
        lambda s: build_environment(s.environment, settings),
        ScriptedPolicy,
        "pytest",
        retries=0,
    )
    records = {r.record.source.origin: r.record for r in read_records([tmp_path / "run"])}
    assert result.ran == 2 and result.infra_errors == 1
    error = records["s/broken#0"].outcome.error
    assert records["s/broken#0"].outcome.status == "infra_error"
    assert "could not connect to MCP server broken" in error and "cannot open the configuration" in error
    assert "127.0.0.1" in records["s/kv#0"].turns[0].observation.content


def test_isolated_containers_are_removed_after_the_episode(mcp_isolation, docker_client):
    from trajforge.sandboxes.bundled_servers import bundled_server

    label = {"label": "trajforge.run=pytest-removal"}
    isolated = Isolation(image=mcp_isolation.image, run_id="pytest-removal", client=docker_client)
    server = dataclasses.replace(bundled_server("kvstore"), env={"API_TOKEN": "tok-5ecret"})
    with MCPEnvironment(server, isolation=isolated) as env:
        initial = env.reset(TASK)
        (container,) = docker_client.containers.list(filters=label)
        execs = [docker_client.api.exec_inspect(i)["ProcessConfig"] for i in container.attrs["ExecIDs"] or []]
        assert execs and all("tok-5ecret" not in json.dumps(e) for e in execs)  # `-e API_TOKEN`, no value in argv
        assert "tok-5ecret" not in initial.content + json.dumps(env.describe())
        environ = container.exec_run(["sh", "-c", "cat /proc/[0-9]*/environ | tr '\\0' '\\n'"]).output.decode()
        assert "API_TOKEN=tok-5ecret" in environ  # ... and the server got it
        attrs = container.attrs["HostConfig"]
        assert attrs["NetworkMode"] == "none" and attrs["ReadonlyRootfs"] and attrs["CapDrop"] == ["ALL"]
        assert container.attrs["Config"]["User"] == "1000:1000"
        assert env.describe()["image_digest"] == container.image.id
    assert docker_client.containers.list(all=True, filters=label) == []


NPM = pytest.mark.skipif(os.environ.get("TRAJFORGE_SKIP_NPM") == "1", reason="TRAJFORGE_SKIP_NPM=1")


@pytest.mark.slow
@NPM
def test_npm_filesystem_server_runs_isolated_without_network(mcp_isolation):
    server = MCPServerConfig(
        name="filesystem", command="npx", args=("-y", "@modelcontextprotocol/server-filesystem", "{workdir}")
    )
    with MCPEnvironment(server, call_timeout=120, isolation=mcp_isolation) as env:
        env.reset(TASK)
        _, allowed = call(env, "list_allowed_directories")
        assert "/work" in allowed["content"][0]["text"]
        call(env, "write_file", path="/work/note.txt", content="remember the milk\n")
        _, read = call(env, "read_text_file", path="/work/note.txt")
        assert read["content"][0]["text"] == "remember the milk\n"
        denied, _ = call(env, "read_text_file", path="/etc/passwd")
        assert denied.is_error
        assert env._container.container.attrs["HostConfig"]["NetworkMode"] == "none"


@pytest.mark.slow
@NPM
def test_npm_memory_server_runs_isolated_and_keeps_its_file_in_the_work_folder(mcp_isolation):
    server = MCPServerConfig(
        name="memory",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-memory"),
        env={"MEMORY_FILE_PATH": "{workdir}/memory.jsonl"},
    )
    with MCPEnvironment(server, call_timeout=120, isolation=mcp_isolation) as env:
        env.reset(TASK)
        entity = {"name": "trajforge", "entityType": "project", "observations": ["collects trajectories"]}
        created, _ = call(env, "create_entities", entities=[entity])
        assert not created.is_error
        _, graph = call(env, "read_graph")
        assert "collects trajectories" in graph["content"][0]["text"]
        assert env._container.container.attrs["HostConfig"]["NetworkMode"] == "none"
        env.reset(TASK)  # a fresh container: nothing carried over
        _, graph = call(env, "read_graph")
        assert "trajforge" not in graph["content"][0]["text"]


def test_an_unknown_isolation_is_refused():
    with pytest.raises(ValueError, match="isolation must be one of container, host"):
        MCPServerConfig(name="x", command="python3", isolation="vm")
    with pytest.raises(ValueError, match="network must be one of none, allow"):
        MCPServerConfig(name="x", command="python3", network="host")
    with pytest.raises(InfraError, match="refusing to mount / into its sandbox"):
        from trajforge.sandboxes.mcp_container import ServerContainer

        ServerContainer(MCPServerConfig(name="x", command="npx", args=("/",)), Isolation(client=object())).start(
            ["/"], {}
        )


def test_network_allow_gives_the_server_dockers_bridge(mcp_isolation, docker_client):
    from trajforge.sandboxes.bundled_servers import bundled_server

    isolated = Isolation(image=mcp_isolation.image, run_id="pytest-network", client=docker_client)
    with MCPEnvironment(bundled_server("kvstore", network="allow"), isolation=isolated) as env:
        env.reset(TASK)
        (container,) = docker_client.containers.list(filters={"label": "trajforge.run=pytest-network"})
        assert container.attrs["HostConfig"]["NetworkMode"] == "bridge"
        assert container.attrs["HostConfig"]["ReadonlyRootfs"] and container.attrs["HostConfig"]["CapDrop"] == ["ALL"]
