"""Tokenized documents packed into rows of exactly context_length tokens.

Best-fit decreasing: documents are placed longest first (ties in input order), each into the row whose free room
fits it most tightly (ties: the earliest row), else into a new row. The result depends only on the input.

In a row, position_ids restart at 0 where each document starts, and the padding at the end counts 0, 1, ... as a
document of its own (pad labels are IGNORE_INDEX). That is all a transformers 5 Llama-style model needs to keep
documents apart: with attention_mask=None and use_cache=False, `masking_utils.find_packed_sequence_indices` reads
the document boundaries off the position_ids (a new document wherever the position does not grow by one) and the
sdpa, eager and flex masks become block-diagonal causal. An attention_mask, or a cache (use_cache defaults to the
config's True, in training too), turns that detection off and the documents of a row see each other; model_inputs
sets attention_mask=None and use_cache=False. flash_attention_2/3 (GPU only, not tested here) read documents off
the position_ids only for a batch of one row: flatten the rows to shape [1, rows * context_length] for them.
"""

from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from trajforge.training.labels import IGNORE_INDEX, TokenizedDocument


@dataclass(frozen=True)
class PackedSequences:
    input_ids: np.ndarray  # int64 [rows, context_length]
    labels: np.ndarray  # int64 [rows, context_length], IGNORE_INDEX outside the loss and on padding
    position_ids: np.ndarray  # int64 [rows, context_length], 0 at each document start and at the padding's start
    documents: tuple[tuple[int, ...], ...]  # per row, the indices of the input documents it holds, in order
    real_tokens: int  # tokens that are not padding

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def efficiency(self) -> float:
        """The share of the rows' tokens that are not padding."""
        return self.real_tokens / self.input_ids.size if self.input_ids.size else 1.0

    @property
    def loss_tokens(self) -> int:
        return int((self.labels != IGNORE_INDEX).sum())

    def model_inputs(self, rows: Sequence[int]) -> dict:
        """Keyword arguments for a causal LM's forward on these rows, with what keeps their documents apart."""
        index = np.asarray(rows, dtype=np.int64)
        return {
            "input_ids": torch.from_numpy(self.input_ids[index]),
            "labels": torch.from_numpy(self.labels[index]),
            "position_ids": torch.from_numpy(self.position_ids[index]),
            "attention_mask": None,
            "use_cache": False,
        }


def best_fit_rows(lengths: Sequence[int], capacity: int) -> list[list[int]]:
    """Indices of the lengths per row (best-fit decreasing; empty lengths are left out)."""
    too_long = [i for i, n in enumerate(lengths) if n > capacity]
    if too_long:
        raise ValueError(f"{len(too_long)} documents exceed the context of {capacity} tokens: fit them to it first")
    rows: list[list[int]] = []
    free: list[tuple[int, int]] = []  # (free room, row index), sorted: the tightest fit is the first one big enough
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        size = lengths[i]
        if size == 0:
            continue
        k = bisect_left(free, (size, -1))
        if k < len(free):
            room, row = free.pop(k)
        else:
            room, row = capacity, len(rows)
            rows.append([])
        rows[row].append(i)
        if room - size > 0:
            insort(free, (room - size, row))
    return rows


def pack(documents: Sequence[TokenizedDocument], context_length: int, pad_token_id: int) -> PackedSequences:
    rows = best_fit_rows([len(d) for d in documents], context_length)
    shape = (len(rows), context_length)
    input_ids = np.full(shape, pad_token_id, dtype=np.int64)
    labels = np.full(shape, IGNORE_INDEX, dtype=np.int64)
    position_ids = np.zeros(shape, dtype=np.int64)
    for r, members in enumerate(rows):
        at = 0
        for i in members:
            doc = documents[i]
            input_ids[r, at : at + len(doc)] = doc.input_ids
            labels[r, at : at + len(doc)] = doc.labels
            position_ids[r, at : at + len(doc)] = np.arange(len(doc))
            at += len(doc)
        position_ids[r, at:] = np.arange(context_length - at)
    real = sum(len(d) for d in documents)
    return PackedSequences(input_ids, labels, position_ids, tuple(tuple(m) for m in rows), real)
