"""Any MCP server as an environment, over stdio (command, args, env) or streamable HTTP (URL), with the mcp 2.x SDK.

A stdio server runs inside a fresh, hardened container per episode by default (sandboxes/mcp_container.py);
`isolation="host"` runs it as a child process of trajforge instead. trajforge cannot isolate an HTTP server: it
runs wherever its URL points, with whatever access it has there.

The action space is the server's tools/list (name, description, input schema); an action is a tool call and
its observation the result as the server sent it: `content`, `structuredContent` and `isError`, as JSON.
A server that crashes, hangs or speaks broken JSON-RPC ends the episode with an InfraError.
"""

import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from trajforge.sandboxes.base import (
    InfraError,
    Sandbox,
    Task,
    TaskSetupError,
    ToolCheck,
    json_arguments,
    tool_check_action,
)  # fmt: skip
from trajforge.sandboxes.starting_state import StartingState
from trajforge.schemas.check_turn import check_turn
from trajforge.schemas.records import Action, Observation
from trajforge.schemas.turn_text import action_text

WORKDIR = "{workdir}"  # in a server's args and env: the episode's fresh work folder
ISOLATIONS = ("container", "host")
NETWORKS = ("none", "allow")
STDERR_TAIL = 1500
# The handshake and tools/list may take longer than a tool call: a container to start, an interpreter and the SDK to
# import (seconds on a busy machine).
START_TIMEOUT_S = 60.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MCPServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    isolation: str = "container"  # stdio only: container (the default) or host (an explicit opt-out)
    network: str = "none"  # inside the container: none, or allow (for servers that must reach an API)
    mounts: tuple[str, ...] = ()  # host folders the server needs, mounted read-only at the same path
    python_path: tuple[str, ...] = ()  # import roots of a Python server (PYTHONPATH)
    python_packages: tuple[str, ...] = ()  # PyPI requirements of a Python server, installed into the cache

    def __post_init__(self):
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give exactly one of `command` (stdio) or `url` (HTTP)")
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"MCP server {self.name!r}: isolation must be one of {', '.join(ISOLATIONS)}")
        if self.network not in NETWORKS:
            raise ValueError(f"MCP server {self.name!r}: network must be one of {', '.join(NETWORKS)}")

    @property
    def isolated(self) -> bool:
        return self.url is None and self.isolation == "container"

    @property
    def backend(self) -> str:
        return "mcp-http" if self.url else "mcp-stdio"


def result_json(result) -> str:
    """The tool result as the server sent it, without the SDK's transport metadata."""
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    data = {k: data[k] for k in ("content", "structuredContent", "isError") if k in data}
    return json.dumps(data, ensure_ascii=False)


def result_text(result) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


