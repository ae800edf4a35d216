"""Candidate generators for SFT curation: any OpenAI-compatible endpoint, a local checkpoint, or the embedded
hint-template generator (no model: hint-conditioned rationalisation from the real observation)."""

import json
import re
from abc import ABC, abstractmethod

import httpx

from training.prompts import Query, candidate

HINT = (
    "\n\n(Hint for writing your reasoning: the environment's real observation follows. Reason toward it from the "
    "history and the action without quoting it in your reasoning.)\n"
    "<real_observation>\n{reference}\n</real_observation>"
)


class Generator(ABC):
    name: str

    @abstractmethod
    def generate(self, query: Query, n: int, seed: int, hint: bool = False) -> list[str]:
        """n candidates for the query; with `hint`, the real observation is shown (rationalisation)."""


def chat_messages(query: Query, hint: bool) -> list[dict]:
    messages = [{"role": role, "content": content} for role, content in query.messages]
    if hint:
        messages[-1]["content"] += HINT.format(reference=query.reference)
    return messages


class EndpointGenerator(Generator):
    """Any OpenAI-compatible /chat/completions endpoint (vLLM, SGLang, OpenAI, `trajforge serve`)."""

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

    def generate(self, query: Query, n: int, seed: int, hint: bool = False) -> list[str]:
        return self.complete(chat_messages(query, hint), seed, n)


class CheckpointGenerator(Generator):
    """A local checkpoint (a trajforge run, or any Hugging Face causal-LM folder), sampled with transformers."""

    def __init__(self, folder: str, max_new_tokens: int = 256, temperature: float = 0.8):
        from training.serving import LocalModel

        self.model = LocalModel(folder)
        self.name = f"checkpoint:{folder}"
        self.max_new_tokens, self.temperature = max_new_tokens, temperature

    def generate(self, query: Query, n: int, seed: int, hint: bool = False) -> list[str]:
        return [
            self.model.chat(chat_messages(query, hint), self.max_new_tokens, self.temperature, seed + i)[0]
            for i in range(n)
        ]


class HintTemplateGenerator(Generator):
    """The embedded default, for machines without a model: hint-conditioned rationalisation by template. The
    first candidate reasons from the action to the real observation; the others are deliberately degraded
    (cut short, facts altered, format lost), so judging and best-of-N have real choices to make."""

    name = "hint-template"

    def generate(self, query: Query, n: int, seed: int, hint: bool = True) -> list[str]:
        reference = query.reference
        reasoning = (
            f"The action is `{query.action[:200]}`. Given the history ({len(query.messages) // 2} earlier "
            f"turns), the environment answers with {'JSON' if reference.lstrip().startswith('{') else 'text'} "
            f"of about {len(reference)} characters."
        )
        variants = [
            reference,
            reference[: max(1, len(reference) // 2)],
            _alter_facts(reference),
            json.dumps({"output": reference[:200]})
            if not reference.lstrip().startswith("{")
            else reference.replace("{", "", 1),
        ]
        return [candidate(reasoning, variants[i % len(variants)]) for i in range(n)]


def _alter_facts(text: str) -> str:
    return re.sub(r"\d", lambda m: str((int(m.group(0)) + 7) % 10), text)
