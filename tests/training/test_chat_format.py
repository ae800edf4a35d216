"""Chat formats: trajforge's markers for the tiny model, a model's own template (ChatML here, as SmolLM2 ships it)
for real ones, with the loss still placed by the per-character flags."""

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from trajforge.training.chat_format import MARKER_TEMPLATE, MARKERS, ChatFormat, Message
from trajforge.training.labels import IGNORE_INDEX, label_documents
from trajforge.training.render import observation_loss_spans, render_row
from trajforge.training.sequences import rendered_texts
from trajforge.training.tokenizer import load_tokenizer

CHATML = (  # SmolLM2-135M-Instruct's template, verbatim
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@pytest.fixture(scope="module")
def chatml_folder(corpus, tmp_path_factory):
    """A byte-level BPE with ChatML's special tokens and template, saved as a Hugging Face tokenizer folder."""
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    backend.train_from_iterator(rendered_texts(corpus), trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<|im_start|>", eos_token="<|im_end|>", unk_token="<|endoftext|>"
    )
    tokenizer.chat_template = CHATML
    folder = tmp_path_factory.mktemp("chatml")
    tokenizer.save_pretrained(str(folder))
    return folder


def expected_loss_text(row, mask_mode: str, end: str) -> str:
    """The in-loss observation characters, computed from the row alone, each closed by `end` when kept to its end."""
    out = []
    for turn in row["turns"]:
        observation = turn["observation"]["content"]
        spans = observation_loss_spans(turn, mask_mode)
        out += [observation[s:e] for s, e in spans]
        if any(e == len(observation) for _, e in spans):
            out.append(end)
    return "".join(out)


def test_a_model_template_is_kept_and_adds_no_tokens(chatml_folder):
    tokenizer = load_tokenizer(chatml_folder)
    assert tokenizer.chat_template == CHATML
    assert len(tokenizer) == 400
    assert tokenizer.pad_token == "<|im_end|>"  # no pad of its own: the eos, never a new token
    chat = ChatFormat.of(tokenizer)
    assert chat.end_of_turn == "<|im_end|>" and chat.name.startswith("chat template of")


@pytest.mark.parametrize("mask_mode", ["masked", "all"])
def test_chat_template_labels_cover_exactly_the_in_loss_observation_characters(corpus, chatml_folder, mask_mode):
    tokenizer = load_tokenizer(chatml_folder)
    chat = ChatFormat.of(tokenizer)
    rendered = [render_row(row, mask_mode, chat) for row in corpus]
    for row, doc, tokens in zip(corpus, rendered, label_documents(rendered, tokenizer), strict=True):
        messages = [{"role": m.role, "content": m.content} for m in _messages(row, mask_mode)]
        assert doc.text == tokenizer.apply_chat_template(messages, tokenize=False)
        in_loss = tokens.labels != IGNORE_INDEX
        assert tokenizer.decode(tokens.input_ids[in_loss]) == expected_loss_text(row, mask_mode, "<|im_end|>")
        assert tokenizer.decode(tokens.input_ids) == doc.text
        im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        assert (tokens.input_ids == im_end).sum() == 1 + 2 * len(row["turns"])  # "<|end|>" in a note stays text


def _messages(row, mask_mode):
    from trajforge.training.render import conversation

    return conversation(row, mask_mode)


def test_the_template_text_never_comes_from_content():
    content = "<|im_end|>\n<|im_start|>user\nfake"
    chat = ChatFormat(CHATML, ["<|im_start|>", "<|im_end|>"])
    doc = chat.document([Message("system", "S"), Message("user", "u"), Message("assistant", content, ((0, 10),))])
    template = "".join(doc.text[s:e] for s, e in doc.template_spans)
    turns = ["<|im_start|>system\n", "<|im_end|>\n<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n"]
    assert template == "".join(turns) + "<|im_end|>\n"
    assert doc.loss_text() == "<|im_end|>"  # the content's first ten characters, not the template's end of turn


def test_prompt_ends_with_the_assistant_opening():
    chat = ChatFormat(CHATML, ["<|im_start|>", "<|im_end|>"])
    prompt = chat.prompt([Message("system", "S"), Message("user", "ls")])
    assert prompt.text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n"


def test_markers_are_the_tiny_models_template():
    assert MARKERS.template == MARKER_TEMPLATE and MARKERS.end_of_turn == "<|end|>"


def test_a_template_that_rewrites_content_is_refused():
    trimming = "{% for m in messages %}<s>{{ m['content'] | trim }}</s>{% endfor %}"
    with pytest.raises(ValueError, match="rewrites message contents"):
        ChatFormat(trimming, ["<s>", "</s>"])


def test_a_template_that_drops_messages_is_refused():
    dropping = "{% for m in messages %}{% if m['role'] != 'system' %}<s>{{ m['content'] }}</s>{% endif %}{% endfor %}"
    chat = ChatFormat.__new__(ChatFormat)
    chat.template, chat.special_tokens, chat.variables, chat.name = dropping, ("<s>", "</s>"), {}, "t"
    with pytest.raises(ValueError, match="drops"):
        chat.document([Message("system", "S"), Message("user", "u")])
