"""Packages of stdio MCP servers (npm, PyPI), installed once on the host into a cache folder that every isolated
server's container mounts read-only at MOUNT. An episode has no network, so `npx -y PKG` and `python3 -m PKG` must
find their package there: npm packages go into an npm cache (the `_npx` folder npx itself would fill), PyPI ones
into a `pip --target` folder built for the image's Python.

Layout under the cache root (TRAJFORGE_SERVER_CACHE, default ~/.cache/trajforge/servers):
  npm/           npm's cache (`npm_config_cache` inside the container), filled by the image's own npm
  python/<hash>/ one folder per set of PyPI requirements, for the image's Python version and this machine
  ready/<hash>   a stamp per finished install, so a crashed install is redone, never half-used
"""

import fcntl
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from trajforge.schemas.hashing import config_hash
from trajforge.schemas.storage import cache_root

MOUNT = "/opt/trajforge/cache"
NPM_CACHE = f"{MOUNT}/npm"
HOST_CA = "/opt/trajforge/host-ca.crt"  # only in the install container, never in an episode
# What the bundled servers (sandboxes/servers) import beyond the standard library, pinned to the host's versions so
# a server behaves the same isolated or not. Every Python server in a container gets these.
BUNDLED_DISTRIBUTIONS = ("mcp", "duckdb", "duckdb-extension-fts")
INSTALL_TIMEOUT_S = 900


class PackageInstallError(RuntimeError):
    pass


def default_root() -> Path:
    return Path(os.environ.get("TRAJFORGE_SERVER_CACHE") or cache_root() / "servers")


def npx_package(command: str, args: tuple[str, ...]) -> str | None:
    """The package `npx` runs: `--package=PKG`/`-p PKG`, else the first argument that is not an option."""
    if os.path.basename(command) != "npx":
        return None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--package="):
            return arg.split("=", 1)[1]
        if arg in ("-p", "--package") and rest:
            return rest.pop(0)
        if arg == "--":
            return rest[0] if rest else None
        if not arg.startswith("-"):
            return arg
    return None


def bundled_requirements() -> tuple[str, ...]:
    return tuple(f"{name}=={importlib.metadata.version(name)}" for name in BUNDLED_DISTRIBUTIONS)


@dataclass(frozen=True)
class PackageCache:
    root: Path

    @classmethod
    def default(cls) -> "PackageCache":
        return cls(default_root())

    # -- where things are ----------------------------------------------------------------------------------
    def python_folder(self, requirements: tuple[str, ...], python_version: str) -> str:
        """The folder name, under python/, of one requirement set for one Python version and machine."""
        return config_hash({"requirements": sorted(requirements), "python": python_version, "arch": _arch()})[:16]

    def _stamp(self, key: str) -> Path:
        return self.root / "ready" / config_hash({"key": key})[:24]

    def ready(self, key: str) -> bool:
        return self._stamp(key).exists()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One installer at a time, across threads and processes (parallel episodes, sharded runs)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _install_once(self, key: str, install: Callable[[], None]) -> None:
        if self.ready(key):
            return
        with self._locked():
            if self.ready(key):  # another thread or process finished it while we waited
                return
            install()
            stamp = self._stamp(key)
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(key + "\n")

    # -- installs ------------------------------------------------------------------------------------------
    def ensure_python(self, requirements: tuple[str, ...], image: str, log=print) -> str:
        """Install the requirements (wheels only) for the image's Python, byte-compiled by that Python (a read-only
        folder cannot cache .pyc files, and compiling mcp and pydantic at each start costs seconds); return the
        folder as the container sees it."""
        python_version = image_python(image)
        folder = self.python_folder(requirements, python_version)
        target = self.root / "python" / folder

        def install() -> None:
            log(f"installing {', '.join(requirements)} for the sandbox's Python {python_version} into {target}")
            _run([*pip_command(target, python_version), *requirements])
            _run(_in_image(image, {target: "/packages"}, ["python3", "-m", "compileall", "-q", "-j0", "/packages"]))

        self._install_once(f"python:{folder}", install)
        return f"{MOUNT}/python/{folder}"

    def ensure_npm(self, spec: str, image: str, log=print) -> None:
        """Fill the npm cache with `spec` by running npx once, with network, inside the sandbox image itself:
        the episode's npx then finds exactly what its own version put there."""

        def install() -> None:
            log(f"installing npm package {spec} into {self.root / 'npm'} (with the sandbox image's npm)")
            (self.root / "npm").mkdir(parents=True, exist_ok=True)
            try:
                _run(npm_install_command(self.root, image, spec))
            except PackageInstallError as exc:
                if shutil.which("npm") is None:
                    raise
                # No network for containers here (a daemon without a bridge): the host's npm fills the same cache.
                log(f"the sandbox image's npm could not install {spec} ({str(exc)[-300:]}); trying the host's npm")
                _run(["npm", "exec", "--yes", f"--package={spec}", "--", "true"], env_cache=self.root / "npm")

        self._install_once(f"npm:{spec}", install)


