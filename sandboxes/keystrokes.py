"""The Terminal action space of the paper (terminal-bench's): keystrokes sent to a tmux pane.

An action is `{"keystrokes": "ls -la\\n", "duration": 0.1}`. A keystrokes string that is exactly a key name
(C-c, C-d, C-z, Escape, Up, ...) is sent as that key; any other string is typed literally, each newline
pressing Enter. The observation is the visible pane after `duration` seconds.
"""

import json
import re
from dataclasses import dataclass

from trajforge.sandboxes.shell import ansi_c_quote

SESSION = "tf"
KEY_NAME = re.compile(
    r"^(?:[CM]-[a-z\\\]@^_]|Escape|Enter|Tab|BSpace|Up|Down|Left|Right|Home|End|PageUp|PageDown|F\d{1,2})$"
)
MAX_DURATION_S = 60.0
TOOL = {
    "name": "keystrokes",
    "description": "Send keystrokes to the terminal (tmux). Key names such as C-c, C-d, C-z are sent as keys; "
    "text is typed, each newline pressing Enter. The observation is the visible screen after `duration` seconds.",
    "input_schema": {
        "type": "object",
        "properties": {"keystrokes": {"type": "string"}, "duration": {"type": "number", "minimum": 0}},
        "required": ["keystrokes"],
    },
}


@dataclass(frozen=True)
class Keystrokes:
    keystrokes: str
    duration: float = 0.1


def parse(content: str) -> Keystrokes:
    """Read an action's content; raises ValueError with a message fit for the agent."""
    try:
        data = json.loads(content)
    except ValueError:
        raise ValueError('keystrokes must be JSON: {"keystrokes": "...", "duration": 0.1}') from None
    if not isinstance(data, dict) or not isinstance(data.get("keystrokes"), str):
        raise ValueError('keystrokes must be JSON with a string "keystrokes" field')
    duration = data.get("duration", 0.1)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 <= duration <= MAX_DURATION_S:
        raise ValueError(f"duration must be a number of seconds between 0 and {MAX_DURATION_S:g}")
    return Keystrokes(data["keystrokes"], float(duration))


def send_command(keys: Keystrokes) -> str:
    """The tmux commands that type `keys` into the session."""
    if KEY_NAME.match(keys.keystrokes):
        return f"tmux send-keys -t {SESSION} {keys.keystrokes}"
    commands = []
    for i, line in enumerate(keys.keystrokes.split("\n")):
        if i:
            commands.append(f"tmux send-keys -t {SESSION} Enter")
        if line:
            commands.append(f"tmux send-keys -t {SESSION} -l -- {ansi_c_quote(line)}")
    return " && ".join(commands) or ":"


START = f"tmux new-session -d -s {SESSION} -x 160 -y 40 -c /work"
CAPTURE = f"tmux capture-pane -p -t {SESSION}"
