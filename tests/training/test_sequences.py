from trajforge.schemas.records import SYSTEM_PROMPT_PARTS
from trajforge.schemas.system_prompt import render_system_prompt
from trajforge.training.chat_format import ASSISTANT, BEGIN, END, SYSTEM, USER
from trajforge.training.labels import IGNORE_INDEX, fit_to_context
from trajforge.training.sequences import packed_sequences, rendered_texts, tokenized_documents


def test_rendered_texts_are_each_rows_whole_conversation(corpus):
    """What a tokenizer is trained on: one text per row, in row order, each the whole conversation in trajforge's
    markers: the system prompt, and every action (a tool call's preceded by its name) and observation, the ones
    out of the loss too."""
    assert any(not turn["in_loss"] for row in corpus for turn in row["turns"])  # so "out of the loss too" is tested
    expected = []
    for row in corpus:
        system = render_system_prompt({part: row[part] or "" for part in SYSTEM_PROMPT_PARTS})
        text = f"{BEGIN}{SYSTEM}{system}{END}\n"
        for turn in row["turns"]:
            action = turn["action"]
            named = f"{action['name']} {action['content']}" if action["name"] else action["content"]
            text += f"{USER}{named}{END}\n{ASSISTANT}{turn['observation']['content']}{END}\n"
        expected.append(text)
    assert list(rendered_texts(corpus)) == expected


def test_documents_fit_the_context(corpus, tokenizer):
    whole = tokenized_documents(corpus, tokenizer, context_length=4096)
    assert len(whole) == len(corpus)
    short = tokenized_documents(corpus, tokenizer, context_length=32)
    assert all(len(d) <= 32 and d.loss_tokens for d in short)
    chunks = [chunk for d in whole for chunk in fit_to_context(d, 32)]
    assert len(short) < len(chunks)  # the chunks of system prompt and actions only are left out...
    assert sum(d.loss_tokens for d in short) == sum(c.loss_tokens for c in chunks)  # ...and no loss token with them
    truncated = tokenized_documents(corpus, tokenizer, 32, overflow="truncate")
    assert len(truncated) <= len(corpus) and all(len(d) <= 32 and d.loss_tokens for d in truncated)


def test_corpus_packs(corpus, tokenizer):
    masked = packed_sequences(corpus, tokenizer, context_length=1024)
    everything = packed_sequences(corpus, tokenizer, context_length=1024, mask_mode="all")
    assert masked.input_ids.shape[1] == 1024
    assert masked.real_tokens == sum(len(d) for d in tokenized_documents(corpus, tokenizer, 1024))
    assert masked.efficiency > 0.8  # documents of ~175 tokens each: five to a row
    assert 0 < masked.loss_tokens < everything.loss_tokens
    assert (masked.input_ids[masked.labels != IGNORE_INDEX] != tokenizer.pad_token_id).all()
