"""A configuration store: versioned keys with compare-and-set, prefix listing with cursors, and history."""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .paging import paginate


class Store:
    def __init__(self):
        self.history: dict[str, list[dict]] = {}

    def current(self, key: str) -> dict | None:
        versions = self.history.get(key)
        return versions[-1] if versions and not versions[-1]["deleted"] else None

    def set(self, key: str, value: str, expected_version: int | None = None) -> dict:
        if not key or len(key) > 200 or key.startswith("/") or " " in key:
            raise ToolError("keys are 1-200 characters, no spaces, not starting with '/'")
        now = self.current(key)
        version = now["version"] if now else 0
        if expected_version is not None and expected_version != version:
            raise ToolError(f"version conflict on {key!r}: expected {expected_version}, current {version}")
        entry = {"key": key, "value": value, "version": len(self.history.get(key, [])) + 1, "deleted": False}
        self.history.setdefault(key, []).append(entry)
        return entry


def seeded() -> Store:
    store = Store()
    for key, value in [
        ("app/name", "trajforge"),
        ("app/log_level", "info"),
        ("db/host", "127.0.0.1"),
        ("db/port", "5432"),
        ("db/pool_size", "10"),
        ("features/new_ui", "false"),
        ("features/beta_search", "true"),
        ("app/log_level", "debug"),
    ]:
        store.set(key, value)
    return store


def build_server(store: Store) -> MCPServer:
    mcp = MCPServer("kvstore", version="1.0", log_level="WARNING")

    @mcp.tool()
    def get(key: str) -> dict:
        """The current value and version of a key."""
        entry = store.current(key)
        if entry is None:
            raise ToolError(f"key not found: {key}")
        return {k: entry[k] for k in ("key", "value", "version")}

    @mcp.tool()
    def set(key: str, value: str, expected_version: int | None = None) -> dict:
        """Set a key; with expected_version, only if the current version matches (compare-and-set)."""
        entry = store.set(key, value, expected_version)
        return {k: entry[k] for k in ("key", "value", "version")}

    @mcp.tool()
    def delete(key: str) -> dict:
        """Delete a key (its history is kept)."""
        entry = store.current(key)
        if entry is None:
            raise ToolError(f"key not found: {key}")
        store.history[key].append({**entry, "version": entry["version"] + 1, "deleted": True})
        return {"deleted": key}

    @mcp.tool()
    def list_keys(prefix: str = "", limit: int = 5, cursor: str | None = None) -> dict:
        """Keys under a prefix, sorted, paginated."""
        keys = sorted(k for k in store.history if k.startswith(prefix) and store.current(k) is not None)
        return paginate(keys, limit, cursor)

    @mcp.tool()
    def history(key: str) -> dict:
        """Every version of a key, oldest first."""
        if key not in store.history:
            raise ToolError(f"key not found: {key}")
        return {"key": key, "versions": store.history[key]}

    return mcp


if __name__ == "__main__":
    build_server(seeded()).run()
