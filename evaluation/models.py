"""What eval scores: one protocol for "a model that answers chat messages", with three kinds behind it (a
checkpoint, an OpenAI-compatible endpoint, and an untrained model shaped like a checkpoint). The evaluation
loop only ever calls the protocol."""

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


class ChatModel(Protocol):
    name: str  # the column its report is printed under
    stage: str | None  # the pipeline stage that made it (cpt, sft, rl, untrained), None when not a trajforge run
    folder: Path | None  # where its weights are, None for an endpoint

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        """The model's answer; None when it gave none (a failed request counts as no answer, as the benchmark's
        does)."""

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        """Teacher-forced loss per observation token on held-out rows; None when the weights are not at hand."""


def checkpoint_name(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}" if folder.name.startswith("checkpoint-") else folder.name


class CheckpointModel:
    """A checkpoint folder, sampled locally."""

    def __init__(self, folder: Path, name: str | None = None):
        from trajforge.training.serving import LocalModel
        from trajforge.training.stage_effects import stage_of

        self.folder, self.local = Path(folder), LocalModel(folder)
        self.name, self.stage = name or checkpoint_name(self.folder), stage_of(self.folder)

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        return self.local.chat(messages, sampling.max_tokens, temperature=sampling.temperature, seed=sampling.seed)[0]

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        from trajforge.training.distributed import World
        from trajforge.training.loop import LoopConfig, evaluate
        from trajforge.training.sequences import packed_sequences

        length = min(512, self.local.model.config.max_position_embeddings)
        sequences = packed_sequences(rows, self.local.tokenizer, length, mask_mode="all")
        return evaluate(self.local.model, sequences, LoopConfig(batch_size=4), World())


class UntrainedModel(CheckpointModel):
    """The same architecture and tokenizer as a checkpoint, random weights: what training bought, measured."""

    def __init__(self, like: Path):
        import torch
        from transformers import AutoModelForCausalLM

        super().__init__(like, name="untrained")
        self.stage = "untrained"
        torch.manual_seed(0)
        self.local.model = AutoModelForCausalLM.from_config(self.local.model.config).eval()


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
