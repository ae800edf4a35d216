import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from trajforge.training.chat_format import CHAT_MARKERS, END, MARKER_TEMPLATE, PAD, SPECIAL_TOKENS
from trajforge.training.tokenizer import (
    ANSWER_TAGS,
    ensure_chat_format,
    ensure_chat_tokens,
    load_tokenizer,
    save_tokenizer,
    train_tokenizer,
)

TEXT = 'ls -la /work\n  total 12\tdrwx  é ü 日本 🙂\n\n{"k": [1, 2]}'


def test_specials_are_single_tokens(tokenizer):
    for token in SPECIAL_TOKENS:
        ids = tokenizer(token, add_special_tokens=False).input_ids
        assert ids == [tokenizer.convert_tokens_to_ids(token)]
    assert (tokenizer.bos_token, tokenizer.eos_token, tokenizer.pad_token) == ("<|begin|>", END, PAD)
    assert tokenizer.pad_token_id != tokenizer.eos_token_id


def test_vocab_size_and_no_merges_of_marker_pieces(tokenizer):
    assert len(tokenizer) <= 512
    vocab = tokenizer.get_vocab()
    assert not [t for t in vocab if "|>" in t and t not in SPECIAL_TOKENS]


def test_round_trip_of_any_text(tokenizer):
    ids = tokenizer(TEXT, add_special_tokens=False).input_ids
    assert tokenizer.decode(ids) == TEXT
    assert tokenizer.unk_token_id not in ids


def test_save_and_load(tokenizer, tmp_path):
    folder = save_tokenizer(tokenizer, tmp_path / "tok")
    assert (folder / "tokenizer.json").is_file()
    loaded = load_tokenizer(folder)
    assert len(loaded) == len(tokenizer)
    text = f"{CHAT_MARKERS[1]}{TEXT}{END}"
    assert loaded(text).input_ids == tokenizer(text).input_ids
    assert (loaded.eos_token_id, loaded.pad_token_id) == (tokenizer.eos_token_id, tokenizer.pad_token_id)
    assert loaded.chat_template == MARKER_TEMPLATE


def foreign_tokenizer(folder):
    backend = Tokenizer(models.BPE(vocab={"a": 0, "b": 1, "<eos>": 2}, merges=[], unk_token=None))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>").save_pretrained(str(folder))


def test_foreign_tokenizer_without_a_template_falls_back_to_the_markers(tmp_path):
    foreign_tokenizer(tmp_path)
    with pytest.warns(UserWarning, match="no chat template; falling back to trajforge's markers"):
        tokenizer = load_tokenizer(tmp_path)
    assert tokenizer.chat_template == MARKER_TEMPLATE
    vocab = tokenizer.get_vocab()
    assert all(m in vocab for m in CHAT_MARKERS)
    assert tokenizer.pad_token == PAD
    assert tokenizer.eos_token == "<eos>"  # its own end of text is kept
    assert len(tokenizer) == 3 + len(CHAT_MARKERS) + 1
    assert ensure_chat_tokens(tokenizer) == 0


def test_small_vocab_is_honoured():
    texts = [f"line {i} of the log: value={i * 7}" for i in range(200)]
    tokenizer = train_tokenizer(texts, vocab_size=300)
    assert 256 + len(SPECIAL_TOKENS) <= len(tokenizer) <= 300


def test_slow_tokenizer_is_refused():
    class Slow:
        is_fast = False

    with pytest.raises(TypeError, match="offsets"):
        ensure_chat_format(Slow())


def test_answer_tags_are_one_ordinary_token_each(tokenizer):
    for tag in ANSWER_TAGS:
        assert len(tokenizer(tag, add_special_tokens=False).input_ids) == 1
        assert tag not in tokenizer.all_special_tokens  # content: never a template marker
    text = "<think>\nls\n</think>\n<predicted_observation>\na.txt\n</predicted_observation>"
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False).input_ids) == text
