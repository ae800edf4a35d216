"""The action codec: how an action is written as text in an agent's answer, and how an answer is read back.

The grammar (the first action in the answer is the action; the text around it is the agent's own, not part of it):

- shell: a fenced block whose info string is `bash` (`sh`, `shell` are read too). The fence is three backticks, or
  one more than the longest run of backticks in the command, so a command holding ``` still round-trips. The
  command is the block's lines as they are, joined by newlines.
- keystrokes: a fenced block with the info string `keys` (`keystrokes` is read too) holding the JSON object the
  Terminal takes (sandboxes/keystrokes.py): {"keystrokes": "ls -la\\n", "duration": 0.1}.
- tool_call and browser: the Hermes/Qwen convention, <tool_call>{"name": ..., "arguments": {...}}</tool_call>.
  A browser action is a tool call whose name is one of the browser's actions (`browser_actions`, from the
  environment's action space); any other name is an MCP tool call. Arguments may also come as a string holding a
  JSON object; missing or null arguments are {}. "</" inside the JSON is written "<\\/", so no parser, ours or a
  server's, mistakes text in the arguments for the closing tag.
- message: plain text. An answer holding no action is Done: the final answer, whose text is the message.

A fence opens at the start of a line (indented or not; the indent is taken off its lines) and closes at a line of
at least as many backticks. A </tool_call> may be missing at the very end of the answer (a server that stops on it
may cut it off). One leading <think>...</think> block is skipped. An answer with several actions gives the first,
and says how many it left. What cannot be read is Unparseable, with the reason: a block left open, a <tool_call>
that does not hold valid JSON or is followed by other text before </tool_call>, a tool call without a name,
arguments or a keys block that are not a JSON object. JSON payloads (keystrokes, tool arguments) read back in one
canonical form, `payload_text`; an action whose content is in that form round-trips exactly. Plain text has no
escape: a message holding a fence line or <tool_call> reads back as that action.
"""

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from trajforge.schemas.records import Action

SHELL_INFO, KEYS_INFO = "bash", "keys"
INFO_KINDS = {"bash": "shell", "sh": "shell", "shell": "shell", "keys": "keystrokes", "keystrokes": "keystrokes"}
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
_MARKER = re.compile(
    rf"^(?P<indent>[ \t]*)(?P<fence>`{{3,}})[ \t]*(?P<info>{'|'.join(INFO_KINDS)})[ \t]*\r?$|(?P<tool>{TOOL_OPEN})",
    re.MULTILINE | re.IGNORECASE,
)
_THINK = re.compile(r"\s*<think>.*?</think>\s*", re.DOTALL)
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Act:
    """The answer's action; `ignored` further actions in it were not taken (one action per turn)."""

    action: Action
    ignored: int = 0


@dataclass(frozen=True)
class Done:
    """An answer with no action: the final answer."""

    answer: str

    @property
    def action(self) -> Action:
        """The answer as a message action, for a record that keeps it."""
        return Action(kind="message", content=self.answer)


@dataclass(frozen=True)
class Unparseable:
    """An answer that holds an action the codec cannot read; `reason` says why."""

    reason: str


ParsedAnswer = Act | Done | Unparseable


class _Unreadable(ValueError):
    """Raised inside the parser only; parse_action turns it into Unparseable."""


def payload_text(value) -> str:
    """The canonical text of a JSON payload (keystrokes, tool arguments), as recorded in Action.content."""
    return json.dumps(value, ensure_ascii=False)


# --- write -----------------------------------------------------------------------------------------------------


def write_action(action: Action) -> str:
    """The action as an agent writes it (the grammar above)."""
    if action.kind == "shell":
        return _fenced(SHELL_INFO, action.content)
    if action.kind == "keystrokes":
        keys = _json_object(action.content)
        return _fenced(KEYS_INFO, action.content if keys is None else payload_text(keys))
    if action.kind in ("tool_call", "browser"):
        arguments = _json_object(action.content or "{}")
        call = {"name": action.name or "", "arguments": action.content if arguments is None else arguments}
        return f"{TOOL_OPEN}\n{_tag_safe(payload_text(call))}\n{TOOL_CLOSE}"
    return action.content


