"""MCP servers bundled with trajforge, each with real state and a task suite (collectors/suites/mcp-*.yaml).

Each runs as `python -m sandboxes.servers.<name>` over stdio; a fresh process per episode is a fresh state.
Isolated (the default), it runs in the episode's container with this `sandboxes` folder mounted read-only at the
same path and the image's python3; so nothing here imports beyond the standard library, `mcp` and `duckdb`, and
the servers are registered on the host side, in sandboxes/bundled_servers.py.
"""
