"""An SFT row (curate-sft) as one document: the messages in context, the chosen target in the loss."""

from collections.abc import Mapping

from training.chat_format import MARKERS, ChatFormat, Message, RenderedDocument


def sft_conversation(row: Mapping) -> list[Message]:
    target = row["target"]
    context = [Message(m["role"], m["content"]) for m in row["messages"]]
    return [*context, Message("assistant", target, ((0, len(target)),), end_in_loss=True)]


def render_sft_row(row: Mapping, mask_mode: str = "masked", chat: ChatFormat = MARKERS) -> RenderedDocument:
    """`mask_mode` is accepted for symmetry with render_row; an SFT target is always the only thing learned."""
    return chat.document(sft_conversation(row))
