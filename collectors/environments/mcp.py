"""`kind: mcp`: a bundled `server`, or any server by `command`/`args`/`env` (stdio) or `url` (streamable HTTP).

A stdio MCP server runs in a fresh hardened container per episode (`isolation: container`, the default) with no
network (`network: none`, the default; `allow` for a server that must reach an API); `isolation: host` runs it on
the host, as trajforge's user, and is warned about. A `url` server is not isolated by trajforge."""

import os
from collections.abc import Callable, Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import model_validator

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import InfraError, Sandbox, ToolCheck
from trajforge.sandboxes.bundled_servers import bundled_server
from trajforge.schemas.records import Action

HOST_WARNING = (
    "warning: MCP suite(s) {names} run their server on this machine, not in a sandbox (`isolation: host`): "
    "every tool call acts with your user's files and network."
)


@KINDS.register()
class MCPSpec(KindSpec):
    kind: Literal["mcp"] = "mcp"
    name: str | None = None
    server: str | None = None
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    isolation: Literal["container", "host"] = "container"
    network: Literal["none", "allow"] = "none"
    mounts: list[str] = []  # host folders a stdio server needs, mounted read-only at the same path
    python_packages: list[str] = []  # PyPI requirements of a Python stdio server (installed once, into the cache)
    setup_types = (Action,)
    check_types = (ToolCheck,)

    @model_validator(mode="after")
    def _a_usable_server(self):
        self.server_config()  # one of command/url, a known bundled server, valid options: said where the spec is
        return self

    def server_config(self):
        """The sandboxes.mcp_env.MCPServerConfig (imported here: the MCP SDK is slow to import)."""
        from trajforge.sandboxes.mcp_env import MCPServerConfig

        options = {
            "isolation": self.isolation,
            "network": self.network,
            "mounts": tuple(self.mounts),
            "python_packages": tuple(self.python_packages),
        }
        options = {k: v for k, v in options.items() if k in self.model_fields_set}
        if self.server:
            return bundled_server(self.server, **options)
        name = self.name or os.path.basename(self.command or self.url or "server")
        return MCPServerConfig(
            name=name, command=self.command, args=tuple(self.args), env=dict(self.env), url=self.url, **options
        )

    def build(self, settings: Settings) -> Sandbox:
        from trajforge.sandboxes.mcp_env import MCPEnvironment

        server = self.server_config()
        isolation = isolation_of(settings) if server.isolated else None
        return MCPEnvironment(server, call_timeout=max(settings.command_timeout, 5.0), isolation=isolation)

    def needs_docker(self) -> bool:
        return self.server_config().isolated

    def prepare(self, settings: Settings, log: Callable[[str], None]) -> str | None:
        """Install an isolated server's npm/PyPI packages into the host cache before the first episode."""
        from trajforge.sandboxes.mcp_container import ServerContainer

        server = self.server_config()
        if not server.isolated:
            return None
        try:
            ServerContainer(server, isolation_of(settings)).prepare(list(server.args), log=log)
        except InfraError as exc:  # its episodes will fail as infra_error, with this reason; the others run
            return str(exc)
        return None

    def manifest_policy(self) -> dict:
        """What the manifest records of the suite's isolation: stdio servers' isolation and network, HTTP servers'
        host (trajforge cannot isolate a remote server)."""
        server = self.server_config()
        if server.url:
            return {"transport": "http", "isolation": "none (remote)", "url_host": urlsplit(server.url).hostname}
        return {"transport": "stdio", "isolation": server.isolation, "network": server.network}

    @classmethod
    def run_notes(cls, specs: Mapping[str, "MCPSpec"]) -> tuple[dict, list[str]]:
        policies = {name: spec.manifest_policy() for name, spec in specs.items()}
        on_host = sorted(name for name, policy in policies.items() if policy.get("isolation") == "host")
        return {"mcp": policies}, [HOST_WARNING.format(names=", ".join(on_host))] if on_host else []


def isolation_of(settings: Settings):
    """How the run's isolated servers start: its sandbox image, Docker client and container labels."""
    from trajforge.sandboxes.mcp_container import Isolation

    extra = {"image": settings.image} if settings.image else {}
    return Isolation(run_id=settings.run_id, owner=os.getpid(), client=settings.docker_client, **extra)
