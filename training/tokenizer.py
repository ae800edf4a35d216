"""Tokenizers: a byte-level BPE trained locally on rendered corpus texts, or any local Hugging Face tokenizer.

Every tokenizer comes out with a chat template (training/chat_format.py). A Hugging Face tokenizer that has one keeps
it, and nothing is added to its vocabulary (a missing pad token becomes its eos token: pads are never attended to
nor learned). Ours carries trajforge's markers, each a special token, with `<|end|>` as eos and `<|pad|>` as pad. A
foreign tokenizer without a chat template falls back to the markers: they are added (the model needs
`model.resize_token_embeddings(len(tokenizer))`), and a warning says so. Offsets are never trimmed, so every
character of the text belongs to a token's offsets, which training/labels.py relies on.
"""

import re
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from trajforge.evaluation.extraction import CLOSE, OPEN
from trajforge.training.chat_format import BEGIN, CHAT_MARKERS, END, MARKER_TEMPLATE, PAD, SPECIAL_TOKENS

DEFAULT_VOCAB_SIZE = 4096
# The answer format's tags, one ordinary token each (as an instruct model's reasoning tags are): a tiny model then
# learns to open its answer with one token, not with a dozen byte pieces that BPE never merged (they are not in
# the corpus the tokenizer is trained on). Ordinary, not special: inside content they stay the same text.
ANSWER_TAGS = ("<think>", "</think>", OPEN, CLOSE)
_MARKER = re.compile("|".join(re.escape(m) for m in SPECIAL_TOKENS))


def _without_markers(texts: Iterable[str]) -> Iterator[str]:
    # Markers are added as whole tokens; left in, BPE would also spend merges on their pieces ("<|", "assistant").
    for text in texts:
        yield from (piece for piece in _MARKER.split(text) if piece)


def train_tokenizer(
    texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB_SIZE, min_frequency: int = 2
) -> PreTrainedTokenizerFast:
    """A byte-level BPE (every byte is in the alphabet, so no text is ever unknown) with the chat specials."""
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(ANSWER_TAGS),  # the tags are added after training
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_without_markers(texts), trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=BEGIN,
        eos_token=END,
        pad_token=PAD,
        extra_special_tokens=[m for m in CHAT_MARKERS if m not in (BEGIN, END)],
        clean_up_tokenization_spaces=False,
    )
    tokenizer.add_tokens(list(ANSWER_TAGS))
    tokenizer.chat_template = MARKER_TEMPLATE
    return tokenizer


def save_tokenizer(tokenizer: PreTrainedTokenizerBase, folder: str | Path) -> Path:
    """tokenizer.json plus the transformers configuration, loadable with load_tokenizer or AutoTokenizer."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(folder))
    return folder


def load_tokenizer(folder: str | Path) -> PreTrainedTokenizerBase:
    """A local tokenizer folder (ours or any Hugging Face one; never the Hub) with a chat template (module docstring).

    A tokenizer that falls back to the markers grows by them: give the model `len(tokenizer)` embeddings
    (`model.resize_token_embeddings(len(tokenizer))`)."""
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    added = ensure_chat_format(tokenizer)
    if added:
        warnings.warn(
            f"{folder}: the tokenizer has no chat template; falling back to trajforge's markers "
            f"({added} tokens added, with new embeddings to learn)",
            stacklevel=2,
        )
    return tokenizer


def ensure_chat_format(tokenizer: PreTrainedTokenizerBase) -> int:
    """Give the tokenizer a chat template and a pad token, adding tokens only when it has no template of its own;
    returns how many tokens were added."""
    if not tokenizer.is_fast:
        raise TypeError(f"{type(tokenizer).__name__}: labels need character offsets, which only fast tokenizers give")
    if tokenizer.chat_template:
        if tokenizer.pad_token is None and tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token
        return 0 if tokenizer.pad_token is not None else tokenizer.add_special_tokens({"pad_token": PAD})
    added = ensure_chat_tokens(tokenizer)
    tokenizer.chat_template = MARKER_TEMPLATE
    return added


def ensure_chat_tokens(tokenizer: PreTrainedTokenizerBase) -> int:
    """Register the chat markers that the tokenizer lacks as special tokens, and a pad token if it has none; returns
    how many tokens were added."""
    vocab = tokenizer.get_vocab()
    missing = [m for m in CHAT_MARKERS if m not in vocab]
    added = tokenizer.add_special_tokens({"additional_special_tokens": missing}) if missing else 0
    if tokenizer.pad_token is None:
        added += tokenizer.add_special_tokens({"pad_token": PAD})
    return added
