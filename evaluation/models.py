"""What eval scores: one protocol for "a model that answers chat messages", and the kind behind it that needs no
training code, an OpenAI-compatible endpoint (a checkpoint and an untrained model shaped like one are
`trajforge.training.chat_models`). The evaluation loop only ever calls the protocol."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

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


class ChatCompletions:
    """An OpenAI-compatible /chat/completions endpoint (vLLM, SGLang, OpenAI, `trajforge serve`): the request eval's
    endpoint models and curate-sft's endpoint generator send."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.8,
        max_tokens: int = 1024,
        timeout: float = 300.0,
        transport=None,
    ):
        import httpx

        self.base_url, self.model = base_url.rstrip("/"), model
        self.name = f"endpoint:{model}"
        self.temperature, self.max_tokens = temperature, max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def complete(self, messages: list[dict], seed: int, n: int = 1, temperature: float | None = None) -> list[str]:
        body = {
            "model": self.model,
            "messages": messages,
            "n": n,
            "seed": seed,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
        }
        response = self.http.post(f"{self.base_url}/chat/completions", json=body)
        response.raise_for_status()
        return [choice["message"]["content"] or "" for choice in response.json()["choices"]]


class EndpointModel:
    """An OpenAI-compatible endpoint; a failed request is no answer, and `on_failure` hears why."""

    stage = None
    folder = None

    def __init__(self, url: str, model: str, sampling: Sampling, on_failure: Callable[[str], None] = print):
        self.client = ChatCompletions(url, model, temperature=sampling.temperature, max_tokens=sampling.max_tokens)
        self.name, self.on_failure = model, on_failure

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        import httpx

        try:
            return self.client.complete(messages, seed=sampling.seed)[0]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            self.on_failure(f"{self.client.name}: no answer ({str(exc).splitlines()[0][:160]})")
            return None

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        return None
