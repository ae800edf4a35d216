"""Where character loss flags become token labels: the only place (docs/design.md, "Loss masking").

A rendered document is tokenized piece by piece: the chat template's own text with special-token matching on (its
markers become their special tokens), the contents between with it off, so an observation that happens to contain
"<|end|>" or "<|im_end|>" stays text and can never fake the end of a turn. Offsets come from the fast tokenizer, in
characters.

A token is in the loss when any character of its offsets is (a token that straddles a span boundary counts: spans
are line-aligned, so this is at most a newline's worth). Its label is then its own id (the model shifts labels, as
transformers causal LMs do), else IGNORE_INDEX. A token with empty offsets is out of the loss.

Documents longer than the context: `split` cuts them into consecutive chunks of at most context_length tokens, each
packed as a document of its own (its positions restart at 0; a later chunk no longer sees the system prompt, but
every loss token is trained); `truncate` keeps the first chunk only; `trim_history`, for documents whose loss is at
their end (an SFT answer), keeps the first `head_length(context_length)` tokens (the start of the system prompt) and
the most recent rest, answer included, as one document: the view that generation gives a long prompt
(training/sampling.py), so the model learns from what it is later asked with (it falls back to `split` when the
answer alone does not fit). The first token of every chunk, and of a trimmed tail, is out of the loss: nothing in its
chunk precedes it, and in a packed row the token before it belongs to another document.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from transformers import PreTrainedTokenizerBase

from trajforge.training.chat_format import RenderedDocument

IGNORE_INDEX = -100
Overflow = Literal["split", "truncate", "trim_history"]


def head_length(window: int) -> int:
    """How much of its start a prompt too long for the window keeps (the rest is its most recent tokens)."""
    return window // 4


@dataclass(frozen=True)
class TokenizedDocument:
    input_ids: np.ndarray  # int64
    labels: np.ndarray  # int64: the token id where in the loss, IGNORE_INDEX elsewhere

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def loss_tokens(self) -> int:
        return int((self.labels != IGNORE_INDEX).sum())


def label_documents(
    documents: Sequence[RenderedDocument], tokenizer: PreTrainedTokenizerBase
) -> list[TokenizedDocument]:
    """Token ids and labels of each document; the template pieces of all documents are tokenized in one batch, their
    contents in another."""
    pieces = [list(doc.pieces()) for doc in documents]
    encoded = {}
    for kind in (True, False):
        texts = [doc.text[s:e] for doc, runs in zip(documents, pieces, strict=True) for s, e, t in runs if t is kind]
        encoded[kind] = iter(_encode(texts, tokenizer, match_special=kind))
    out = []
    for doc, runs in zip(documents, pieces, strict=True):
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for start, _, is_template in runs:
            piece_ids, piece_offsets = next(encoded[is_template])
            ids.extend(piece_ids)
            offsets.extend((start + s, start + e) for s, e in piece_offsets)
        out.append(_with_labels(np.asarray(ids, dtype=np.int64), np.asarray(offsets, dtype=np.int64), doc.loss_flags))
    return out


def _encode(
    texts: list[str], tokenizer: PreTrainedTokenizerBase, match_special: bool
) -> list[tuple[list[int], list[tuple[int, int]]]]:
    if not texts:  # the tokenizer rejects an empty batch
        return []
    backend = tokenizer.backend_tokenizer
    matching_off = backend.encode_special_tokens
    try:
        batch = tokenizer(
            texts, add_special_tokens=False, split_special_tokens=not match_special, return_offsets_mapping=True
        )
    finally:  # transformers leaves the backend's switch as the last call set it; its direct users expect markers
        backend.encode_special_tokens = matching_off
    return list(zip(batch["input_ids"], batch["offset_mapping"], strict=True))


def label_document(document: RenderedDocument, tokenizer: PreTrainedTokenizerBase) -> TokenizedDocument:
    return label_documents([document], tokenizer)[0]


def _with_labels(ids: np.ndarray, offsets: np.ndarray, flags: np.ndarray) -> TokenizedDocument:
    if len(ids) == 0:
        return TokenizedDocument(ids, ids.copy())
    in_loss_before = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])
    in_loss = in_loss_before[offsets[:, 1]] > in_loss_before[offsets[:, 0]]
    return TokenizedDocument(ids, np.where(in_loss, ids, IGNORE_INDEX))


def fit_to_context(
    document: TokenizedDocument, context_length: int, overflow: Overflow = "split"
) -> list[TokenizedDocument]:
    """The document as chunks of at most context_length tokens (module docstring); an empty one gives none."""
    if context_length < 2:
        raise ValueError(f"context_length {context_length}: expected at least 2")
    if overflow not in Overflow.__args__:
        raise ValueError(f"overflow {overflow!r}: expected one of {', '.join(Overflow.__args__)}")
    if overflow == "trim_history" and len(document) > context_length:
        trimmed = _trim_history(document, context_length)
        if trimmed is not None:
            return [trimmed]
    starts = range(0, len(document), context_length)
    if overflow == "truncate":
        starts = starts[:1]
    chunks = []
    for start in starts:
        ids = document.input_ids[start : start + context_length]
        labels = document.labels[start : start + context_length].copy()
        labels[0] = IGNORE_INDEX
        chunks.append(TokenizedDocument(ids, labels))
    return chunks


def _trim_history(document: TokenizedDocument, context_length: int) -> TokenizedDocument | None:
    """The head and the most recent tokens, when every loss token is among the latter (and not their first)."""
    head = head_length(context_length)
    tail_start = len(document) - (context_length - head)
    in_loss = np.flatnonzero(document.labels != IGNORE_INDEX)
    if len(in_loss) and in_loss[0] <= tail_start:
        return None
    ids = np.concatenate([document.input_ids[:head], document.input_ids[tail_start:]])
    labels = np.concatenate([document.labels[:head], document.labels[tail_start:]])
    labels[0] = IGNORE_INDEX
    return TokenizedDocument(ids, labels)