class MCPEnvironment(Sandbox):
    def __init__(self, server: MCPServerConfig, call_timeout: float = 30.0, log_dir: str | None = None, isolation=None):
        """`isolation` (sandboxes.mcp_container.Isolation): the image, labels and package cache of an isolated
        server; the defaults when not given."""
        self.server = server
        self.isolation = isolation
        self._container = None
        self._log_start = 0
        self.name = f"mcp:{server.name}"
        self.call_timeout = call_timeout
        self.start_timeout = max(call_timeout, START_TIMEOUT_S)
        self.log_dir = log_dir or tempfile.gettempdir()
        self._portal_cm = None
        self._portal = None
        self._client_cm = None
        self._client = None
        self._tools: list[dict] = []
        self._log = None
        self._workdir: str | None = None
        self._greeting = ""
        self._setup_results: list[tuple[str, str]] = []

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self, task: Task) -> Observation:
        self.close()
        try:
            self._connect()
            self._tools = self._list_tools()
        except InfraError:
            self.close()
            raise
        self._setup_results = []
        for setup in task.setup:
            if isinstance(setup, Action):
                observation = self.step(setup)
                if observation.is_error:
                    raise TaskSetupError(f"task setup call {setup.name} failed: {observation.content[:500]}")
                self._setup_results.append((action_text(setup.model_dump()), observation.content))
            else:
                raise TaskSetupError(f"an MCP task's setup is tool calls, got {setup!r}")
        info = self._client.server_info
        names = ", ".join(t["name"] for t in self._tools)
        version = f" {info.version}" if info and info.version else ""
        self._greeting = f"Connected to MCP server {self.server.name}{version}. Tools: {names}"
        return Observation(content=self._greeting)

    def starting_state(self, task: Task) -> StartingState:
        """The server's greeting and tools, and its seed data: the setup's calls and what they returned."""
        return StartingState(observation=self._greeting, setup=list(self._setup_results), action_space=self._tools)

    def _connect(self) -> None:
        args, cwd, env = list(self.server.args), self.server.cwd, dict(self.server.env)
        if self.server.isolated:
            workdir = "/work"  # the container's tmpfs, fresh with the container
        elif any(WORKDIR in a for a in args + list(env.values())):  # a fresh folder (also the cwd) per episode
            self._workdir = cwd = workdir = tempfile.mkdtemp(prefix=f"trajforge-{self.server.name}-")
        else:
            workdir = None
        if workdir is not None:
            args = [a.replace(WORKDIR, workdir) for a in args]
            env = {k: v.replace(WORKDIR, workdir) for k, v in env.items()}
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        if self.server.url:
            target: Any = self.server.url
        else:
            log_path = os.path.join(self.log_dir, f"trajforge-mcp-{self.server.name}-{os.getpid()}.log")
            self._log = open(log_path, "a+")  # noqa: SIM115 - lives as long as the server process
            self._log_start = self._log.tell()
            if self.server.isolated:
                params = self._start_container(args, env)
            else:
                if self.server.python_path:
                    env["PYTHONPATH"] = os.pathsep.join(self.server.python_path)
                params = StdioServerParameters(command=self.server.command, args=args, env=env or None, cwd=cwd)
            target = stdio_client(params, errlog=self._log)
        self._client_cm = self._portal.wrap_async_context_manager(
            Client(target, read_timeout_seconds=self.start_timeout, mode="legacy")
        )
        try:
            self._client = self._client_cm.__enter__()
        except BaseException as exc:  # noqa: BLE001 - spawn failures, handshake errors, timeouts alike
            self._client_cm = None
            raise InfraError(
                f"could not connect to MCP server {self.server.name}: {_describe(exc)}{self._stderr_tail()}"
            ) from exc

    def _start_container(self, args: list[str], env: dict[str, str]):
        from trajforge.sandboxes.mcp_container import Isolation, ServerContainer

        self._container = ServerContainer(self.server, self.isolation or Isolation())
        return self._container.start(args, env, log=log.info)

    def _stderr_tail(self) -> str:
        """What the server wrote to stderr during this episode (its last lines), for the error message."""
        if self._log is None:
            return ""
        try:
            self._log.flush()
            with open(self._log.name, errors="replace") as f:
                f.seek(self._log_start)
                tail = f.read()[-STDERR_TAIL:].strip()
        except OSError:
            return ""
        return f"\nserver stderr (last lines):\n{tail}" if tail else ""

    def _list_tools(self) -> list[dict]:
        tools, cursor = [], None
        while True:
            page = self._call(lambda c=cursor: self._client.list_tools(cursor=c), "tools/list")
            tools += [
                {"name": t.name, "description": t.description or "", "input_schema": t.input_schema} for t in page.tools
            ]
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                return tools

    def _call(self, fn, what: str):
        try:
            return self._portal.call(fn)
        except BaseException as exc:  # noqa: BLE001 - whatever the transport raises, the server is unusable
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise InfraError(
                f"MCP server {self.server.name} failed during {what}: {_describe(exc)}{self._stderr_tail()}"
            ) from exc

    def close(self) -> None:
        for attr in ("_client_cm", "_portal_cm"):
            cm = getattr(self, attr)
            if cm is not None:
                try:
                    cm.__exit__(None, None, None)
                except BaseException:  # noqa: BLE001,S110 - a dead server cannot be closed politely
                    pass
                setattr(self, attr, None)
        self._client = self._portal = None
        if self._container is not None:
            self._container.remove()
            self._container = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def action_space(self) -> list[dict]:
        return self._tools

    def describe(self) -> dict:
        info = self._client.server_info if self._client else None
        described = {
            "name": self.name,
            "version": info.version if info and info.version else None,
            "backend": self.server.backend,
        }
        if self._container is not None:
            described["image_digest"] = self._container.image_digest()
        return described

    # -- actions -----------------------------------------------------------------------------------------
    def step(self, action: Action) -> Observation:
        if self._client is None:
            raise RuntimeError("step() before reset()")
        if action.kind != "tool_call" or not action.name:
            return Observation(
                content="this environment takes tool calls (kind tool_call, with a tool name)", is_error=True
            )
        arguments = json_arguments(action)
        if arguments is None:
            return Observation(content="tool arguments must be a JSON object", is_error=True)
        result = self._call(
            lambda: self._client.call_tool(action.name, arguments, self.call_timeout), f"tools/call {action.name}"
        )
        return Observation(content=result_json(result), format="json", is_error=bool(result.is_error))

    def check(self, task: Task) -> bool | None:
        """A ToolCheck: call its tool; success when the result is no error and its text has `contains`."""
        self._check_turn = {}  # none recorded unless this check runs (never the previous episode's)
        if not isinstance(check := task.check, ToolCheck):
            return None
        result = self._call(lambda: self._client.call_tool(check.tool, check.arguments, self.call_timeout), "the check")
        self._check_turn = check_turn(tool_check_action(check), result_json(result))
        return not result.is_error and check.contains in result_text(result)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
