"""The MCP servers bundled in sandboxes/servers/, registered here on the host: the servers themselves import
nothing of trajforge (they run in a container that mounts only `sandboxes/`; see sandboxes/servers/__init__.py)."""

import sys
from pathlib import Path

from trajforge.schemas.registry import Registry

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the folder that holds `sandboxes/`

SERVERS: Registry[str] = Registry("bundled MCP server")  # name -> the module `python -m` runs
for _name in ("workspace", "issues", "kvstore", "search"):
    SERVERS.add(_name, f"sandboxes.servers.{_name}")


def bundled_server(name: str, **options):
    """The server's config; `options` (isolation, network) as a suite sets them."""
    from trajforge.sandboxes.mcp_env import MCPServerConfig

    return MCPServerConfig(
        name=name,
        command=sys.executable,
        args=("-m", SERVERS.get(name)),
        mounts=(str(PACKAGE_ROOT / "sandboxes"),),
        python_path=(str(PACKAGE_ROOT),),
        **options,
    )
