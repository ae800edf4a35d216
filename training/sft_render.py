"""An SFT row (curate-sft) as one document: the messages in context, the chosen target in the loss."""

from collections.abc import Mapping

from training.render import ASSISTANT, BEGIN, END, ROLE_MARKERS, SEPARATOR, DocumentBuilder, RenderedDocument


def render_sft_row(row: Mapping, mask_mode: str = "masked") -> RenderedDocument:
    """`mask_mode` is accepted for symmetry with render_row; an SFT target is always the only thing learned."""
    doc = DocumentBuilder()
    doc.marker(BEGIN)
    for message in row["messages"]:
        doc.marker(ROLE_MARKERS[message["role"]])
        doc.text(message["content"])
        doc.marker(END)
        doc.text(SEPARATOR)
    target = row["target"]
    doc.marker(ASSISTANT)
    doc.text(target, [(0, len(target))])
    doc.marker(END, in_loss=True)
    doc.text(SEPARATOR)
    return doc.build()
