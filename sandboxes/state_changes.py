"""Whether an agent's action could have changed its environment's state, read from the action's text alone. A
simulated episode decides its task's check on the real starting state when none of the agent's actions could have
changed it (sandboxes/simulated.py), as a real environment would: an episode that only looked around, or printed
`exit code: 0`, or answered at once, starts and ends in the same state.

Conservative by construction: a shell action counts as read-only only when every command in it is on a short list
of commands that write no file (`cat`, `ls`, `grep`, `echo`, ...) and it has no redirection, command substitution,
process substitution or subshell script; anything else (another kind of action, a tool call, a command off the list,
text the shell words cannot be read from) could change the state."""

import shlex
from collections.abc import Mapping

# commands that write no file whatever their arguments (sort -o, uniq IN OUT, tree -o, file -C, find -delete,
# xxd IN OUT and tee can: they are left off)
READ_ONLY_COMMANDS = frozenset(
    "cat ls pwd echo printf head tail wc grep egrep fgrep cut tr nl rev tac stat du df basename dirname realpath "
    "readlink whoami id uname date true false test [ diff cmp comm md5sum sha1sum sha256sum cd seq sleep which".split()
)
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")"})
UNREADABLE = ("`", "$(", "<(", ">(", ">")  # substitutions run a command of their own; > writes a file


def could_change_state(action: Mapping) -> bool:
    """Whether the action (a recorded action: kind, content) could have changed the environment's state."""
    if action.get("kind") != "shell":
        return True
    return any(_could_change(line) for line in str(action.get("content", "")).splitlines())


def _could_change(line: str) -> bool:
    if any(mark in line for mark in UNREADABLE):
        return True
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: read no further
        return True
    starts_command = True
    for word in words:
        if word in SEPARATORS:
            starts_command = True
        elif starts_command:
            if word not in READ_ONLY_COMMANDS:
                return True
            starts_command = False
    return False
