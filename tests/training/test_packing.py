import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from trajforge.training.labels import IGNORE_INDEX, TokenizedDocument, fit_to_context, label_documents
from trajforge.training.packing import best_fit_rows, pack
from trajforge.training.render import render_row

PAD_ID = 0


def document(n: int, first_id: int = 1) -> TokenizedDocument:
    ids = np.arange(first_id, first_id + n, dtype=np.int64)
    return TokenizedDocument(ids, np.where(ids % 3 == 0, IGNORE_INDEX, ids))


def test_best_fit_decreasing():
    assert best_fit_rows([5, 3, 6, 2, 4], 8) == [[2, 3], [0, 1], [4]]
    assert best_fit_rows([4, 4, 4], 8) == [[0, 1], [2]]  # ties: input order, earliest row
    assert best_fit_rows([0, 3], 8) == [[1]]  # empty documents take no room
    assert best_fit_rows([], 8) == []
    with pytest.raises(ValueError, match="exceed"):
        best_fit_rows([9], 8)


def test_rows_hold_the_documents_with_restarting_positions():
    docs = [document(n, first_id=10 * k + 1) for k, n in enumerate((5, 3, 6, 2, 4))]
    packed = pack(docs, 8, PAD_ID)
    assert packed.input_ids.shape == packed.labels.shape == packed.position_ids.shape == (3, 8)
    for r, members in enumerate(packed.documents):
        at = 0
        for i in members:
            n = len(docs[i])
            assert packed.input_ids[r, at : at + n].tolist() == docs[i].input_ids.tolist()
            assert packed.labels[r, at : at + n].tolist() == docs[i].labels.tolist()
            assert packed.position_ids[r, at : at + n].tolist() == list(range(n))
            at += n
        assert (packed.input_ids[r, at:] == PAD_ID).all()
        assert (packed.labels[r, at:] == IGNORE_INDEX).all()
        assert packed.position_ids[r, at:].tolist() == list(range(8 - at))
    assert packed.real_tokens == 20
    assert packed.efficiency == 20 / 24
    assert packed.loss_tokens == sum(d.loss_tokens for d in docs)


def test_packing_is_deterministic():
    rng = np.random.default_rng(7)
    docs = [document(int(n)) for n in rng.integers(1, 64, size=200)]
    first, second = pack(docs, 64, PAD_ID), pack(list(docs), 64, PAD_ID)
    assert first.documents == second.documents
    assert np.array_equal(first.input_ids, second.input_ids)
    assert np.array_equal(first.position_ids, second.position_ids)
    assert first.efficiency > 0.95


def test_model_inputs():
    packed = pack([document(3), document(4)], 8, PAD_ID)
    inputs = packed.model_inputs([0])
    assert inputs["input_ids"].shape == (1, 8) and inputs["input_ids"].dtype == torch.int64
    assert inputs["attention_mask"] is None and inputs["use_cache"] is False


@pytest.fixture(scope="module")
def corpus_documents(corpus, tokenizer):
    docs = label_documents([render_row(row) for row in corpus.select(range(6))], tokenizer)
    return [chunk for doc in docs for chunk in fit_to_context(doc, 96)]


def tiny_model(vocab_size: int, attn_implementation: str) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        attn_implementation=attn_implementation,
    )
    return LlamaForCausalLM(config).eval()


def alone_and_packed(model, docs, packed):
    """(logits of a document run alone, the same document's slice of the packed logits) for every document."""
    with torch.no_grad():
        logits = model(**packed.model_inputs(range(len(packed)))).logits
        for r, members in enumerate(packed.documents):
            at = 0
            for i in members:
                alone = model(input_ids=torch.from_numpy(docs[i].input_ids)[None], use_cache=False).logits[0]
                yield alone, logits[r, at : at + len(docs[i])]
                at += len(docs[i])


@pytest.mark.parametrize("attn_implementation", ["sdpa", "eager"])
def test_packed_logits_equal_each_document_alone(corpus_documents, tokenizer, attn_implementation):
    packed = pack(corpus_documents, 256, tokenizer.pad_token_id)
    assert max(len(m) for m in packed.documents) > 1  # rows really hold several documents
    model = tiny_model(len(tokenizer), attn_implementation)
    for alone, in_row in alone_and_packed(model, corpus_documents, packed):
        assert torch.allclose(alone, in_row, atol=1e-4, rtol=1e-4)


def test_a_cache_lets_packed_documents_see_each_other(corpus_documents, tokenizer):
    """Why model_inputs says use_cache=False: the config's default (True) turns the per-document mask off."""
    packed = pack(corpus_documents, 256, tokenizer.pad_token_id)
    model = tiny_model(len(tokenizer), "sdpa")
    inputs = packed.model_inputs(range(len(packed)))
    with torch.no_grad():
        isolated = model(**inputs).logits
        inputs.pop("use_cache")
        leaking = model(**inputs).logits
    assert not torch.allclose(isolated, leaking, atol=1e-4)
