"""From CPT rows to packed training sequences: render (in the tokenizer's chat format), label, fit to the context,
pack. A render gives a row's document, or a list of them (training/agent_render.py's role_render: a row may teach
the world role, the agent role, both, or, in the agent role alone, nothing)."""

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

from transformers import PreTrainedTokenizerBase

from trajforge.training.chat_format import ChatFormat, RenderedDocument
from trajforge.training.labels import Overflow, TokenizedDocument, fit_to_context, label_documents
from trajforge.training.packing import PackedSequences, pack
from trajforge.training.render import MaskMode, render_row

ROWS_PER_BATCH = 256  # rows rendered and tokenized together: one tokenizer call each, bounded memory


def row_documents(rendered: RenderedDocument | Iterable[RenderedDocument]) -> list[RenderedDocument]:
    """What a render gave for one row, as a list."""
    return [rendered] if isinstance(rendered, RenderedDocument) else list(rendered)


def rendered_texts(rows: Iterable[Mapping], render=render_row) -> Iterator[str]:
    """The rendered text of each row's documents: what a tokenizer is trained on."""
    for row in rows:
        for document in row_documents(render(row)):
            yield document.text


def tokenized_documents(
    rows: Iterable[Mapping],
    tokenizer: PreTrainedTokenizerBase,
    context_length: int,
    mask_mode: MaskMode = "masked",
    overflow: Overflow = "split",
    render=render_row,
) -> list[TokenizedDocument]:
    """Every row as labelled documents of at most context_length tokens, in row order. A chunk with no token in the
    loss is left out: it trains nothing (a long SFT prompt split at a small context is mostly such chunks)."""
    chat = ChatFormat.of(tokenizer)
    out: list[TokenizedDocument] = []
    iterator = iter(rows)
    while batch := list(islice(iterator, ROWS_PER_BATCH)):
        rendered = [doc for row in batch for doc in row_documents(render(row, mask_mode, chat))]
        for doc in label_documents(rendered, tokenizer):
            out.extend(chunk for chunk in fit_to_context(doc, context_length, overflow) if chunk.loss_tokens)
    return out


def packed_sequences(
    rows: Iterable[Mapping],
    tokenizer: PreTrainedTokenizerBase,
    context_length: int,
    mask_mode: MaskMode = "masked",
    overflow: Overflow = "split",
    render=render_row,
) -> PackedSequences:
    """`render` turns a row into its documents: render_row for CPT rows, render_sft_row for SFT rows, a role_render
    of either."""
    documents = tokenized_documents(rows, tokenizer, context_length, mask_mode, overflow, render)
    return pack(documents, context_length, tokenizer.pad_token_id)