def pip_command(target: Path, python_version: str) -> list[str]:
    arch = _arch()
    platforms = [f"manylinux_2_{minor}_{arch}" for minor in (36, 34, 31, 28, 17)] + [f"manylinux2014_{arch}"]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--upgrade",
        "--target",
        str(target),
        "--python-version",
        python_version,
        "--implementation",
        "cp",
        "--only-binary=:all:",
        *[a for p in platforms for a in ("--platform", p)],
    ]


def npm_install_command(root: Path, image: str, spec: str) -> list[str]:
    """`npm exec --yes --package=SPEC` in a throwaway container of the sandbox image, with network, writing into the
    host's npm cache: the same npx the episode runs, so the same `_npx` folder and metadata."""
    env = {"npm_config_cache": NPM_CACHE, "npm_config_update_notifier": "false", "npm_config_registry": _npm_registry()}
    mounts = {root / "npm": NPM_CACHE}
    if ca := host_ca_bundle():  # a registry behind a TLS-inspecting proxy: trust what the host trusts
        mounts[Path(ca)] = f"{HOST_CA}:ro"
        env["NODE_EXTRA_CA_CERTS"] = HOST_CA
    command = ["npm", "exec", "--yes", f"--package={spec}", "--", "true"]
    return _in_image(image, mounts, command, env=env, network=True)


def host_ca_bundle() -> str | None:
    for candidate in (
        os.environ.get("NODE_EXTRA_CA_CERTS"),
        os.environ.get("SSL_CERT_FILE"),
        "/etc/ssl/certs/ca-certificates.crt",
    ):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def _in_image(
    image: str, mounts: dict[Path, str], command: list[str], env: dict | None = None, network: bool = False
) -> list[str]:
    """A throwaway container of the sandbox image, as root, with these host folders mounted read-write."""
    volumes = [a for host, inside in mounts.items() for a in ("--volume", f"{host}:{inside}")]
    envs = [a for k, v in (env or {}).items() for a in ("--env", f"{k}={v}")]
    net = [] if network else ["--network", "none"]
    return ["docker", "run", "--rm", "--user", "0:0", *net, *volumes, *envs, "--workdir", "/tmp", image, *command]


_PYTHON_VERSIONS: dict[str, str] = {}


def image_python(image: str) -> str:
    """The image's Python as major.minor (the cached wheels are built for it), asked once per image."""
    if image not in _PYTHON_VERSIONS:
        probe = "import sys; print('%d.%d' % sys.version_info[:2])"
        try:
            out = subprocess.run(
                _in_image(image, {}, ["python3", "-c", probe]), capture_output=True, text=True, timeout=120
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PackageInstallError(f"could not run python3 in the sandbox image {image}: {exc}") from exc
        if out.returncode != 0:
            raise PackageInstallError(f"could not run python3 in the sandbox image {image}: {out.stderr[-500:]}")
        _PYTHON_VERSIONS[image] = out.stdout.strip()
    return _PYTHON_VERSIONS[image]


def _npm_registry() -> str:
    try:
        out = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip().startswith("http"):
            return out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "https://registry.npmjs.org/"


def _arch() -> str:
    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def _run(cmd: list[str], env_cache: Path | None = None) -> None:
    env = None
    if env_cache is not None:
        env = {**os.environ, "npm_config_cache": str(env_cache), "npm_config_update_notifier": "false"}
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=env, cwd="/tmp")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PackageInstallError(f"{' '.join(cmd[:4])} ... failed: {exc}") from exc
    if result.returncode != 0:
        tail = (result.stdout[-1000:] + "\n" + result.stderr[-2000:]).strip()
        raise PackageInstallError(f"{' '.join(cmd[:4])} ... failed ({result.returncode}):\n{tail}")
