"""The system prompt of paper §2.2: task ⊕ action space ⊕ initial state ⊕ demonstrations ⊕ simulation instruction.

Rendered with one Markdown header per non-empty part, so a rendered prompt can be split back into its parts.
"""

import re

from trajforge.schemas.records import SYSTEM_PROMPT_PARTS

HEADERS = {
    "task_description": "# Task",
    "action_space": "# Action space",
    "initial_state": "# Initial state",
    "demonstrations": "# Demonstrations",
    "simulation_instruction": "# Simulation instruction",
}
_HEADER_LINE = re.compile(r"^(" + "|".join(re.escape(h) for h in HEADERS.values()) + r")\n", flags=re.MULTILINE)
_PART_BY_HEADER = {h: part for part, h in HEADERS.items()}
EMPTY_ACTION_SPACE = "[]"


def render_system_prompt(parts: dict[str, str], untagged_part: str | None = None) -> str:
    """The prompt with a header per part; a lone `untagged_part` is rendered bare (what parsing reads back)."""
    present = [p for p in SYSTEM_PROMPT_PARTS if (parts.get(p) or "") not in ("", EMPTY_ACTION_SPACE)]
    if untagged_part is not None and present == [untagged_part]:
        return parts[untagged_part]
    sections = []
    for part in SYSTEM_PROMPT_PARTS:
        text = parts.get(part) or ""
        if part == "action_space" and text == EMPTY_ACTION_SPACE:
            continue
        if text:
            sections.append(f"{HEADERS[part]}\n{text}")
    return "\n\n".join(sections)


def parse_system_prompt(text: str, untagged_part: str = "task_description") -> dict[str, str]:
    """Split a rendered prompt into its parts; text with no headers goes whole into `untagged_part`."""
    parts = {part: "" for part in SYSTEM_PROMPT_PARTS}
    parts["action_space"] = EMPTY_ACTION_SPACE
    matches = list(_HEADER_LINE.finditer(text))
    if not matches or text[: matches[0].start()].strip():
        parts[untagged_part] = text
        return parts
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        parts[_PART_BY_HEADER[match.group(1)]] = body[:-2] if body.endswith("\n\n") else body
    return parts


def has_sections(text: str) -> bool:
    """True when the text is a rendered prompt that starts with one of the part headers."""
    match = _HEADER_LINE.search(text)
    return match is not None and not text[: match.start()].strip()
