"""MCP servers bundled with trajforge, each with real state and a task suite (collectors/suites/mcp-*.yaml).

Each runs as `python -m sandboxes.servers.<name>` over stdio; a fresh process per episode is a fresh state.
"""

import sys

from sandboxes.mcp_env import MCPServerConfig

BUNDLED = ("workspace", "issues", "kvstore", "search")


def bundled_server(name: str) -> MCPServerConfig:
    if name not in BUNDLED:
        raise ValueError(f"unknown bundled MCP server {name!r}; bundled: {', '.join(BUNDLED)}")
    return MCPServerConfig(name=name, command=sys.executable, args=("-m", f"sandboxes.servers.{name}"))
