"""The fault kinds an environment can be asked to show (sandboxes/faults.py injects them into a real environment,
a world model is instructed to produce them): for each, the words a control spec renders it in, and a detector
that tells whether an observation shows it. One wording serves both the real fault-injected episodes a world
model learns from and the instructions it is simulated with, so instruction and observation are learned together.

A detector reads the observation's text only, as a world model writes it. Latency leaves no trace in text: the
simulator wrapper applies it (sandboxes/control.py), and controllability does not score it."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from trajforge.schemas.registry import Registry

ERROR_503 = "503 Service Unavailable"
TEMPORARY_FAILURE = re.compile(r"temporar(?:y|ily) (?:failure|unavailable)|Resource temporarily unavailable", re.I)
TRUNCATION_MARK = "[output truncated]"


@dataclass(frozen=True)
class FaultKind:
    """`phrase(params)`: what the fault does, in the control-spec language; `detect(text)`: whether an observation
    shows it (None: not observable in text); `actions`: the action kinds it can hit (None: any); `fits(text,
    params)`: whether the answer could show it at all (truncation: only an output longer than the cut)."""

    phrase: Callable[[dict], str]
    detect: Callable[[str], bool] | None
    actions: frozenset[str] | None = None
    fits: Callable[[str, dict], bool] | None = None


# The faults that reshape a JSON list result: only a tool call has one (sandboxes/faults.py reshapes nothing else).
LIST_RESULTS = frozenset({"tool_call"})


FAULT_KINDS: Registry[FaultKind] = Registry("fault kind")
# The label sandboxes/faults.py gives a turn -> its fault kind (the labels predate the kinds' names).
LABEL_KINDS = {"truncated": "truncation"}


def kind_of_label(label: str) -> str:
    return LABEL_KINDS.get(label, label)


def _mcp_text(text: str) -> str:
    """The JSON inside an MCP result's first text part, or the text itself."""
    try:
        payload = json.loads(text)
        return payload["content"][0]["text"] if isinstance(payload, dict) else text
    except (ValueError, KeyError, IndexError, TypeError):
        return text


def _intermittent(text: str) -> bool:
    return ERROR_503 in text or bool(TEMPORARY_FAILURE.search(text))


def _truncated(text: str) -> bool:
    return text.rstrip().endswith(TRUNCATION_MARK)


def _has_key(key: str, value: object = None) -> Callable[[str], bool]:
    pattern = re.compile(rf'"{key}"\s*:' + (rf"\s*{json.dumps(value)}" if value is not None else ""))
    return lambda text: bool(pattern.search(_mcp_text(text)))


FAULT_KINDS.add(
    "intermittent_error",
    FaultKind(
        lambda p: (
            f"fails with a temporary error ({ERROR_503}) in the environment's own error format and changes "
            "nothing; the same action may succeed when retried"
        ),
        _intermittent,
    ),
    help="a temporary 503-style error; the action is not applied",
)
FAULT_KINDS.add(
    "pagination",
    FaultKind(
        lambda p: (
            f"returns a list paginated at {p.get('page_size', 3)} items with a next_page_token (a repeated "
            "call with page_token set to it returns the next page)"
        ),
        _has_key("next_page_token"),
        LIST_RESULTS,
    ),
    help="long JSON lists come back a page at a time",
)
FAULT_KINDS.add(
    "incomplete",
    FaultKind(
        lambda p: "returns an incomplete list: some items are missing and the response says `incomplete: true`",
        _has_key("incomplete", True),
        LIST_RESULTS,
    ),
    help="a list result with items missing, flagged incomplete",
)
FAULT_KINDS.add(
    "partial_failure",
    FaultKind(
        lambda p: "returns a batch result where one item failed with an internal error and the others succeeded",
        _has_key("status", "failed"),
        LIST_RESULTS,
    ),
    help="a batch result with one failed item",
)
FAULT_KINDS.add(
    "latency",
    FaultKind(lambda p: f"is answered after a delay of {p.get('seconds', 0.2):g} s", None),
    help="a delayed answer (not visible in text; applied by the environment)",
)
FAULT_KINDS.add(
    "truncation",
    FaultKind(
        lambda p: f"returns output cut after {p.get('max_chars', 200)} characters, ending with {TRUNCATION_MARK}",
        _truncated,
        fits=lambda text, p: len(text) > p.get("max_chars", 200) or _truncated(text),
    ),
    help="output cut short and marked truncated",
)


def detected(text: str) -> set[str]:
    """The fault kinds whose detector fires on an observation's text."""
    return {name for name, kind in FAULT_KINDS.items() if kind.detect is not None and kind.detect(text)}


def observable(kind: str) -> bool:
    return FAULT_KINDS.get(kind).detect is not None


def fits(kind: str, text: str, params: dict) -> bool:
    """Whether an answer `text` could show a fault of `kind` with `params` (a short output cannot be cut)."""
    check = FAULT_KINDS.get(kind).fits
    return check is None or check(text, params)


def can_hit(kind: str, action_kind: str) -> bool:
    """Whether a fault of `kind` can hit an action of `action_kind` (pagination never hits a shell command)."""
    actions = FAULT_KINDS.get(kind).actions
    return actions is None or action_kind in actions
