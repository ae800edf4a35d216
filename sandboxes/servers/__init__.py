"""MCP servers bundled with trajforge, each with real state and a task suite (collectors/suites/mcp-*.yaml).

Each runs as `python -m sandboxes.servers.<name>` over stdio; a fresh process per episode is a fresh state.
Isolated (the default), it runs in the episode's container with this `sandboxes` folder mounted read-only at the
same path and the image's python3; so nothing here imports beyond the standard library, `mcp` and `duckdb`.
"""

import sys
from pathlib import Path

BUNDLED = ("workspace", "issues", "kvstore", "search")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds `sandboxes/`


def bundled_server(name: str, **options):
    """The server's config; `options` (isolation, network) as a suite sets them."""
    from trajforge.sandboxes.mcp_env import MCPServerConfig

    if name not in BUNDLED:
        raise ValueError(f"unknown bundled MCP server {name!r}; bundled: {', '.join(BUNDLED)}")
    return MCPServerConfig(
        name=name,
        command=sys.executable,
        args=("-m", f"sandboxes.servers.{name}"),
        mounts=(str(PACKAGE_ROOT / "sandboxes"),),
        python_path=(str(PACKAGE_ROOT),),
        **options,
    )
