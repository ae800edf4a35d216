"""Tool calls as MCP families write them: an Action, and the ToolCheck of a value."""

import json

from trajforge.schemas.actions import payload_text
from trajforge.schemas.records import Action


def call(tool: str, **arguments) -> Action:
    return Action(kind="tool_call", name=tool, content=payload_text(arguments))


def shown(name: str, value) -> str:
    """How a result's text shows `"name": value` (what a ToolCheck's `contains` looks for)."""
    return f"{json.dumps(name)}: {json.dumps(value, ensure_ascii=False)}"


def paged_calls(tool: str, total: int, size: dict[str, int], **arguments) -> list[Action]:
    """The calls that list `total` items page by page: `size` is the page size argument ({"limit": 3}); the first
    call has no cursor, each next one the cursor the last returned (sandboxes/servers/paging.py: cur_<offset>)."""
    (step,) = size.values()
    cursors = [{}] + [{"cursor": f"cur_{offset}"} for offset in range(step, total, step)]
    return [call(tool, **arguments, **size, **cursor) for cursor in cursors]
