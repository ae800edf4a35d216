"""The keys and values of contexts the model has already read, kept so that an episode's next turn reads only
what its context gained (the observation) and the G episodes of a task read their shared first prompt once.

An agent's context only grows: the next prompt is the last one, the answer as generated, then the observation
(agents/transcript.py). Generate with a cache starts where the cache ends, so each ask of a batch is matched with
the longest kept context that its prompt begins with, and the batch's cache holds, for every row, that much of its
prompt (left-padded like the prompts). Rows whose prompts gained different lengths share one cache width: a row
that gained less reads again the last few tokens it had kept. What a batch read and wrote is kept for the next one.

Kept contexts are forgotten, least recently used first, beyond a memory budget, and all of them when the model's
weights change (agent RL's update): keys and values computed by other weights would answer for another model."""

from collections import OrderedDict
from dataclasses import dataclass

import torch

BUDGET_BYTES = 2 << 30  # about 45,000 tokens of SmolLM2-135M's keys and values


@dataclass
class Kept:
    ids: list[int]
    layers: list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys and values, (heads, tokens, head dim)

    @property
    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self.layers)


def weights_version(model) -> int:
    """A number that changes whenever a parameter is changed in place (an optimizer step, a loaded state)."""
    return sum(p._version for p in model.parameters())


class PrefixCache:
    def __init__(self, budget_bytes: int = BUDGET_BYTES):
        self.budget = budget_bytes
        self.kept: OrderedDict[tuple[int, ...], Kept] = OrderedDict()
        self.held = 0  # the kept contexts' bytes
        self.version: int | None = None
        self.prompt_tokens = 0  # the tokens of every prompt answered
        self.read_tokens = 0  # those the model read (the rest came from kept contexts)

    @property
    def reused(self) -> float:
        """The share of the prompts' tokens that came from kept contexts."""
        return 1 - self.read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def check_weights(self, model) -> None:
        version = weights_version(model)
        if version != self.version:
            self.kept.clear()
            self.held, self.version = 0, version

    def longest(self, prompt: list[int]) -> tuple[Kept | None, int]:
        """The kept context sharing the longest beginning with `prompt`, and how many of its tokens serve: at most
        all but the prompt's last token (the model must read at least one)."""
        best_key, best_length = None, 0
        for key, kept in self.kept.items():
            length = shared_length(kept.ids, prompt, len(prompt) - 1)
            if length > best_length:
                best_key, best_length = key, length
        if best_key is None:
            return None, 0
        self.kept.move_to_end(best_key)
        return self.kept[best_key], best_length

    def keep(self, ids: list[int], layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Keep a context (the most recent); a kept one that it begins with serves no prompt it does not, and
        goes (the same context kept again included)."""
        for key, kept in list(self.kept.items()):
            if len(kept.ids) <= len(ids) and shared_length(kept.ids, ids, len(kept.ids)) == len(kept.ids):
                self.held -= self.kept.pop(key).nbytes
        self.kept[tuple(ids)] = Kept(list(ids), layers)
        self.held += self.kept[tuple(ids)].nbytes
        while len(self.kept) > 1 and self.held > self.budget:
            self.held -= self.kept.popitem(last=False)[1].nbytes


def shared_length(a: list[int], b: list[int], most: int) -> int:
    """How many first tokens `a` and `b` share, at most `most` (a binary search over slices: list comparison runs
    in C, a token-by-token loop in Python would cost more than it saves)."""
    low, high = 0, min(len(a), len(b), most)
    if high == 0 or a[0] != b[0]:
        return 0
    if a[:high] == b[:high]:
        return high
    while low < high - 1:  # a[:low] == b[:low], a[:high] != b[:high]
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def batch_cache(rows: list[tuple[Kept | None, int]], lengths: list[int], width: int):
    """The cache of a left-padded batch whose row i holds a prompt of `lengths[i]` tokens in `width` columns:
    `rows[i]` is that row's kept context and how many of its tokens serve. Its width is the most every row can
    fill (the row that gained most decides); an empty cache when that is nothing. Generate fills it in place."""
    from transformers import DynamicCache

    filled = width - max(length - used for (_, used), length in zip(rows, lengths, strict=True))
    if filled <= 0:
        return DynamicCache()
    template = next(kept for kept, used in rows if kept is not None and used)
    layers = []
    for layer, (keys, _) in enumerate(template.layers):
        heads, _, dim = keys.shape
        batch_keys = keys.new_zeros(len(rows), heads, filled, dim)
        batch_values = keys.new_zeros(len(rows), heads, filled, dim)
        for row, ((kept, _), length) in enumerate(zip(rows, lengths, strict=True)):
            start = width - length  # the row's padding
            served = filled - start  # its own tokens within the cache's columns
            if kept is not None and served > 0:
                batch_keys[row, :, start:filled] = kept.layers[layer][0][:, :served]
                batch_values[row, :, start:filled] = kept.layers[layer][1][:, :served]
        layers.append((batch_keys, batch_values))
    return DynamicCache(ddp_cache_data=layers)


def row_layers(cache, row: int, start: int, stop: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Row `row`'s keys and values of columns [start, stop) of a batch's cache, copied out of the batch's tensors."""
    return [(lay.keys[row, :, start:stop].clone(), lay.values[row, :, start:stop].clone()) for lay in cache.layers]


def gain_groups(unread: dict[tuple[int, ...], tuple]) -> list[list[tuple[int, ...]]]:
    """The prompts to read, grouped so that none gained less than half of what its group's first gained (the
    others read again what they kept up to that much)."""
    order = sorted(unread, key=lambda p: len(p) - unread[p][1], reverse=True)
    groups: list[list[tuple[int, ...]]] = []
    for prompt in order:
        gain = len(prompt) - unread[prompt][1]
        if groups and 2 * gain >= len(groups[-1][0]) - unread[groups[-1][0]][1]:
            groups[-1].append(prompt)
        else:
            groups.append([prompt])
    return groups