def _tag_safe(json_text: str) -> str:
    # "</" occurs in JSON text only inside strings, where "<\\/" reads back as the same "</".
    return json_text.replace("</", "<\\/")


def _fenced(info: str, body: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- parse -----------------------------------------------------------------------------------------------------


def parse_action(text: str, browser_actions: Collection[str] = ()) -> ParsedAnswer:
    """Read an agent's answer. `browser_actions`: the tool names that are browser actions in this environment."""
    think = _THINK.match(text)
    if think:
        text = text[think.end() :]
    marker = _MARKER.search(text)
    if marker is None:
        return Done(text)
    try:
        action, end = _read(text, marker, browser_actions)
    except _Unreadable as exc:
        return Unparseable(str(exc))
    return Act(action, ignored=_count_actions(text, end, browser_actions))


def _count_actions(text: str, start: int, browser_actions: Collection[str]) -> int:
    """How many actions follow `start` (an unreadable one counts, and ends the count)."""
    count = 0
    while marker := _MARKER.search(text, start):
        count += 1
        try:
            start = _read(text, marker, browser_actions)[1]
        except _Unreadable:
            break
    return count


def _read(text: str, marker: re.Match, browser_actions: Collection[str]) -> tuple[Action, int]:
    """The action at `marker` and where it ends."""
    if marker["tool"]:
        return _read_tool_call(text, marker.end(), browser_actions)
    body, end = _read_block(text, marker)
    if INFO_KINDS[marker["info"].lower()] == "shell":
        return Action(kind="shell", content=body), end
    keys = _json_object(body)
    if keys is None:
        raise _Unreadable(f"the ```{marker['info']} block must hold a JSON object such as " + '{"keystrokes": "ls\\n"}')
    return Action(kind="keystrokes", content=payload_text(keys)), end


def _read_block(text: str, marker: re.Match) -> tuple[str, int]:
    start = marker.end() + 1  # past the opening line's newline
    closing = re.compile(rf"^[ \t]*`{{{len(marker['fence'])},}}[ \t]*\r?$", re.MULTILINE)
    close = closing.search(text, start) if marker.end() < len(text) else None
    if close is None:
        raise _Unreadable(f"the ```{marker['info']} block is not closed")
    lines = text[start : max(start, close.start() - 1)].split("\n")
    indent = marker["indent"]
    return "\n".join(line.removeprefix(indent) for line in lines), close.end()


def _read_tool_call(text: str, start: int, browser_actions: Collection[str]) -> tuple[Action, int]:
    json_start = len(text) - len(text[start:].lstrip())
    try:
        call, json_end = json.JSONDecoder().raw_decode(text, json_start)
    except ValueError as exc:
        raise _Unreadable(f"the <tool_call> does not hold valid JSON: {exc}") from None
    rest = text[json_end:].lstrip()
    if rest and rest[: len(TOOL_CLOSE)].lower() != TOOL_CLOSE:
        raise _Unreadable(f"the <tool_call>'s JSON is followed by {rest[:40]!r}, not {TOOL_CLOSE}")
    end = len(text) - len(rest) + (len(TOOL_CLOSE) if rest else 0)
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
        raise _Unreadable('a <tool_call> must hold {"name": "<tool>", "arguments": {...}} with a non-empty name')
    kind = "browser" if call["name"] in browser_actions else "tool_call"
    return Action(kind=kind, name=call["name"], content=payload_text(_arguments(call))), end


def _arguments(call: dict) -> dict:
    arguments = call.get("arguments")
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        arguments = _json_object(arguments)
    if not isinstance(arguments, dict):
        raise _Unreadable(f"the arguments of the tool call {call['name']!r} are not a JSON object")
    return arguments
