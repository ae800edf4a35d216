"""Build the environment a suite asks for (terminal, MCP, browser), wrapped in fault injection when configured."""

import os
from dataclasses import dataclass

from sandboxes.base import Environment
from sandboxes.mcp_env import MCPEnvironment, MCPServerConfig
from sandboxes.servers import bundled_server


@dataclass(frozen=True)
class Settings:
    """What the command line decides for every environment of a run."""

    run_id: str = "adhoc"
    image: str | None = None  # the terminal sandbox image
    command_timeout: float = 10.0
    docker_client: object = None


def mcp_server(spec: dict) -> MCPServerConfig:
    if spec.get("server"):
        return bundled_server(spec["server"])
    name = spec.get("name") or os.path.basename(spec.get("command") or spec.get("url") or "server")
    return MCPServerConfig(
        name=name,
        command=spec.get("command"),
        args=tuple(spec.get("args", ())),
        env=dict(spec.get("env", {})),
        url=spec.get("url"),
    )


def build_environment(spec: dict, settings: Settings, faults: dict | None = None, seed: int = 0) -> Environment:
    kind = spec.get("kind", "terminal")
    if kind == "terminal":
        from sandboxes.terminal import DockerTerminal

        env: Environment = DockerTerminal(
            image=settings.image,
            run_id=settings.run_id,
            owner=os.getpid(),
            command_timeout=settings.command_timeout,
            client=settings.docker_client,
        )
    elif kind == "mcp":
        env = MCPEnvironment(mcp_server(spec), call_timeout=max(settings.command_timeout, 5.0))
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
