"""From CPT rows to packed training sequences: render (in the tokenizer's chat format), label, fit to the context,
pack."""

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

from transformers import PreTrainedTokenizerBase

from trajforge.training.chat_format import ChatFormat
from trajforge.training.labels import Overflow, TokenizedDocument, fit_to_context, label_documents
from trajforge.training.packing import PackedSequences, pack
from trajforge.training.render import MaskMode, render_row

ROWS_PER_BATCH = 256  # rows rendered and tokenized together: one tokenizer call each, bounded memory


def rendered_texts(rows: Iterable[Mapping]) -> Iterator[str]:
    """The rendered text of each row: what a tokenizer is trained on."""
    for row in rows:
        yield render_row(row).text


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
        for doc in label_documents([render(row, mask_mode, chat) for row in batch], tokenizer):
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
    """`render` turns a row into a document: render_row for CPT rows, render_sft_row for SFT rows."""
    documents = tokenized_documents(rows, tokenizer, context_length, mask_mode, overflow, render)
    return pack(documents, context_length, tokenizer.pad_token_id)
