"""A turn's action as the text a model reads: its content, preceded by "{name} " when the action has a name (a tool
or browser call: the arguments alone do not say which tool ran). Training renders it as the user message, and the
turns that evaluation and curation predict show it the same way."""

from collections.abc import Mapping


def action_text(action: Mapping) -> str:
    name = action.get("name")
    return f"{name} {action['content']}" if name else action["content"]
