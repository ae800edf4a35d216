"""An episode's tokens as generated: the context grows by deltas, earlier answers are never re-tokenized."""

from trajforge.agents.transcript import Transcript
from trajforge.schemas.actions import write_action
from trajforge.schemas.records import Action
from trajforge.training.agent_render import agent_prompt_ids
from trajforge.training.tokenizer import load_tokenizer

ACTION = Action(kind="shell", content="wc -l notes.txt")


def _byte_by_byte(tokenizer, text: str) -> list[int]:
    """Ids a model could write for `text` that its tokenizer would never produce: one character at a time."""
    return [i for ch in text for i in tokenizer(ch, add_special_tokens=False)["input_ids"]]


def test_the_context_is_the_generated_ids_plus_the_rendered_deltas(tiny_agent):
    tokenizer = load_tokenizer(tiny_agent)
    transcript = Transcript(tokenizer, "count", [{"name": "shell"}], "notes.txt")
    text = write_action(ACTION)
    generated = [*_byte_by_byte(tokenizer, text), transcript.stop_id]
    assert tokenizer(text, add_special_tokens=False)["input_ids"] != generated[:-1]
    assert tokenizer.decode(generated[:-1]) == text
    transcript.add_answer(generated)
    delta = transcript.add_observation(ACTION, "5 notes.txt <|end|>")
    ids, mask = transcript.stream()
    first = transcript.turns[0].prompt_ids
    assert ids.tolist() == transcript.ids == first + generated + delta  # the generated ids kept as they were
    assert mask.tolist() == [0] * len(first) + [1] * len(generated) + [0] * len(delta)
    # the delta is what the layout adds: the whole conversation tokenized, but for the answer's own ids
    whole = agent_prompt_ids(tokenizer, transcript.messages())
    answer = tokenizer(text, add_special_tokens=False)["input_ids"] + [transcript.stop_id]
    assert whole == first + answer + delta
    assert tokenizer.decode(delta) == "\n<|user|>5 notes.txt <|end|><|end|>\n<|assistant|>"
    assert "<|end|>" in tokenizer.decode(delta, skip_special_tokens=True)  # the observation's text, not a marker


def test_an_answer_cut_by_the_token_limit_gets_its_end_of_turn_in_the_delta(tiny_agent):
    tokenizer = load_tokenizer(tiny_agent)
    transcript = Transcript(tokenizer, "count", [], "x")
    transcript.add_answer(tokenizer("```bash\nls\n```\nand th", add_special_tokens=False)["input_ids"])
    delta = transcript.add_observation(Action(kind="shell", content="ls"), "ok")
    assert delta[0] == transcript.stop_id and tokenizer.decode(delta).startswith("<|end|>\n<|user|>ok")
