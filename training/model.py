"""The models the trainer trains: a small random-init causal LM from a transformers config (the embedded
default, nothing downloaded), or any local Hugging Face causal-LM checkpoint."""

from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, PreTrainedModel


@dataclass(frozen=True)
class TinyModelConfig:
    hidden_size: int = 128
    intermediate_size: int = 384
    layers: int = 4
    heads: int = 4
    max_positions: int = 2048

    def to_llama(self, vocab_size: int, pad_id: int | None, bos_id: int | None, eos_id: int | None) -> LlamaConfig:
        return LlamaConfig(
            vocab_size=vocab_size,
            hidden_size=self.hidden_size,
            intermediate_size=self.intermediate_size,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            num_key_value_heads=self.heads,
            max_position_embeddings=self.max_positions,
            pad_token_id=pad_id,
            bos_token_id=bos_id,
            eos_token_id=eos_id,
            tie_word_embeddings=True,
            attn_implementation="sdpa",
        )

    def as_dict(self) -> dict:
        return asdict(self)


def build_tiny_model(config: TinyModelConfig, tokenizer, seed: int = 0) -> LlamaForCausalLM:
    """A random-init Llama-style model sized for CPU, seeded: the same seed gives the same weights."""
    torch.manual_seed(seed)
    llama = config.to_llama(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    return LlamaForCausalLM(llama)


def load_model(path: str | Path) -> PreTrainedModel:
    """A local checkpoint folder (config.json + safetensors); never the Hub."""
    return AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, attn_implementation="sdpa")
