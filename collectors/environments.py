"""Build the environment a suite asks for (terminal, MCP, browser), wrapped in fault injection when configured."""

import os
from dataclasses import dataclass

from sandboxes.base import Sandbox
from sandboxes.mcp_env import MCPEnvironment, MCPServerConfig
from sandboxes.servers import bundled_server


@dataclass(frozen=True)
class Settings:
    """What the command line decides for every environment of a run."""

    run_id: str = "adhoc"
    image: str | None = None  # the sandbox image: the terminal's, and the isolated MCP servers'
    command_timeout: float = 10.0
    docker_client: object = None


MCP_OPTIONS = ("isolation", "network", "mounts", "python_packages")


def mcp_server(spec: dict) -> MCPServerConfig:
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.items() if k in MCP_OPTIONS}
    if spec.get("server"):
        return bundled_server(spec["server"], **options)
    name = spec.get("name") or os.path.basename(spec.get("command") or spec.get("url") or "server")
    return MCPServerConfig(
        name=name,
        command=spec.get("command"),
        args=tuple(spec.get("args", ())),
        env=dict(spec.get("env", {})),
        url=spec.get("url"),
        **options,
    )


def mcp_isolation(settings: Settings):
    from sandboxes.mcp_container import Isolation

    extra = {"image": settings.image} if settings.image else {}
    return Isolation(run_id=settings.run_id, owner=os.getpid(), client=settings.docker_client, **extra)


def build_environment(spec: dict, settings: Settings, faults: dict | None = None, seed: int = 0) -> Sandbox:
    kind = spec.get("kind", "terminal")
    if kind == "terminal":
        from sandboxes.terminal import DockerTerminal

        env: Sandbox = DockerTerminal(
            image=settings.image,
            run_id=settings.run_id,
            owner=os.getpid(),
            command_timeout=settings.command_timeout,
            client=settings.docker_client,
        )
    elif kind == "mcp":
        server = mcp_server(spec)
        isolation = mcp_isolation(settings) if server.isolated else None
        env = MCPEnvironment(server, call_timeout=max(settings.command_timeout, 5.0), isolation=isolation)
    elif kind == "simulated":
        from sandboxes.simulated import SimulatedEnvironment

        env = SimulatedEnvironment(spec["url"], spec["model"], spec.get("instruction", ""), spec.get("action_space"))
    elif kind == "browser":
        from sandboxes.browser import BrowserEnvironment

        env = BrowserEnvironment(app=spec["app"], timeout=max(settings.command_timeout, 5.0))
    else:
        raise ValueError(f"unknown environment kind {kind!r}")
    if faults:
        from sandboxes.faults import FaultInjector

        env = FaultInjector(env, faults, seed)
    return env
