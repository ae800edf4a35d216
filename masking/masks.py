"""What a keep ratio does to one turn, in either of the two meanings a policy can give it.

turn_sampling: the whole turn is in the loss with probability `keep`, drawn from a hash of (seed, trajectory id, turn
    index), so reruns and reorderings give the same masks.
span: a fraction `keep` of the observation's characters is in the loss, as spans aligned to line boundaries (a line
    longer than chunk_chars counts as pieces of chunk_chars). Layout "spread" keeps pieces evenly spread over the
    observation, "head" keeps its leading part. The fraction is met to within half a piece, so a one-line
    observation with a keep ratio under one half is left out, and an empty one is in the loss only when keep is 1.

Spans are half-open (start, end) offsets into the observation's text, in Python str characters. A fully kept
observation has the single span (0, len), also for an empty one: (0, 0); a turn out of the loss has none.
"""

from dataclasses import dataclass
from hashlib import blake2b
from typing import Literal

KeepMode = Literal["turn_sampling", "span"]
SpanLayout = Literal["spread", "head"]
Span = tuple[int, int]
DecidedBy = Literal["policy", "loss_weight"]


@dataclass(frozen=True, slots=True)
class TurnMask:
    category: str
    keep_ratio: float  # the ratio applied: the category's, or the turn's loss_weight when the source gave one
    in_loss: bool
    spans: tuple[Span, ...]  # observation characters in the loss
    decided_by: DecidedBy = "policy"


def sample_fraction(seed: int, trajectory_id: str, turn_index: int) -> float:
    """A uniform draw in [0, 1) that depends only on its arguments."""
    digest = blake2b(f"{seed}\x1f{trajectory_id}\x1f{turn_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def sampled_in_loss(keep: float, seed: int, trajectory_id: str, turn_index: int) -> bool:
    if keep >= 1.0:
        return True
    if keep <= 0.0:
        return False
    return sample_fraction(seed, trajectory_id, turn_index) < keep


def _pieces(text: str, chunk_chars: int) -> list[Span]:
    pieces = []
    start = 0
    for line in text.splitlines(keepends=True):
        end = start + len(line)
        pieces.extend((i, min(i + chunk_chars, end)) for i in range(start, end, chunk_chars))
        start = end
    return pieces


def kept_spans(text: str, keep: float, layout: SpanLayout = "spread", chunk_chars: int = 256) -> tuple[Span, ...]:
    """The spans that keep a fraction `keep` of the text's characters in the loss (module docstring)."""
    if keep >= 1.0:
        return ((0, len(text)),)
    if keep <= 0.0 or not text:
        return ()
    pieces = _pieces(text, chunk_chars)
    chosen = _head(pieces, keep * len(text)) if layout == "head" else _spread(pieces, keep)
    return _joined(chosen)


def _closer(kept: int, size: int, target: float) -> bool:
    """Whether taking a piece of `size` brings the kept count closer to the target (ties take it)."""
    return abs(kept + size - target) <= abs(kept - target)


def _head(pieces: list[Span], target: float) -> list[Span]:
    chosen = []
    kept = 0
    for start, end in pieces:
        if not _closer(kept, end - start, target):
            break
        chosen.append((start, end))
        kept += end - start
    return chosen


def _spread(pieces: list[Span], keep: float) -> list[Span]:
    # Error diffusion: the target grows with the text read so far, so kept pieces are spread evenly.
    chosen = []
    kept = 0
    for start, end in pieces:
        if _closer(kept, end - start, keep * end):
            chosen.append((start, end))
            kept += end - start
    return chosen


def _joined(pieces: list[Span]) -> tuple[Span, ...]:
    spans: list[Span] = []
    for start, end in pieces:
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return tuple(spans)
