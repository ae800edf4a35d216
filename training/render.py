"""CPT and SFT shard rows as conversations, with the characters that are in the loss.

The conversation: a system message (`render_system_prompt` of the row's five parts), then per turn the action as the
user message (`schemas.turn_text.action_text`) and the observation as the assistant message, then the task's check
as one more turn where the outcome recorded it (schemas/check_turn.py: a file comparison as the compared file's read
alone, never the command holding the expected value), its answer in the loss: the simulator asks a world model that
turn to decide success. The chat format
(training/chat_format.py) turns it into text: the tokenizer's own chat template, or trajforge's markers.

In the loss (mask_mode "masked"): the characters of an observation inside its turn's `loss_spans`, and the end of
turn that closes the observation when a loss span reaches the observation's end (an empty observation kept whole has
the span (0, 0)). Everything else (the template's text, system prompt, actions, turns out of the loss) stays in the
context only. mask_mode "all" puts every observation and its end of turn in the loss, for a comparison run without
masking.

An SFT row (curate-sft) is its messages in context, then the chosen target as the assistant message, all of it and
its end of turn in the loss.

Flags are per Python str character; they become token labels in one place, training/labels.py.
"""

from collections.abc import Mapping
from typing import Literal

from trajforge.schemas.check_turn import learned_check_turns
from trajforge.schemas.records import SYSTEM_PROMPT_PARTS
from trajforge.schemas.system_prompt import render_system_prompt
from trajforge.schemas.turn_text import action_text
from trajforge.training.chat_format import MARKERS, ChatFormat, Message, RenderedDocument, Span

MaskMode = Literal["masked", "all"]
MASK_MODES: tuple[str, ...] = MaskMode.__args__


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


def conversation(row: Mapping, mask_mode: MaskMode = "masked") -> list[Message]:
    """A CPT shard row (or a plain trajectory row, whose observations are then all in the loss) as messages."""
    if mask_mode not in MASK_MODES:
        raise ValueError(f"mask_mode {mask_mode!r}: expected one of {', '.join(MASK_MODES)}")
    messages = [Message("system", render_system_prompt({part: row.get(part) or "" for part in SYSTEM_PROMPT_PARTS}))]
    for turn in row["turns"]:
        messages.append(Message("user", action_text(turn["action"])))
        observation = turn["observation"]["content"]
        spans = tuple(observation_loss_spans(turn, mask_mode))
        messages.append(Message("assistant", observation, spans, any(end == len(observation) for _, end in spans)))
    for action, observation in learned_check_turns(row):  # the check that decided the outcome: always learned
        messages.append(Message("user", action_text(action)))
        messages.append(Message("assistant", observation, ((0, len(observation)),), True))
    return messages


def render_row(row: Mapping, mask_mode: MaskMode = "masked", chat: ChatFormat = MARKERS) -> RenderedDocument:
    """The row as one document in the chat format."""
    return chat.document(conversation(row, mask_mode))


def sft_conversation(row: Mapping) -> list[Message]:
    target = row["target"]
    return [*Message.all_of(row["messages"]), Message("assistant", target, ((0, len(target)),), end_in_loss=True)]


def render_sft_row(row: Mapping, mask_mode: MaskMode = "masked", chat: ChatFormat = MARKERS) -> RenderedDocument:
    """`mask_mode` is accepted for symmetry with render_row; an SFT target is always the only thing learned."""
    return chat.document(sft_conversation(row))


def render_prompt(row: Mapping, chat: ChatFormat = MARKERS) -> RenderedDocument:
    """What a world model continues to predict the observation of the row's last turn: everything before that
    observation, ending with the opening of the assistant message (generation stops at the end of turn)."""
    if not row["turns"]:
        raise ValueError("a prompt needs a turn whose observation is to be predicted")
    return chat.prompt(conversation(row)[:-1])
