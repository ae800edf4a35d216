"""A checkpoint as this process holds it: tokenizer, weights (in eval mode, on the device), chat format and context
window. `shared` loads a folder once for the whole process, whatever roles it plays there (the checkpoint policy,
the in-process world model, eval's and sim-check's chat model, the server); a role that trains the weights (RL,
agent RL) takes `load` instead, its own copy, so that what it learns never leaks into another role."""

import threading
from dataclasses import dataclass
from pathlib import Path

from trajforge.training.chat_format import ChatFormat


@dataclass(frozen=True)
class LoadedModel:
    folder: Path
    tokenizer: object
    model: object  # a transformers causal LM
    chat: ChatFormat
    window: int  # the context window it was trained for (training/checkpoint.py context_window)


def device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load(folder: str | Path, on_device: bool = True) -> LoadedModel:
    """A fresh copy of the checkpoint in `folder` (a trajforge or Hugging Face model folder), on the GPU when there is
    one unless `on_device` is False (RL on prompts builds its batches on the CPU)."""
    from trajforge.training.checkpoint import context_window
    from trajforge.training.model import load_model_for
    from trajforge.training.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(folder)
    model = load_model_for(folder, tokenizer).eval()
    if on_device:
        model.to(device())
    return LoadedModel(Path(folder), tokenizer, model, ChatFormat.of(tokenizer), context_window(folder, model))


_SHARED: dict[Path, LoadedModel] = {}
_LOADING = threading.Lock()


def shared(folder: str | Path) -> LoadedModel:
    """The process's one copy of the checkpoint in `folder`, loaded on first use."""
    key = Path(folder).resolve()
    with _LOADING:
        if key not in _SHARED:
            _SHARED[key] = load(folder)
        return _SHARED[key]
