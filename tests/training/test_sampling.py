"""Sampling, one way for serving, eval and RL: the training template up to the answer, stopping at the end of turn."""

import torch

from trajforge.training import rl
from trajforge.training.chat_format import END, MARKERS, ChatFormat
from trajforge.training.model import load_model, load_model_for
from trajforge.training.sampling import RowSeededSampling, prompt_ids, sample, stop_ids
from trajforge.training.serving import LocalModel
from trajforge.training.tokenizer import load_tokenizer


def test_prompt_is_the_training_template_up_to_the_answer(tokenizer):
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "ls <|end|>"}]
    ids = prompt_ids(messages, tokenizer, MARKERS)
    assert tokenizer.decode(ids) == "<|begin|><|system|>S<|end|>\n<|user|>ls <|end|><|end|>\n<|assistant|>"
    assert ids.count(tokenizer.eos_token_id) == 2  # the user's "<|end|>" is text, not the end of a turn


def test_generation_stops_at_the_end_of_turn(tokenizer):
    assert stop_ids(tokenizer, MARKERS) == [tokenizer.convert_tokens_to_ids(END)]


def test_sampling_stops_at_the_first_stop_id(tiny_checkpoint):
    model, pad = load_model(tiny_checkpoint).eval(), load_tokenizer(tiny_checkpoint).pad_token_id
    prompt = torch.tensor([[1, 2, 3, 4]])
    free = sample(model, prompt, [pad], pad, 6, temperature=0)[0, 4:].tolist()  # greedy, never the pad: 6 tokens
    assert len(free) == 6 and pad not in free
    stop = free[2] if free[2] not in free[:2] else free[0]
    stopped = sample(model, prompt, [stop], pad, 6, temperature=0)[0, 4:].tolist()
    assert stopped == free[: free.index(stop) + 1]


def test_serving_and_rl_stop_at_the_same_ids(tiny_checkpoint):
    served = LocalModel(tiny_checkpoint)
    tokenizer = load_tokenizer(tiny_checkpoint)
    assert served.stop_ids == stop_ids(tokenizer, ChatFormat.of(tokenizer))
    assert rl.stop_ids is stop_ids and rl.prompt_ids is prompt_ids  # RL rollouts use the very same functions


def test_a_model_gets_embeddings_for_tokens_its_tokenizer_added(tiny_checkpoint):
    tokenizer = load_tokenizer(tiny_checkpoint)
    before = load_model(tiny_checkpoint).get_input_embeddings().num_embeddings
    tokenizer.add_tokens(["<|new_a|>", "<|new_b|>"], special_tokens=True)
    grown = load_model_for(tiny_checkpoint, tokenizer)
    assert grown.get_input_embeddings().num_embeddings == len(tokenizer) >= before + 2


def test_a_model_is_asked_within_the_context_it_was_trained_on(tiny_checkpoint, tmp_path):
    import json
    import shutil

    from trajforge.training.checkpoint import INFO_NAME

    messages = [{"role": "system", "content": "S " * 200}, {"role": "user", "content": "ls"}]
    full = len(prompt_ids(messages, load_tokenizer(tiny_checkpoint), MARKERS))
    assert LocalModel(tiny_checkpoint).chat(messages, 8, temperature=0)[2] == full  # no record: the position limit
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "trained-at-64")
    info = json.loads((folder / INFO_NAME).read_text())
    (folder / INFO_NAME).write_text(json.dumps({**info, "context_length": 64}))
    text, _, prompt_tokens, completion_tokens = LocalModel(folder).chat(messages, 8, temperature=0)
    assert full > 64 and prompt_tokens == 64 - 8 and prompt_tokens + completion_tokens <= 64


def test_rows_seeded_alike_sample_alike_whatever_their_neighbours():
    scores = torch.randn(1, 50).repeat(4, 1)
    chosen = RowSeededSampling([7, 8, 7, 9], temperature=1.0)(None, scores).argmax(dim=-1).tolist()
    alone = RowSeededSampling([7], temperature=1.0)(None, scores[:1]).argmax(dim=-1).tolist()
    assert chosen[0] == chosen[2] == alone[0]
    out = RowSeededSampling([1, 2], temperature=1.0)(None, scores[:2])
    assert (torch.isfinite(out).sum(dim=-1) == 1).all()  # one token left per row: greedy decoding takes it
    nucleus = RowSeededSampling(list(range(20)), temperature=1.0, top_p=1e-6)(None, scores[:1].repeat(20, 1))
    assert set(nucleus.argmax(dim=-1).tolist()) == {int(scores[0].argmax())}  # a tiny top-p keeps only the best
