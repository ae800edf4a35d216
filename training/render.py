"""One CPT row in chat form, with the characters that are in the loss.

The chat template (every marker is one special token of the tokenizer):

    <|begin|><|system|>{system prompt}<|end|>
    <|user|>{action}<|end|>
    <|assistant|>{observation}<|end|>
    ... one user/assistant pair per turn

The system prompt is `render_system_prompt` of the row's five parts. The action is its content, preceded by
"{name} " when the action has a name (a tool or browser call: the arguments alone do not say which tool ran).

In the loss (mask_mode "masked"): the characters of an observation inside its turn's `loss_spans`, and the `<|end|>`
that closes the observation when a loss span reaches the observation's end (an empty observation kept whole has the
span (0, 0)): the end marker counts as the character after the last one, so the model learns where an observation
stops exactly where it is trained on how it ends. Everything else (markers, system prompt, actions, newlines, turns
out of the loss) stays in the context only. mask_mode "all" puts every observation and its end marker in the loss,
for a comparison run without masking.

Flags are per Python str character; they become token labels in one place, training/labels.py.
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from schemas.records import SYSTEM_PROMPT_PARTS
from schemas.system_prompt import render_system_prompt

BEGIN = "<|begin|>"
SYSTEM = "<|system|>"
USER = "<|user|>"
ASSISTANT = "<|assistant|>"
END = "<|end|>"
PAD = "<|pad|>"
CHAT_MARKERS = (BEGIN, SYSTEM, USER, ASSISTANT, END)
SPECIAL_TOKENS = (PAD, *CHAT_MARKERS)
ROLE_MARKERS = {"system": SYSTEM, "user": USER, "assistant": ASSISTANT}
SEPARATOR = "\n"  # after each <|end|>: readability only, never in the loss

MaskMode = Literal["masked", "all"]
MASK_MODES: tuple[str, ...] = MaskMode.__args__
Span = tuple[int, int]


@dataclass(frozen=True)
class RenderedDocument:
    text: str
    loss_flags: np.ndarray  # bool, one per character of text
    marker_spans: tuple[Span, ...]  # where the template wrote a marker; content never becomes a marker token

    def loss_text(self) -> str:
        """The in-loss characters, in order (what the labels must decode to)."""
        return "".join(c for c, in_loss in zip(self.text, self.loss_flags, strict=True) if in_loss)

    def pieces(self) -> Iterator[tuple[int, int, bool]]:
        """(start, end, is_marker) runs covering the text, in order."""
        position = 0
        for start, end in self.marker_spans:
            if start > position:
                yield position, start, False
            yield start, end, True
            position = end
        if position < len(self.text):
            yield position, len(self.text), False


def action_text(action: Mapping) -> str:
    name = action.get("name")
    return f"{name} {action['content']}" if name else action["content"]


def observation_loss_spans(turn: Mapping, mask_mode: MaskMode) -> list[Span]:
    """The observation's characters in the loss, clipped to the text and sorted."""
    length = len(turn["observation"]["content"])
    if mask_mode == "all":
        return [(0, length)]
    if not turn.get("in_loss", True):
        return []
    spans = turn.get("loss_spans")
    if spans is None:  # a row without masks (a plain trajectory shard): all of it
        return [(0, length)]
    clipped = [(min(max(s["start"], 0), length), min(max(s["end"], 0), length)) for s in spans]
    return sorted((s, e) for s, e in clipped if e >= s)


class DocumentBuilder:
    """Appends text and markers, keeping the loss spans and marker positions in step with the text."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.loss_spans: list[Span] = []
        self.markers: list[Span] = []

    def text(self, text: str, loss_spans: Iterable[Span] = ()) -> None:
        """Append text; loss_spans are offsets into this text."""
        self.loss_spans.extend((self.length + s, self.length + e) for s, e in loss_spans if e > s)
        self._append(text)

    def marker(self, marker: str, in_loss: bool = False) -> None:
        self.markers.append((self.length, self.length + len(marker)))
        if in_loss:
            self.loss_spans.append(self.markers[-1])
        self._append(marker)

    def _append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def build(self) -> RenderedDocument:
        flags = np.zeros(self.length, dtype=bool)
        for start, end in self.loss_spans:
            flags[start:end] = True
        return RenderedDocument("".join(self.parts), flags, tuple(self.markers))


def render_row(row: Mapping, mask_mode: MaskMode = "masked") -> RenderedDocument:
    """A CPT shard row (or a plain trajectory row, whose observations are then all in the loss) as one document."""
    if mask_mode not in MASK_MODES:
        raise ValueError(f"mask_mode {mask_mode!r}: expected one of {', '.join(MASK_MODES)}")
    doc = DocumentBuilder()
    doc.marker(BEGIN)
    doc.marker(SYSTEM)
    doc.text(render_system_prompt({part: row.get(part) or "" for part in SYSTEM_PROMPT_PARTS}))
    doc.marker(END)
    doc.text(SEPARATOR)
    for turn in row["turns"]:
        doc.marker(USER)
        doc.text(action_text(turn["action"]))
        doc.marker(END)
        doc.text(SEPARATOR)
        observation = turn["observation"]["content"]
        spans = observation_loss_spans(turn, mask_mode)
        doc.marker(ASSISTANT)
        doc.text(observation, spans)
        doc.marker(END, in_loss=any(end == len(observation) for _, end in spans))
        doc.text(SEPARATOR)
    return doc.build()


def render_prompt(row: Mapping) -> str:
    """The text a world model continues to predict the observation of the row's last turn: everything up to and
    including that turn's <|assistant|> (serving and evaluation use it; generation stops at <|end|>)."""
    if not row["turns"]:
        raise ValueError("a prompt needs a turn whose observation is to be predicted")
    context = render_row({**row, "turns": row["turns"][:-1]}).text
    return f"{context}{USER}{action_text(row['turns'][-1]['action'])}{END}{SEPARATOR}{ASSISTANT}"
