"""A stdio MCP server inside its own episode container, spoken to over `docker exec -i`.

The container has the terminal sandbox's hardening (sandboxes/containers.py): no network unless the suite says
`network: allow`, every capability dropped, uid 1000, a read-only root, a tmpfs /work (the server's `{workdir}`)
and pids/memory/CPU limits. Read-only mounts: the package cache (sandboxes/server_packages.py), the folder of a
server given as a local script (at the same path), and the folders a server config names (`mounts`).
"""

import os
import sys
from dataclasses import dataclass, field

import docker
import docker.errors
from mcp.client.stdio import StdioServerParameters, get_default_environment

from trajforge.sandboxes.base import InfraError
from trajforge.sandboxes.containers import Limits, start_container
from trajforge.sandboxes.image import ImageRecipe
from trajforge.sandboxes.server_packages import (
    MOUNT,
    NPM_CACHE,
    PackageCache,
    PackageInstallError,
    bundled_requirements,
    npx_package,
)

CONTAINER_WORKDIR = "/work"
SYSTEM_FOLDERS = ("/usr/", "/bin/", "/sbin/", "/lib", "/etc/", "/proc/", "/sys/", "/dev/")
# npm inside an episode: offline, logs and update checks off. npm rewrites its cache index on every lookup (cacache
# compacts the bucket it reads), so a read-only cache cannot answer: npx gets a cache in the container's /tmp whose
# index (small) is copied from the read-only one, with the package contents and npx's installs linked, read-only.
EPISODE_NPM_CACHE = "/tmp/npm-cache"
NPX_FROM_CACHE = (
    f'r={NPM_CACHE}; c={EPISODE_NPM_CACHE}; mkdir -p "$c/_cacache" && cp -r "$r/_cacache/index-v5" "$c/_cacache/" '
    '&& ln -s "$r/_cacache/content-v2" "$c/_cacache/" && ln -s "$r/_npx" "$c/" && exec npx "$@"'
)
NPM_ENV = {
    "npm_config_cache": EPISODE_NPM_CACHE,
    "npm_config_offline": "true",
    "npm_config_update_notifier": "false",
    "npm_config_logs_max": "0",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
}


@dataclass(frozen=True)
class Isolation:
    """What every isolated server of a run gets: the image, the run's labels, limits, the package cache."""

    image: str = field(default_factory=lambda: ImageRecipe().tag)
    run_id: str = "adhoc"
    owner: int = field(default_factory=os.getpid)
    limits: Limits = Limits()
    client: object = None
    cache: PackageCache = field(default_factory=PackageCache.default)


def is_host_python(command: str) -> bool:
    """The interpreter running trajforge (or a bare `python3`): inside the container that is the image's python3."""
    if os.path.basename(command) in ("python", "python3", f"python3.{sys.version_info.minor}"):
        return True
    return os.path.realpath(command) == os.path.realpath(sys.executable)


def script_mounts(command: str, args: list[str]) -> list[str]:
    """Host folders a server given as a local script needs: each existing absolute path's folder (a file's parent).
    The image's own system folders are never replaced, nor is the work folder."""
    folders = []
    for item in [command, *args]:
        if not os.path.isabs(item) or not os.path.exists(item) or (item == command and is_host_python(item)):
            continue
        if item.startswith(SYSTEM_FOLDERS):
            continue
        folder = item if os.path.isdir(item) else os.path.dirname(item)
        if folder not in folders:
            folders.append(folder)
    return folders


def container_command(command: str) -> str:
    """The host's Python becomes the image's python3, a system binary (/usr/bin/node) the image's own."""
    if is_host_python(command):
        return "python3"
    return os.path.basename(command) if command.startswith(SYSTEM_FOLDERS) else command


class ServerContainer:
    """One episode's container for one stdio server; `start` returns how to spawn the server inside it."""

    def __init__(self, server, isolation: Isolation):
        self.server = server
        self.isolation = isolation
        self.client = isolation.client or docker.from_env()
        self.container = None

    def prepare(self, args: list[str], log=print) -> dict[str, str]:
        """Install what the server needs into the package cache (once per machine); return the container's env."""
        server, isolation = self.server, self.isolation
        environment = dict(NPM_ENV)
        try:
            spec = npx_package(server.command, tuple(args))
            if spec:
                isolation.cache.ensure_npm(spec, isolation.image, log=log)
            if is_host_python(server.command):
                requirements = bundled_requirements() + tuple(server.python_packages)
                packages = isolation.cache.ensure_python(requirements, isolation.image, log=log)
                environment["PYTHONPATH"] = ":".join([*server.python_path, packages])
        except PackageInstallError as exc:
            raise InfraError(f"MCP server {server.name}: its packages could not be installed: {exc}") from exc
        return environment

    def start(self, args: list[str], env: dict[str, str], log=print) -> StdioServerParameters:
        server, isolation = self.server, self.isolation
        command = container_command(server.command)
        mounts = {str(isolation.cache.root): MOUNT}
        # From the configured args: `{workdir}` is the container's own folder, never a host path to mount.
        for folder in [*script_mounts(server.command, list(server.args)), *server.mounts]:
            if folder == "/" or f"{CONTAINER_WORKDIR}/".startswith(folder.rstrip("/") + "/"):
                raise InfraError(
                    f"MCP server {server.name}: refusing to mount {folder} into its sandbox (it would hide the "
                    f"sandbox's own {CONTAINER_WORKDIR}); give the server a narrower folder"
                )
            mounts[folder] = folder
        environment = self.prepare(args, log)
        try:
            isolation.cache.root.mkdir(parents=True, exist_ok=True)
            self.container = start_container(
                self.client,
                isolation.image,
                isolation.run_id,
                isolation.limits,
                isolation.owner,
                network=server.network,
                read_only_mounts=mounts,
                environment=environment,
            )
        except docker.errors.DockerException as exc:
            self.remove()
            raise InfraError(
                f"could not start the sandbox of MCP server {server.name} ({isolation.image}): {exc}"
            ) from exc
        # Secrets stay out of argv: `-e NAME` makes docker exec copy the value from its own environment.
        exec_args = ["exec", "-i", "-w", CONTAINER_WORKDIR, *[a for name in env for a in ("-e", name)]]
        argv = [command, *args]
        if os.path.basename(command) == "npx":
            argv = ["sh", "-c", NPX_FROM_CACHE, "npx", *args]
        return StdioServerParameters(
            command="docker",
            args=[*exec_args, self.container.id, *argv],
            env={**get_default_environment(), **env},
        )

    def image_digest(self) -> str | None:
        return self.container.image.id if self.container is not None else None

    def remove(self) -> None:
        if self.container is None:
            return
        try:
            self.container.remove(force=True)
        except docker.errors.DockerException:
            pass
        self.container = None
