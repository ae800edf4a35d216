from trajforge.training.labels import IGNORE_INDEX, fit_to_context
from trajforge.training.render import render_row
from trajforge.training.sequences import packed_sequences, rendered_texts, tokenized_documents


def test_rendered_texts(corpus):
    assert list(rendered_texts(corpus.select([0]))) == [render_row(corpus[0]).text]


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
