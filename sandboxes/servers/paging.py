"""Cursor pagination shared by the bundled servers: deterministic opaque cursors over a sorted list."""

from mcp.server.mcpserver.exceptions import ToolError

MAX_PAGE_SIZE = 50


def paginate(items: list, page_size: int, cursor: str | None) -> dict:
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ToolError(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    start = 0
    if cursor:
        if not cursor.startswith("cur_") or not cursor[4:].isdigit() or int(cursor[4:]) > len(items):
            raise ToolError(f"invalid cursor: {cursor!r}")
        start = int(cursor[4:])
    end = start + page_size
    more = end < len(items)
    return {"results": items[start:end], "has_more": more, "next_cursor": f"cur_{end}" if more else None}
