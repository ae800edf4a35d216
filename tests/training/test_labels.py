import numpy as np
import pytest
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

from trajforge.training.chat_format import ASSISTANT, BEGIN, END, SYSTEM, USER
from trajforge.training.labels import IGNORE_INDEX, TokenizedDocument, fit_to_context, label_document, label_documents
from trajforge.training.render import render_row
from trajforge.training.sampling import fit_window
from trajforge.training.sequences import packed_sequences


def segments(doc: TokenizedDocument, tokenizer) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(opening marker, token ids, labels) of each message, its closing <|end|> included."""
    opening = {tokenizer.convert_tokens_to_ids(m): m for m in (SYSTEM, USER, ASSISTANT)}
    out = []
    for i, token in enumerate(doc.input_ids):
        if int(token) in opening:
            end = i + 1 + list(doc.input_ids[i + 1 :]).index(tokenizer.convert_tokens_to_ids(END))
            out.append((opening[int(token)], doc.input_ids[i + 1 : end + 1], doc.labels[i + 1 : end + 1]))
    return out


@pytest.mark.parametrize("mask_mode", ["masked", "all"])
def test_decoded_loss_tokens_are_the_in_loss_text(corpus, tokenizer, mask_mode):
    rendered = [render_row(row, mask_mode) for row in corpus]
    for rendered_doc, doc in zip(rendered, label_documents(rendered, tokenizer), strict=True):
        in_loss = doc.labels != IGNORE_INDEX
        assert (doc.labels[in_loss] == doc.input_ids[in_loss]).all()
        assert tokenizer.decode(doc.input_ids[in_loss]) == rendered_doc.loss_text()
        assert tokenizer.decode(doc.input_ids) == rendered_doc.text
        assert doc.loss_tokens == in_loss.sum() > 0


def test_labels_follow_the_turn_masks(corpus, tokenizer):
    for row in corpus:
        doc = label_document(render_row(row), tokenizer)
        assert doc.input_ids[0] == tokenizer.convert_tokens_to_ids(BEGIN)
        assert doc.labels[0] == IGNORE_INDEX
        messages = segments(doc, tokenizer)
        assert [m for m, _, _ in messages] == [SYSTEM] + [USER, ASSISTANT] * len(row["turns"])
        for marker, _, labels in messages:
            if marker != ASSISTANT:
                assert (labels == IGNORE_INDEX).all()
        observations = [labels for marker, _, labels in messages if marker == ASSISTANT]
        terse, listing, note = observations
        assert (terse == IGNORE_INDEX).all()  # out of the loss, end marker too
        assert listing[0] != IGNORE_INDEX and listing[-2] == IGNORE_INDEX and listing[-1] == IGNORE_INDEX
        in_loss = listing != IGNORE_INDEX
        assert in_loss[: in_loss.sum()].all()  # the head half of the listing, one run
        assert (note != IGNORE_INDEX).all()  # kept whole, its end marker included


def test_marker_text_inside_an_observation_is_text(corpus, tokenizer):
    row = corpus[0]
    assert "<|end|>" in row["turns"][2]["observation"]["content"]
    doc = label_document(render_row(row), tokenizer)
    ends = (doc.input_ids == tokenizer.convert_tokens_to_ids(END)).sum()
    assert ends == 1 + 2 * len(row["turns"])
    assert tokenizer.backend_tokenizer.encode(END, add_special_tokens=False).ids == [tokenizer.eos_token_id]


def document(n: int, loss_from: int = 0) -> TokenizedDocument:
    ids = np.arange(10, 10 + n, dtype=np.int64)
    return TokenizedDocument(ids, np.where(np.arange(n) >= loss_from, ids, IGNORE_INDEX))


def test_split_into_chunks():
    doc = document(10)
    chunks = fit_to_context(doc, 4)
    assert [len(c) for c in chunks] == [4, 4, 2]
    assert np.concatenate([c.input_ids for c in chunks]).tolist() == doc.input_ids.tolist()
    for chunk, start in zip(chunks, (0, 4, 8), strict=True):
        assert chunk.labels[0] == IGNORE_INDEX  # nothing in the chunk predicts its first token
        assert chunk.labels[1:].tolist() == doc.labels[start + 1 : start + len(chunk)].tolist()
    assert sum(c.loss_tokens for c in chunks) == doc.loss_tokens - 3


def test_truncate_and_fitting_documents():
    assert [len(c) for c in fit_to_context(document(10), 4, overflow="truncate")] == [4]
    short = document(3, loss_from=1)
    (only,) = fit_to_context(short, 4)
    assert only.labels.tolist() == short.labels.tolist()
    assert fit_to_context(document(0), 4) == []
    with pytest.raises(ValueError, match="overflow"):
        fit_to_context(short, 4, overflow="wrap")


def test_trim_history_keeps_the_head_and_the_answer_as_generation_fits_a_prompt():
    doc = document(20, loss_from=17)  # a 17-token prompt, a 3-token answer
    (trimmed,) = fit_to_context(doc, 8, overflow="trim_history")
    assert trimmed.input_ids.tolist() == [*doc.input_ids[:2], *doc.input_ids[14:]]  # head 8 // 4 = 2, then the rest
    assert trimmed.labels.tolist() == [IGNORE_INDEX] * 5 + doc.labels[17:].tolist()  # every answer token learned
    prompt = doc.input_ids[:17].tolist()
    assert fit_window(prompt, 8, reserve=3) == trimmed.input_ids[:5].tolist()  # the view it is later asked with
    assert fit_window(prompt[:5], 8, reserve=3) == prompt[:5]  # a prompt that fits is left alone


def test_trim_history_splits_an_answer_longer_than_the_tail():
    doc = document(20, loss_from=10)
    assert [len(c) for c in fit_to_context(doc, 8, overflow="trim_history")] == [8, 8, 4]
    assert fit_to_context(document(6, loss_from=3), 8, overflow="trim_history")[0].labels.tolist()[3:] == [13, 14, 15]


def test_no_documents(tokenizer):
    assert label_documents([], tokenizer) == []


def test_tokenizer_without_a_chat_template_is_refused(corpus):
    backend = Tokenizer(models.BPE(vocab={"a": 0, "b": 1}, merges=[]))
    with pytest.raises(ValueError, match="no chat template"):
        packed_sequences(corpus, PreTrainedTokenizerFast(tokenizer_object=backend), 64)
