"""What eval scores: one protocol for "a model that answers chat messages", and the kind behind it that needs no
training code, an OpenAI-compatible endpoint (a checkpoint and an untrained model shaped like one are
`trajforge.training.chat_models`). The evaluation loop only ever calls the protocol."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.schemas.hashing import content_hash


@dataclass(frozen=True)
class Sampling:
    temperature: float
    max_tokens: int
    seed: int

    def for_item(self, item_id: str) -> "Sampling":
        """The sampling of one item: its own seed, derived from the run's. With one seed for all, every item draws
        the same random numbers at each position, so a single unlucky draw (right after `</think>`, say) fails
        many items at once and a rate over the items is not an average of independent answers."""
        return replace(self, seed=int(content_hash(f"{self.seed}:{item_id}", 8), 16))


def how_sampled(temperature: float) -> str:
    """A sampling temperature in words: the one wording of every table's header (eval, agent-eval, sim-check)."""
    return "greedy (temperature 0)" if temperature == 0 else f"sampled at temperature {temperature:g}"


def samples_per(count: int, unit: str) -> str:
    """`1 sample per task`, `3 samples per turn`."""
    return f"{count} sample{'s' if count != 1 else ''} per {unit}"


class ChatModel(Protocol):
    name: str  # the column its report is printed under
    stage: str | None  # the pipeline stage that made it (cpt, sft, rl, untrained), None when not a trajforge run
    folder: Path | None  # where its weights are, None for an endpoint

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        """The model's answer; None when it gave none (a failed request counts as no answer, as the benchmark's
        does)."""

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        """Teacher-forced loss per observation token on held-out rows; None when the weights are not at hand."""


class EndpointModel:
    """An OpenAI-compatible endpoint; a failed request is no answer, and `on_failure` hears why."""

    stage = None
    folder = None

    def __init__(self, endpoint: Endpoint, on_failure: Callable[[str], None] = print):
        self.client = ChatClient(endpoint)
        self.name, self.on_failure = endpoint.model, on_failure

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        try:
            return self.client.texts(messages, sampling.max_tokens, sampling.temperature, sampling.seed)[0]
        except EndpointError as exc:
            self.on_failure(f"endpoint:{self.name}: no answer ({exc})")
            return None

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        return None
